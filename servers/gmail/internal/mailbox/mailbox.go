// Package mailbox is where the gmail server's mail lives: the Gmail API
// (a person's mailbox through OAuth, or a Workspace user's through a
// service account with domain-wide delegation), or a local mailbox of .eml
// files in the data directory when nothing is configured. Both sit behind
// Backend and speak in the same types, so the tools do not know which one
// they use.
package mailbox

import (
	"context"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Backend is a mailbox.
type Backend interface {
	// Kind is "gmail" or "local".
	Kind() string
	// Describe names the mailbox for logs and results.
	Describe() string
	// Address is the mailbox's own address, the sender of what it sends
	// ("" while it is not known).
	Address() string
	// Sender returns the address, asking the mailbox for it if need be.
	Sender(ctx context.Context) (string, error)
	// Send sends an RFC 5322 message; threadID (may be empty) is the
	// conversation it continues.
	Send(ctx context.Context, raw []byte, threadID string) (*Sent, error)
	// CreateDraft stores the message as a draft.
	CreateDraft(ctx context.Context, raw []byte, threadID string) (*Sent, error)
	// Ref returns what a reply needs of message id.
	Ref(ctx context.Context, id string) (*Ref, error)
	// Get returns a whole message.
	Get(ctx context.Context, id string) (*Message, error)
	// Thread returns a conversation's messages, oldest first.
	Thread(ctx context.Context, threadID string) ([]*Message, error)
	// Search lists messages matching a Gmail-syntax query, newest first.
	Search(ctx context.Context, q string, max int, pageToken string) (*Page, error)
	// Attachment returns one attachment's content.
	Attachment(ctx context.Context, messageID, attachmentID string) (*AttachmentData, error)
	Close() error
}

// Sent is a message the mailbox accepted.
type Sent struct {
	ID       string
	ThreadID string
	// MessageID is the RFC 5322 Message-ID the message carries.
	MessageID string
	DraftID   string
	Labels    []string
	// Notes say what the caller should know (an unconfirmed Message-ID).
	Notes []string
}

// Ref is what a reply needs of its parent.
type Ref struct {
	ID         string
	ThreadID   string
	MessageID  string
	References string
	InReplyTo  string
	Subject    string
	From       string
	ReplyTo    string
}

// Message is a whole message as read.
type Message struct {
	ID         string    `json:"id"`
	ThreadID   string    `json:"thread_id"`
	MessageID  string    `json:"message_id"`
	InReplyTo  string    `json:"in_reply_to,omitempty"`
	References []string  `json:"references,omitempty"`
	From       string    `json:"from"`
	To         []string  `json:"to"`
	Cc         []string  `json:"cc,omitempty"`
	Bcc        []string  `json:"bcc,omitempty"`
	ReplyTo    []string  `json:"reply_to,omitempty"`
	Subject    string    `json:"subject"`
	Date       time.Time `json:"date"`
	// DateNote says where date comes from when it is not the Date header.
	DateNote    string           `json:"date_note,omitempty"`
	Snippet     string           `json:"snippet,omitempty"`
	Labels      []string         `json:"labels,omitempty"`
	Text        string           `json:"-"`
	HTML        string           `json:"-"`
	Attachments []AttachmentMeta `json:"attachments"`
}

// AttachmentMeta describes an attachment without its content.
type AttachmentMeta struct {
	AttachmentID string `json:"attachment_id"`
	Filename     string `json:"filename"`
	ContentType  string `json:"content_type"`
	Size         int    `json:"size"`
}

// Summary is a message in a list.
type Summary struct {
	ID             string    `json:"id"`
	ThreadID       string    `json:"thread_id"`
	MessageID      string    `json:"message_id"`
	From           string    `json:"from"`
	To             []string  `json:"to"`
	Subject        string    `json:"subject"`
	Date           time.Time `json:"date"`
	Snippet        string    `json:"snippet"`
	HasAttachments bool      `json:"has_attachments"`
	Labels         []string  `json:"labels,omitempty"`
}

// Page is one page of search results.
type Page struct {
	Messages           []Summary `json:"messages"`
	NextPageToken      string    `json:"next_page_token,omitempty"`
	ResultSizeEstimate int       `json:"result_size_estimate"`
}

// AttachmentData is an attachment's content.
type AttachmentData struct {
	Filename    string
	ContentType string
	Data        []byte
}

func notFound(what, id string) error {
	return mcperr.New(mcperr.NotFound, "no %s %q in the mailbox", what, id)
}
