package mailbox

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/oauth2"
	gmail "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/mailmsg"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
	"github.com/mcp-fleet/mcp-fleet/shared/upstream"
)

// DefaultEndpoint is the Gmail API's base URL.
const DefaultEndpoint = "https://gmail.googleapis.com/"

// mediaThreshold: a message larger than this is sent as a media upload
// (message/rfc822) rather than base64url inside a JSON body.
const mediaThreshold = 4 << 20

// searchFetchers bounds the metadata requests a search makes at once.
const searchFetchers = 4

// GmailConfig configures the Gmail API backend.
type GmailConfig struct {
	// Endpoint replaces DefaultEndpoint (a test fake).
	Endpoint string
	// User is the mailbox: "me" (the signed-in person) or an address (the
	// delegated user of a service account).
	User string
	// TokenSource gives the access tokens; it is asked for every attempt.
	TokenSource oauth2.TokenSource
	// AuthAdvice says what to do when credentials fail ("run gmail-mcp auth").
	AuthAdvice string
	Version    string
	// Timeout bounds one API request, retries included (default 30s).
	Timeout time.Duration
	// Retry replaces the upstream client's retry policy (tests).
	Retry    retry.Policy
	Logger   *zerolog.Logger
	Redactor *logging.Redactor
}

// Gmail is a mailbox reached through the Gmail API. The client library
// neither retries nor adds credentials: every request goes through the
// fleet's upstream client, which adds the token, retries reads on 429, 5xx
// and Google's 403 rate limits (honouring Retry-After), never resends a send
// that may have reached Google, and keeps a circuit breaker.
type Gmail struct {
	user   string
	advice string
	up     *upstream.Client
	svc    *gmail.Service

	mu      sync.Mutex
	address string
}

// NewGmail builds the client; it sends no request.
func NewGmail(ctx context.Context, cfg GmailConfig) (*Gmail, error) {
	if cfg.TokenSource == nil {
		return nil, errors.New("mailbox: no token source for the Gmail API")
	}
	endpoint := cfg.Endpoint
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	if !strings.HasSuffix(endpoint, "/") {
		endpoint += "/"
	}
	if cfg.User == "" {
		cfg.User = "me"
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.AuthAdvice == "" {
		cfg.AuthAdvice = "check the configured Google credentials"
	}
	up, err := upstream.New(upstream.Config{Name: "gmail", Server: "gmail-mcp", Version: cfg.Version, Timeout: cfg.Timeout,
		Retry: cfg.Retry, RetryableStatus: retry.GoogleRateLimited, Logger: cfg.Logger, Redactor: cfg.Redactor,
		Auth: googleauth.AuthHook(cfg.TokenSource, cfg.AuthAdvice)})
	if err != nil {
		return nil, err
	}
	svc, err := gmail.NewService(ctx, option.WithHTTPClient(up.HTTPClient()), option.WithEndpoint(endpoint))
	if err != nil {
		return nil, fmt.Errorf("mailbox: the Gmail API client: %w", err)
	}
	g := &Gmail{user: cfg.User, advice: cfg.AuthAdvice, up: up, svc: svc}
	if cfg.User != "me" {
		g.address = cfg.User
	}
	return g, nil
}

// Kind implements Backend.
func (g *Gmail) Kind() string { return "gmail" }

// Describe implements Backend.
func (g *Gmail) Describe() string {
	if a := g.Address(); a != "" {
		return "Gmail mailbox " + a
	}
	return "Gmail mailbox of the signed-in account"
}

// Address implements Backend: the address the profile reported, or the
// configured user.
func (g *Gmail) Address() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.address
}

// Sender implements Backend: the profile's address, read on first use if
// the start-up check could not read it.
func (g *Gmail) Sender(ctx context.Context) (string, error) {
	if a := g.Address(); a != "" {
		return a, nil
	}
	return g.Profile(ctx)
}

// Upstream returns the HTTP client's upstream, for health checks.
func (g *Gmail) Upstream() *upstream.Client { return g.up }

// Close implements Backend.
func (g *Gmail) Close() error { g.up.CloseIdleConnections(); return nil }

// Profile asks Gmail whose mailbox the credentials open and returns its
// address; with a configured user it must be that user (a service account
// without domain-wide delegation for it, or a person signed in with another
// account, would otherwise act on the wrong mailbox).
func (g *Gmail) Profile(ctx context.Context) (string, error) {
	p, err := g.svc.Users.GetProfile(g.user).Context(ctx).Do()
	if err != nil {
		return "", g.fail(err, "read the mailbox profile", http.MethodGet, "")
	}
	if g.user != "me" && !strings.EqualFold(p.EmailAddress, g.user) {
		return "", mcperr.New(mcperr.PermissionDeny, "the credentials open the mailbox of %s, not the configured GMAIL_USER %s", p.EmailAddress, g.user)
	}
	g.mu.Lock()
	g.address = p.EmailAddress
	g.mu.Unlock()
	return p.EmailAddress, nil
}

func encodeRaw(raw []byte) string { return base64.URLEncoding.EncodeToString(raw) }

// Send implements Backend. The send is one POST, never repeated unless it
// provably did not leave this process.
func (g *Gmail) Send(ctx context.Context, raw []byte, threadID string) (*Sent, error) {
	ours := ourMessageID(raw)
	call := g.svc.Users.Messages.Send(g.user, &gmail.Message{ThreadId: threadID}).Context(ctx)
	if len(raw) > mediaThreshold {
		call = call.Media(bytes.NewReader(raw), googleapi.ContentType("message/rfc822"), googleapi.ChunkSize(0))
	} else {
		call = g.svc.Users.Messages.Send(g.user, &gmail.Message{Raw: encodeRaw(raw), ThreadId: threadID}).Context(ctx)
	}
	m, err := call.Do()
	if err != nil {
		return nil, g.fail(err, "send the message", http.MethodPost, ours)
	}
	s := &Sent{ID: m.Id, ThreadID: m.ThreadId, Labels: m.LabelIds, MessageID: ours}
	g.confirmMessageID(ctx, s)
	return s, nil
}

// CreateDraft implements Backend.
func (g *Gmail) CreateDraft(ctx context.Context, raw []byte, threadID string) (*Sent, error) {
	call := g.svc.Users.Drafts.Create(g.user, &gmail.Draft{Message: &gmail.Message{Raw: encodeRaw(raw), ThreadId: threadID}}).Context(ctx)
	if len(raw) > mediaThreshold {
		call = g.svc.Users.Drafts.Create(g.user, &gmail.Draft{Message: &gmail.Message{ThreadId: threadID}}).Context(ctx).
			Media(bytes.NewReader(raw), googleapi.ContentType("message/rfc822"), googleapi.ChunkSize(0))
	}
	d, err := call.Do()
	if err != nil {
		return nil, g.fail(err, "create the draft", http.MethodPost, "")
	}
	s := &Sent{DraftID: d.Id, MessageID: ourMessageID(raw)}
	if d.Message != nil {
		s.ID, s.ThreadID, s.Labels = d.Message.Id, d.Message.ThreadId, d.Message.LabelIds
		g.confirmMessageID(ctx, s)
	}
	return s, nil
}

func ourMessageID(raw []byte) string {
	end := bytes.Index(raw, []byte("\r\n\r\n"))
	if end < 0 {
		end = len(raw)
	}
	for _, line := range strings.Split(string(raw[:end]), "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Message-ID") {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// confirmMessageID reads back the Message-ID Gmail stored: Gmail may
// replace the one a message was sent with, and a reply must cite the one
// recipients got.
func (g *Gmail) confirmMessageID(ctx context.Context, s *Sent) {
	m, err := g.svc.Users.Messages.Get(g.user, s.ID).Format("metadata").MetadataHeaders("Message-ID").Context(ctx).Do()
	if err != nil {
		s.Notes = append(s.Notes, "Gmail accepted the message but its stored Message-ID could not be read back; message_id is the one it was sent with")
		return
	}
	if m.Payload != nil {
		for _, h := range m.Payload.Headers {
			if strings.EqualFold(h.Name, "Message-ID") && mailmsg.ValidMessageID(strings.TrimSpace(h.Value)) {
				s.MessageID = strings.TrimSpace(h.Value)
			}
		}
	}
}

// Ref implements Backend.
func (g *Gmail) Ref(ctx context.Context, id string) (*Ref, error) {
	m, err := g.svc.Users.Messages.Get(g.user, id).Format("metadata").
		MetadataHeaders("Message-ID", "References", "In-Reply-To", "Subject", "From", "Reply-To").Context(ctx).Do()
	if err != nil {
		return nil, g.fail(err, "read message "+id, http.MethodGet, "")
	}
	r := &Ref{ID: m.Id, ThreadID: m.ThreadId}
	if m.Payload != nil {
		for _, h := range m.Payload.Headers {
			switch strings.ToLower(h.Name) {
			case "message-id":
				if ids := mailmsg.MessageIDs(h.Value); len(ids) > 0 {
					r.MessageID = ids[0]
				}
			case "references":
				r.References = h.Value
			case "in-reply-to":
				r.InReplyTo = h.Value
			case "subject":
				r.Subject = mailmsg.DecodeHeader(h.Value)
			case "from":
				r.From = mailmsg.DecodeHeader(h.Value)
			case "reply-to":
				r.ReplyTo = mailmsg.DecodeHeader(h.Value)
			}
		}
	}
	return r, nil
}

// Get implements Backend.
func (g *Gmail) Get(ctx context.Context, id string) (*Message, error) {
	m, err := g.svc.Users.Messages.Get(g.user, id).Format("full").Context(ctx).Do()
	if err != nil {
		return nil, g.fail(err, "read message "+id, http.MethodGet, "")
	}
	return fromAPI(m), nil
}

// Thread implements Backend.
func (g *Gmail) Thread(ctx context.Context, threadID string) ([]*Message, error) {
	t, err := g.svc.Users.Threads.Get(g.user, threadID).Format("full").Context(ctx).Do()
	if err != nil {
		return nil, g.fail(err, "read thread "+threadID, http.MethodGet, "")
	}
	out := make([]*Message, 0, len(t.Messages))
	for _, m := range t.Messages {
		out = append(out, fromAPI(m))
	}
	return out, nil
}

// Search implements Backend: one list request, then the headers of each
// message found (a few at a time). Any failure fails the whole search: a
// page with holes would pass for a complete one.
func (g *Gmail) Search(ctx context.Context, q string, max int, pageToken string) (*Page, error) {
	call := g.svc.Users.Messages.List(g.user).Q(q).MaxResults(int64(max)).Context(ctx)
	if pageToken != "" {
		call = call.PageToken(pageToken)
	}
	list, err := call.Do()
	if err != nil {
		return nil, g.fail(err, "search the mailbox", http.MethodGet, "")
	}
	page := &Page{Messages: make([]Summary, len(list.Messages)), NextPageToken: list.NextPageToken, ResultSizeEstimate: int(list.ResultSizeEstimate)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		slots = make(chan struct{}, searchFetchers)
	)
	for i, ref := range list.Messages {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			m, err := g.svc.Users.Messages.Get(g.user, ref.Id).Format("metadata").
				MetadataHeaders("From", "To", "Subject", "Date", "Message-ID").Context(ctx).Do()
			if err != nil {
				mu.Lock()
				if first == nil {
					first = g.fail(err, "read the headers of message "+ref.Id, http.MethodGet, "")
					cancel()
				}
				mu.Unlock()
				return
			}
			page.Messages[i] = summaryFromAPI(m)
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return page, nil
}

// Attachment implements Backend. The id is Gmail's attachment id, or
// "part:<part id>" for a small part Gmail returns inline.
func (g *Gmail) Attachment(ctx context.Context, messageID, attachmentID string) (*AttachmentData, error) {
	m, err := g.svc.Users.Messages.Get(g.user, messageID).Format("full").Context(ctx).Do()
	if err != nil {
		return nil, g.fail(err, "read message "+messageID, http.MethodGet, "")
	}
	var found *gmail.MessagePart
	walk(m.Payload, func(p *gmail.MessagePart) {
		if p.Body != nil && (p.Body.AttachmentId == attachmentID || "part:"+p.PartId == attachmentID) {
			found = p
		}
	})
	if found == nil {
		return nil, notFound("attachment", attachmentID)
	}
	out := &AttachmentData{Filename: found.Filename, ContentType: found.MimeType}
	data := found.Body.Data
	if found.Body.AttachmentId == attachmentID {
		a, err := g.svc.Users.Messages.Attachments.Get(g.user, messageID, attachmentID).Context(ctx).Do()
		if err != nil {
			return nil, g.fail(err, "download the attachment", http.MethodGet, "")
		}
		data = a.Data
	}
	if out.Data, err = decodeB64URL(data); err != nil {
		return nil, mcperr.New(mcperr.Upstream, "Gmail sent attachment data that does not decode").WithRetryable(false)
	}
	return out, nil
}

func decodeB64URL(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	return base64.RawURLEncoding.DecodeString(s)
}

func walk(p *gmail.MessagePart, fn func(*gmail.MessagePart)) {
	if p == nil {
		return
	}
	fn(p)
	for _, c := range p.Parts {
		walk(c, fn)
	}
}

func header(hs []*gmail.MessagePartHeader, name string) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

func addresses(v string) []string {
	if v == "" {
		return nil
	}
	p, err := mailmsg.Parse([]byte("To: "+v+"\r\n\r\n"), false)
	if err != nil || len(p.To) == 0 {
		return []string{mailmsg.DecodeHeader(v)}
	}
	return p.To
}

func summaryFromAPI(m *gmail.Message) Summary {
	s := Summary{ID: m.Id, ThreadID: m.ThreadId, Snippet: m.Snippet, Labels: m.LabelIds, Date: time.UnixMilli(m.InternalDate).UTC()}
	if m.Payload != nil {
		hs := m.Payload.Headers
		if from := addresses(header(hs, "From")); len(from) > 0 {
			s.From = from[0]
		}
		s.To = addresses(header(hs, "To"))
		s.Subject = mailmsg.DecodeHeader(header(hs, "Subject"))
		if ids := mailmsg.MessageIDs(header(hs, "Message-ID")); len(ids) > 0 {
			s.MessageID = ids[0]
		}
		s.HasAttachments = strings.EqualFold(m.Payload.MimeType, "multipart/mixed")
	}
	return s
}

// fromAPI converts a message in Gmail's "full" format.
func fromAPI(m *gmail.Message) *Message {
	out := &Message{ID: m.Id, ThreadID: m.ThreadId, Snippet: m.Snippet, Labels: m.LabelIds, Date: time.UnixMilli(m.InternalDate).UTC(),
		Attachments: []AttachmentMeta{}}
	if m.Payload == nil {
		return out
	}
	hs := m.Payload.Headers
	if ids := mailmsg.MessageIDs(header(hs, "Message-ID")); len(ids) > 0 {
		out.MessageID = ids[0]
	}
	if ids := mailmsg.MessageIDs(header(hs, "In-Reply-To")); len(ids) > 0 {
		out.InReplyTo = ids[0]
	}
	out.References = mailmsg.MessageIDs(header(hs, "References"))
	if from := addresses(header(hs, "From")); len(from) > 0 {
		out.From = from[0]
	}
	out.To, out.Cc, out.Bcc, out.ReplyTo = addresses(header(hs, "To")), addresses(header(hs, "Cc")), addresses(header(hs, "Bcc")), addresses(header(hs, "Reply-To"))
	out.Subject = mailmsg.DecodeHeader(header(hs, "Subject"))
	walk(m.Payload, func(p *gmail.MessagePart) {
		if strings.HasPrefix(p.MimeType, "multipart/") || p.Body == nil {
			return
		}
		disp, _, _ := mime.ParseMediaType(header(p.Headers, "Content-Disposition"))
		body := p.Filename == "" && !strings.EqualFold(disp, "attachment") && p.Body.AttachmentId == ""
		if body && (p.MimeType == "text/plain" && out.Text == "" || p.MimeType == "text/html" && out.HTML == "") {
			data, err := decodeB64URL(p.Body.Data)
			if err == nil {
				_, params, _ := mime.ParseMediaType(header(p.Headers, "Content-Type"))
				text := mailmsg.DecodeText(params["charset"], data)
				if p.MimeType == "text/plain" {
					out.Text = text
				} else {
					out.HTML = text
				}
				return
			}
		}
		id := p.Body.AttachmentId
		if id == "" {
			id = "part:" + p.PartId
		}
		out.Attachments = append(out.Attachments, AttachmentMeta{AttachmentID: id, Filename: p.Filename, ContentType: p.MimeType, Size: int(p.Body.Size)})
	})
	return out
}

// fail maps a Gmail API failure. messageID, for a send, is the message's
// Message-ID: when Google may have sent it despite the error, the message
// says how to check before sending again. method is the request's: a POST
// (a send, a new draft) that failed while Google handled it is not
// retryable, since repeating it may send the mail twice.
func (g *Gmail) fail(err error, what, method, messageID string) error {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		e := upstream.FromError("gmail", err, upstream.Detail(what), upstream.Method(method))
		if messageID != "" && errors.Is(e, upstream.ErrOutcomeUnknown) {
			e.Message += fmt.Sprintf("; search for rfc822msgid:%s before sending again", messageID)
		}
		return e
	}
	reasons := map[string]bool{}
	for _, item := range ge.Errors {
		reasons[item.Reason] = true
	}
	rate := reasons["rateLimitExceeded"] || reasons["userRateLimitExceeded"]
	msg := cleanMessage(ge.Message)
	switch {
	case ge.Code == http.StatusNotFound:
		return mcperr.New(mcperr.NotFound, "Gmail could not %s: not found (check the id)", what).WithCause(err)
	case ge.Code == http.StatusUnauthorized:
		return mcperr.New(mcperr.Authentication, "Gmail rejected the credentials while trying to %s; %s", what, g.advice).WithCause(err)
	case ge.Code == http.StatusForbidden && (reasons["insufficientPermissions"] || strings.Contains(msg, "insufficient authentication scopes")):
		return mcperr.New(mcperr.PermissionDeny, "the Google credentials do not allow this server to %s (a scope is missing); %s with the tools you use enabled",
			what, g.advice).WithCause(err)
	case ge.Code == http.StatusForbidden && !rate:
		return mcperr.New(mcperr.PermissionDeny, "Gmail refused to %s: %s", what, msg).WithCause(err)
	case ge.Code == http.StatusBadRequest:
		return mcperr.New(mcperr.Validation, "Gmail refused to %s: %s", what, msg).WithCause(err)
	}
	hints := []upstream.Hint{upstream.Method(method)}
	if rate {
		hints = append(hints, upstream.RateLimited())
	}
	hints = append(hints, upstream.Detail(what))
	e := upstream.FromStatus("gmail", ge.Code, ge.Header, hints...)
	if errors.Is(e, upstream.ErrOutcomeUnknown) {
		if messageID != "" {
			e.Message += fmt.Sprintf("; the message may or may not have been sent: search for rfc822msgid:%s before sending again", messageID)
		}
		return e.WithCause(fmt.Errorf("%w: %w", upstream.ErrOutcomeUnknown, err))
	}
	return e.WithCause(err)
}

func cleanMessage(m string) string {
	m = strings.Join(strings.Fields(m), " ")
	if len(m) > 200 {
		m = m[:200] + "…"
	}
	if m == "" {
		m = "no reason given"
	}
	return m
}
