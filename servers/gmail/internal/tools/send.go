package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/mailbox"
	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/mailmsg"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/schema"
)

// SendTools returns send_email, send_template_email and create_draft.
func SendTools(d Deps) []kit.Tool {
	return []kit.Tool{sendEmail(d), sendTemplateEmail(d), createDraft(d)}
}

// recipients is `to`: one address or a list.
type recipients []string

func (r *recipients) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*r = recipients{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*r = many
	return nil
}

// toSchema is an anyOf, not a type array: Gemini and OpenAI's strict mode
// refuse a property with several types.
var toSchema = map[string]any{
	"description": "recipient address, or a list of them (\"jane@example.com\" or \"Jane Doe <jane@example.com>\")",
	"anyOf": []any{
		map[string]any{"type": "string", "minLength": 3, "maxLength": 320},
		map[string]any{"type": "array", "items": map[string]any{"type": "string", "minLength": 3, "maxLength": 320},
			"minItems": 1, "maxItems": 50},
	},
}

type attachmentArg struct {
	Filename    string `json:"filename,omitempty" jsonschema:"file name shown to the recipient (default: the outbox file's name)" mcp:"maxLength=255"`
	Content     string `json:"content,omitempty" jsonschema:"the file, base64 encoded (or give path)"`
	ContentType string `json:"content_type,omitempty" jsonschema:"media type (default: from the file name's extension, else application/octet-stream)" mcp:"maxLength=200"`
	Path        string `json:"path,omitempty" jsonschema:"a file in the server's outbox directory, relative to it (instead of content)" mcp:"maxLength=1024"`
}

// common are the arguments every sending tool has.
type common struct {
	To               recipients      `json:"to"`
	Cc               []string        `json:"cc,omitempty" jsonschema:"copy recipients" mcp:"maxItems=50"`
	Bcc              []string        `json:"bcc,omitempty" jsonschema:"blind copy recipients" mcp:"maxItems=50"`
	Attachments      []attachmentArg `json:"attachments,omitempty" jsonschema:"files to attach: base64 content with a filename, or a path in the outbox directory" mcp:"maxItems=20"`
	ReplyTo          string          `json:"reply_to,omitempty" jsonschema:"address replies should go to (Reply-To); held to the recipient allowlist like to, cc and bcc" mcp:"maxLength=320"`
	ReplyToMessageID string          `json:"reply_to_message_id,omitempty" jsonschema:"the message this answers, by its id or its RFC Message-ID (as a send, get_email and search_emails give them): the mail joins its thread with In-Reply-To and References, and a subject of Re: and the thread's subject" mcp:"maxLength=200"`
}

type sendArgs struct {
	common
	Subject  string `json:"subject,omitempty" jsonschema:"subject line; required unless reply_to_message_id is given (a reply keeps the thread's subject)" mcp:"maxLength=998"`
	Body     string `json:"body" jsonschema:"the message: HTML or plain text, as body_type says" mcp:"minLength=1,maxLength={maxBody}"`
	BodyType string `json:"body_type,omitempty" jsonschema:"html (sent with a plain-text alternative made from it) or text" mcp:"enum=html|text,default=html"`
}

// Validate holds the rules between arguments, the same for send_email and
// create_draft.
func (a *sendArgs) Validate() error {
	if err := a.common.validate(); err != nil {
		return err
	}
	if strings.TrimSpace(a.Subject) == "" && strings.TrimSpace(a.ReplyToMessageID) == "" {
		return mcperr.Invalid("subject", a.Subject, "a subject line, or reply_to_message_id for a reply",
			"subject is required (unless reply_to_message_id is given)")
	}
	return nil
}

// validate holds the rules every sending tool shares: each attachment is
// content with a filename, or a path.
func (a *common) validate() error {
	for i, at := range a.Attachments {
		field := fieldAt("attachments", i)
		switch {
		case at.Content != "" && at.Path != "":
			return mcperr.Invalid(field, nil, "content or path, not both", "%s gives both content and path", field)
		case at.Content != "" && at.Filename == "":
			return mcperr.Invalid(field+".filename", nil, "a file name such as proposal.pdf", "%s.filename is required with content", field)
		case at.Content == "" && at.Path == "":
			return mcperr.Invalid(field, nil, "content (base64) with a filename, or a path in the outbox", "%s has neither content nor path", field)
		}
	}
	return nil
}

func fieldAt(name string, i int) string { return fmt.Sprintf("%s[%d]", name, i) }

// withTo gives a sending tool's to its anyOf schema: the argument type
// cannot state its items' limits in each branch.
func withTo(t kit.Tool) kit.Tool {
	if t.InputSchema != nil {
		t.InputSchema = withProperty(t.InputSchema, "to", toSchema)
	}
	return t
}

const sendReturns = "Returns status, id (the mailbox's message id), thread_id, message_id (the RFC 5322 Message-ID: <…>), sent_at, recipients {to, cc, bcc}, subject and attachments."

func sendEmail(d Deps) kit.Tool {
	return withTo(kit.NewTool(kit.Tool{
		Name:  "send_email",
		Title: "Send an email",
		Description: "Send an email now, with optional cc, bcc, Reply-To and attachments (base64 content, or files from the server's outbox directory). " +
			"body_type html (the default) also sends a plain-text alternative. To reply, give reply_to_message_id: the mail then joins that " +
			"conversation in Gmail and in every other mail client. A send is never repeated automatically: on an error that says the message may " +
			"have been sent, search for rfc822msgid:<message_id> before sending again. " + sendReturns,
		Vars:          schema.Vars{"maxBody": MaxBodyChars},
		Effect:        kit.Additive,
		OpenWorld:     d.OpenWorld,
		Timeout:       2 * time.Minute,
		MaxConcurrent: 4,
		AuditOmit:     []string{"body", "attachments"},
	}, composed(d, false)))
}

func createDraft(d Deps) kit.Tool {
	return withTo(kit.NewTool(kit.Tool{
		Name:  "create_draft",
		Title: "Create a draft",
		Description: "Save an email as a draft for a person to review and send; the same arguments as send_email (replies thread the same way). " +
			"Nothing is sent. Returns status \"draft\", draft_id, id, thread_id, message_id, recipients, subject and attachments.",
		Vars:      schema.Vars{"maxBody": MaxBodyChars},
		Effect:    kit.Additive,
		OpenWorld: d.OpenWorld,
		Timeout:   2 * time.Minute,
		AuditOmit: []string{"body", "attachments"},
	}, composed(d, true)))
}

// composed is the handler of send_email (draft false) and create_draft:
// the message as given, sent now or saved as a draft.
func composed(d Deps, draft bool) func(context.Context, *kit.Call, sendArgs) (*sentResult, error) {
	return func(ctx context.Context, c *kit.Call, a sendArgs) (*sentResult, error) {
		p, err := compose(ctx, d, a.common, a.Subject, a.Body, a.BodyType, "")
		if err != nil {
			return nil, err
		}
		return deliver(ctx, c, d, p, draft)
	}
}

// prepared is a message ready to go.
type prepared struct {
	raw      []byte
	msg      *mailmsg.Message
	threadID string
	preview  string
	notes    []string
}

// compose validates the arguments and builds the message. Nothing leaves
// the server here.
func compose(ctx context.Context, d Deps, a common, subject, body, bodyType, text string) (*prepared, error) {
	to, err := parseTo(a.To)
	if err != nil {
		return nil, err
	}
	cc, err := mailmsg.ParseAddresses("cc", a.Cc)
	if err != nil {
		return nil, err
	}
	bcc, err := mailmsg.ParseAddresses("bcc", a.Bcc)
	if err != nil {
		return nil, err
	}
	if n := len(to) + len(cc) + len(bcc); n > MaxRecipients {
		// Name the list that tipped it over: the last non-empty one.
		field := "to"
		for _, l := range []struct {
			name string
			n    int
		}{{"cc", len(cc)}, {"bcc", len(bcc)}} {
			if l.n > 0 {
				field = l.name
			}
		}
		return nil, mcperr.Invalid(field, n, fmt.Sprintf("at most %d recipients in to, cc and bcc together", MaxRecipients),
			"too many recipients: %d > %d in to, cc and bcc together (to %d, cc %d, bcc %d; the limit is reached in %s)", n, MaxRecipients, len(to), len(cc), len(bcc), field)
	}
	var replyTo []*mail.Address
	if a.ReplyTo != "" {
		rt, err := mailmsg.ParseAddress("reply_to", a.ReplyTo)
		if err != nil {
			return nil, err
		}
		replyTo = []*mail.Address{rt}
	}
	// Reply-To is held to the allowlist too: replies would go there, so it
	// is as much a destination of the conversation as a recipient.
	if err := checkAllowed(d.AllowRecipients, map[string][]*mail.Address{"to": to, "cc": cc, "bcc": bcc, "reply_to": replyTo}); err != nil {
		return nil, err
	}
	m := &mailmsg.Message{To: to, Cc: cc, Bcc: bcc, ReplyTo: replyTo}
	p := &prepared{msg: m}
	if a.ReplyToMessageID != "" {
		id, _, err := findMessage(ctx, d, a.ReplyToMessageID)
		var ref *mailbox.Ref
		if err == nil {
			ref, err = d.Mailbox.Ref(ctx, id)
		}
		if err != nil {
			var me *mcperr.Error
			if errors.As(err, &me) && me.Code == mcperr.NotFound {
				return nil, mcperr.Invalid("reply_to_message_id", a.ReplyToMessageID, "the id of a message in this mailbox",
					"there is no message %s to reply to", a.ReplyToMessageID)
			}
			return nil, err
		}
		want := mailmsg.ReplySubject(ref.Subject)
		switch {
		case subject == "":
			subject = want
		case mailmsg.BaseSubject(subject) == mailmsg.BaseSubject(ref.Subject):
			subject = want
		default:
			return nil, mcperr.Invalid("subject", subject, fmt.Sprintf("%q (or leave subject out)", want),
				"a reply keeps its thread's subject, or Gmail and other clients start a new conversation; leave subject out or use %q", want)
		}
		p.threadID = ref.ThreadID
		if ref.MessageID != "" {
			m.InReplyTo, m.References = mailmsg.ReplyThreading(ref.MessageID, ref.References, ref.InReplyTo)
		} else {
			p.notes = append(p.notes, "the message replied to has no Message-ID, so other mail clients may not thread this reply")
		}
	}
	if strings.TrimSpace(subject) == "" {
		// A template's subject can render empty; send_email's Validate
		// has already refused an empty one.
		return nil, mcperr.Invalid("subject", subject, "a subject line", "subject is required (unless reply_to_message_id is given)")
	}
	m.Subject = subject
	if len([]rune(body)) > MaxBodyChars {
		return nil, mcperr.Invalid("body", len([]rune(body)), fmt.Sprintf("at most %d characters", MaxBodyChars), "body too long: %d characters > %d", len([]rune(body)), MaxBodyChars)
	}
	if bodyType == "text" {
		m.Text = body
	} else {
		m.HTML, m.Text = body, text
	}
	if m.Attachments, err = loadAttachments(d, a.Attachments); err != nil {
		return nil, err
	}
	addr, err := d.Mailbox.Sender(ctx)
	if err != nil {
		return nil, err
	}
	m.From = &mail.Address{Name: d.FromName, Address: addr}
	if p.raw, err = mailmsg.Build(m); err != nil {
		return nil, err
	}
	preview := m.Text
	if preview == "" {
		preview = mailmsg.HTMLToText(m.HTML)
	}
	p.preview = mailmsg.Snippet(preview, 600)
	return p, nil
}

func parseTo(to recipients) ([]*mail.Address, error) {
	if len(to) == 0 {
		return nil, mcperr.Invalid("to", nil, "an address or a list of addresses", "to is required")
	}
	if len(to) == 1 {
		// A single string may hold a comma-separated list.
		if list, err := mail.ParseAddressList(to[0]); err == nil && len(list) > 1 {
			var parts []string
			for _, a := range list {
				parts = append(parts, a.String())
			}
			return mailmsg.ParseAddresses("to", parts)
		}
		a, err := mailmsg.ParseAddress("to", to[0])
		if err != nil {
			return nil, err
		}
		return []*mail.Address{a}, nil
	}
	return mailmsg.ParseAddresses("to", to)
}

// checkAllowed refuses a recipient outside the allowlist, naming it and
// the setting that widens it.
func checkAllowed(allow []string, lists map[string][]*mail.Address) error {
	if len(allow) == 0 {
		return nil
	}
	for _, field := range []string{"to", "cc", "bcc", "reply_to"} {
		for i, a := range lists[field] {
			addr := strings.ToLower(a.Address)
			domain := mailmsg.DomainOf(addr)
			ok := slices.ContainsFunc(allow, func(e string) bool {
				e = strings.ToLower(strings.TrimSpace(e))
				e = strings.TrimPrefix(e, "@")
				return e == addr || e == domain || strings.HasSuffix(domain, "."+e) && !strings.Contains(e, "@")
			})
			if !ok {
				name := field
				if len(lists[field]) > 1 || field == "cc" || field == "bcc" {
					name = fmt.Sprintf("%s[%d]", field, i)
				}
				e := mcperr.New(mcperr.PermissionDeny,
					"%s %s is not an allowed recipient of this server; an operator can add the address or its domain to GMAIL_ALLOWED_RECIPIENTS (--allowed-recipients)",
					name, a.Address)
				e.Field, e.Value, e.Expected = name, a.Address, "an address or domain in GMAIL_ALLOWED_RECIPIENTS"
				return e
			}
		}
	}
	return nil
}

func loadAttachments(d Deps, args []attachmentArg) ([]mailmsg.Attachment, error) {
	var out []mailmsg.Attachment
	var total int64
	for i, a := range args {
		field := fieldAt("attachments", i)
		var data []byte
		name := a.Filename
		// Validate saw to it that each is content with a filename, or a path.
		switch {
		case a.Path != "":
			b, base, err := readOutbox(d, field+".path", a.Path, d.MaxAttachmentBytes-total)
			if err != nil {
				return nil, err
			}
			data = b
			if name == "" {
				name = base
			}
		default:
			if n := int64(len(a.Content)) * 3 / 4; n > d.MaxAttachmentBytes-total {
				return nil, tooLarge(field, total+n, d.MaxAttachmentBytes)
			}
			b, err := decodeBase64(a.Content)
			if err != nil {
				return nil, mcperr.Invalid(field+".content", nil, "base64 data", "%s.content is not base64", field)
			}
			data = b
		}
		// Windows drops trailing dots and spaces from a file name, so
		// "run.exe." and "run.exe " open as run.exe: the type is judged on
		// the name as the recipient's system will save it, and sent so.
		if trimmed := strings.TrimRight(name, ". \t"); trimmed != "" {
			name = trimmed
		}
		ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(name), "."))
		if slices.ContainsFunc(d.BlockedExtensions, func(b string) bool { return strings.EqualFold(strings.TrimPrefix(strings.TrimSpace(b), "."), ext) }) {
			return nil, mcperr.Invalid(field+".filename", name, "a file type other than "+strings.Join(d.BlockedExtensions, ", "),
				"%s: .%s files are refused (executables and scripts; GMAIL_BLOCKED_ATTACHMENT_TYPES sets the list)", field, ext)
		}
		total += int64(len(data))
		if total > d.MaxAttachmentBytes {
			return nil, tooLarge(field, total, d.MaxAttachmentBytes)
		}
		ct := a.ContentType
		if ct == "" {
			ct = mime.TypeByExtension(filepath.Ext(name))
			if ct == "" {
				ct = "application/octet-stream"
			}
		}
		out = append(out, mailmsg.Attachment{Filename: name, ContentType: ct, Data: data})
	}
	return out, nil
}

// tooLarge says the attachments up to field come to size bytes, over
// limit (size is at least that much when the file was not read whole).
func tooLarge(field string, size, limit int64) error {
	return mcperr.Invalid(field, size, fmt.Sprintf("attachments of at most %d bytes in all", limit),
		"attachments too large: %d bytes > %d in all, reached at %s (Gmail's limit is 25 MB); share large files as links instead", size, limit, field)
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	}
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}

// readOutbox reads a regular file under the outbox directory; the path
// cannot leave it (os.Root refuses "..", absolute paths and symlinks out).
func readOutbox(d Deps, field, path string, limit int64) ([]byte, string, error) {
	if d.OutboxDir == "" {
		return nil, "", mcperr.Invalid(field, path, "content instead of path", "this server has no outbox directory")
	}
	root, err := os.OpenRoot(d.OutboxDir)
	if err != nil {
		return nil, "", mcperr.New(mcperr.Internal, "the outbox directory cannot be opened").WithCause(err)
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(path))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", mcperr.Invalid(field, path, "a file in the outbox directory "+d.OutboxDir, "%s: no such file in the outbox", field)
		}
		return nil, "", mcperr.Invalid(field, path, "a path inside the outbox directory "+d.OutboxDir, "%s cannot be opened (%v)", field, errors.Unwrap(err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return nil, "", mcperr.Invalid(field, path, "a regular file", "%s is not a regular file", field)
	}
	used := d.MaxAttachmentBytes - limit
	if info.Size() > limit {
		return nil, "", tooLarge(field, used+info.Size(), d.MaxAttachmentBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		return nil, "", tooLarge(field, used+int64(len(b)), d.MaxAttachmentBytes)
	}
	if err != nil {
		return nil, "", mcperr.Invalid(field, path, "a readable file", "%s cannot be read (%v)", field, err)
	}
	return b, filepath.Base(path), nil
}

type sentResult struct {
	Status      string           `json:"status"`
	ID          string           `json:"id"`
	DraftID     string           `json:"draft_id,omitempty"`
	ThreadID    string           `json:"thread_id"`
	MessageID   string           `json:"message_id"`
	InReplyTo   string           `json:"in_reply_to,omitempty"`
	SentAt      string           `json:"sent_at,omitempty"`
	Recipients  recipientsResult `json:"recipients"`
	Subject     string           `json:"subject"`
	Attachments []attachmentInfo `json:"attachments"`
	Template    string           `json:"template,omitempty"`
	Notes       []string         `json:"notes,omitempty"`
}

type recipientsResult struct {
	To  []string `json:"to"`
	Cc  []string `json:"cc"`
	Bcc []string `json:"bcc"`
}

type attachmentInfo struct {
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int    `json:"size"`
}

func addrs(as []*mail.Address) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.Address)
	}
	return out
}

// deliver asks for confirmation when configured (before anything is sent:
// on protocol 2026-07-28 the handler runs again with the answer), then
// sends or stores the draft.
func deliver(ctx context.Context, c *kit.Call, d Deps, p *prepared, draft bool) (*sentResult, error) {
	m := p.msg
	if d.ConfirmSend && !draft {
		if !c.Can("elicitation/create") {
			return nil, mcperr.New(mcperr.PermissionDeny,
				"this server asks a person to confirm every email before it is sent, and this MCP client cannot ask (it does not support elicitation); "+
					"use a client that does, or have the operator allow unattended sending by unsetting GMAIL_CONFIRM_SEND (--confirm-send=false); nothing was sent")
		}
		q := fmt.Sprintf("Send this email?\n\nTo: %s", strings.Join(addrs(m.To), ", "))
		if len(m.Cc) > 0 {
			q += "\nCc: " + strings.Join(addrs(m.Cc), ", ")
		}
		if len(m.Bcc) > 0 {
			q += "\nBcc: " + strings.Join(addrs(m.Bcc), ", ")
		}
		q += "\nSubject: " + m.Subject
		if len(m.Attachments) > 0 {
			var names []string
			for _, a := range m.Attachments {
				names = append(names, a.Filename)
			}
			q += "\nAttachments: " + strings.Join(names, ", ")
		}
		q += "\n\n" + p.preview
		res, err := c.Elicit(ctx, q, nil)
		if err != nil {
			return nil, err
		}
		if res.Action != "accept" {
			return nil, mcperr.New(mcperr.PermissionDeny, "the person did not confirm sending (%s); nothing was sent", res.Action)
		}
	}
	var (
		s   *mailbox.Sent
		err error
	)
	if draft {
		s, err = d.Mailbox.CreateDraft(ctx, p.raw, p.threadID)
	} else {
		s, err = d.Mailbox.Send(ctx, p.raw, p.threadID)
	}
	if err != nil {
		return nil, err
	}
	out := &sentResult{Status: "sent", ID: s.ID, DraftID: s.DraftID, ThreadID: s.ThreadID, MessageID: s.MessageID, InReplyTo: m.InReplyTo,
		Recipients: recipientsResult{To: addrs(m.To), Cc: addrs(m.Cc), Bcc: addrs(m.Bcc)}, Subject: m.Subject,
		Attachments: []attachmentInfo{}, Notes: append(p.notes, s.Notes...)}
	if draft {
		out.Status = "draft"
	} else {
		out.SentAt = m.Date.UTC().Format(time.RFC3339)
	}
	for _, a := range m.Attachments {
		out.Attachments = append(out.Attachments, attachmentInfo{Filename: a.Filename, ContentType: a.ContentType, Size: len(a.Data)})
	}
	if p.threadID != "" && s.ThreadID != p.threadID {
		out.Notes = append(out.Notes, "the mailbox put the reply in a new thread instead of "+p.threadID)
	}
	if c != nil {
		c.Log.Info().Str("id", s.ID).Str("thread", s.ThreadID).Int("recipients", len(m.To)+len(m.Cc)+len(m.Bcc)).Bool("draft", draft).Msg("mail accepted")
	}
	return out, nil
}
