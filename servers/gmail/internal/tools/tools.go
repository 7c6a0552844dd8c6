// Package tools defines the gmail server's tools, one file per family:
// sending (send_email, send_template_email, create_draft), reading
// (get_email, get_thread_history, search_emails, get_attachment) and the
// template list. Each tool's definition sits beside its handler; handlers
// get the mailbox and the configuration explicitly through Deps.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/mailbox"
	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/templates"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Defaults of Deps' limits.
const (
	// DefaultMaxAttachmentBytes is Gmail's limit on a message's attachments.
	DefaultMaxAttachmentBytes = 25 << 20
	// DefaultInlineAttachmentMax caps get_attachment's base64 answer.
	DefaultInlineAttachmentMax = 1 << 20
	// MaxBodyChars caps a message body an agent may send.
	MaxBodyChars = 1_000_000
	// MaxRecipients caps to + cc + bcc.
	MaxRecipients = 100
)

// DefaultBlockedExtensions are the file types Gmail itself refuses to
// send (executables and scripts); an attachment with one is refused before
// anything is sent.
var DefaultBlockedExtensions = []string{"ade", "adp", "apk", "appx", "appxbundle", "bat", "cab", "chm", "cmd", "com", "cpl",
	"dll", "dmg", "ex", "ex_", "exe", "hta", "ins", "isp", "iso", "jar", "js", "jse", "lib", "lnk", "mde", "msc", "msi", "msix",
	"msixbundle", "msp", "mst", "nsh", "pif", "ps1", "scr", "sct", "shb", "sys", "vb", "vbe", "vbs", "vxd", "wsc", "wsf", "wsh"}

// Deps is what the gmail tools need.
type Deps struct {
	Mailbox   mailbox.Backend
	Templates *templates.Set
	// FromName is the display name of the sender.
	FromName string
	// OutboxDir is where attachments given by path are read from.
	OutboxDir string
	// AttachmentsDir is where get_attachment saves files.
	AttachmentsDir string
	// AllowRecipients, when not empty, is the only addresses (a@b.com)
	// and domains (b.com, or @b.com) mail may go to.
	AllowRecipients []string
	// BlockedExtensions are refused attachment file types.
	BlockedExtensions []string
	// MaxAttachmentBytes caps a message's attachments, together.
	MaxAttachmentBytes int64
	// InlineAttachmentMax caps get_attachment's base64 answer.
	InlineAttachmentMax int
	// ConfirmSend: ask the person (elicitation) before sending.
	ConfirmSend bool
	// OpenWorld: the mailbox is Gmail, not local files.
	OpenWorld bool
}

// Names of every tool, for the ACL and tests.
var Names = []string{"send_email", "send_template_email", "create_draft", "get_email", "get_thread_history", "search_emails",
	"get_attachment", "list_templates"}

// All returns every tool.
func All(d Deps) []kit.Tool {
	if d.MaxAttachmentBytes <= 0 {
		d.MaxAttachmentBytes = DefaultMaxAttachmentBytes
	}
	if d.InlineAttachmentMax <= 0 {
		d.InlineAttachmentMax = DefaultInlineAttachmentMax
	}
	out := SendTools(d)
	out = append(out, ReadTools(d)...)
	out = append(out, TemplateTools(d)...)
	return out
}

// source names the mailbox content comes from, for the untrusted fence.
func source(d Deps, what string) string {
	return what + " from " + d.Mailbox.Describe()
}

// withProperty replaces one property of an object schema.
func withProperty(schema json.RawMessage, name string, prop map[string]any) json.RawMessage {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		panic(err)
	}
	props, ok := s["properties"].(map[string]any)
	if !ok || props[name] == nil {
		panic(fmt.Sprintf("tools: schema has no property %s", name))
	}
	props[name] = prop
	out, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return out
}

// findMessage turns what an agent holds of a message — the mailbox's id,
// or the RFC 5322 Message-ID a send or get_email returned, with or without
// its angle brackets — into the message's id and thread. A Message-ID is
// looked up with the search rfc822msgid:, which both mailboxes answer.
func findMessage(ctx context.Context, d Deps, id string) (msgID, threadID string, err error) {
	id = strings.TrimSpace(id)
	if !strings.Contains(id, "@") {
		return id, "", nil
	}
	bare := strings.TrimSuffix(strings.TrimPrefix(id, "<"), ">")
	q := "rfc822msgid:" + bare
	if strings.ContainsAny(bare, " \"(){}|") {
		if strings.Contains(bare, `"`) {
			return "", "", mcperr.New(mcperr.NotFound, "no message with the Message-ID %s in the mailbox", id)
		}
		q = `rfc822msgid:"` + bare + `"`
	}
	page, err := d.Mailbox.Search(ctx, q, 10, "")
	if err != nil {
		return "", "", err
	}
	// A draft shares the Message-ID of the mail it becomes; the mail is
	// the one meant.
	for _, m := range page.Messages {
		if !slices.Contains(m.Labels, "DRAFT") {
			return m.ID, m.ThreadID, nil
		}
	}
	if len(page.Messages) > 0 {
		return page.Messages[0].ID, page.Messages[0].ThreadID, nil
	}
	return "", "", mcperr.New(mcperr.NotFound, "no message with the Message-ID <%s> in the mailbox", bare)
}
