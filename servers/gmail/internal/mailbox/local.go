package mailbox

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/mailmsg"
	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/atomicfile"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/state"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Local mailbox layout under its directory.
const (
	SentDir   = "sent"
	DraftsDir = "drafts"
	// InboxDir is where a developer drops .eml files (a client's reply,
	// say) for the mailbox to pick up as received mail.
	InboxDir = "inbox"
	// maxIndexedBody bounds the text of a message kept for search.
	maxIndexedBody = 100 << 10
	// maxInboxFile: larger files dropped in the inbox are skipped.
	maxInboxFile = 50 << 20
)

// LocalConfig configures the local mailbox.
type LocalConfig struct {
	// Dir holds sent/, drafts/, inbox/ and the index.
	Dir string
	// Address is the mailbox's own address.
	Address string
	// Now replaces the clock (tests).
	Now func() time.Time
}

// Local is a mailbox of RFC 5322 files on disk — real messages any mail
// client opens — with an SQLite index for threads and search. It threads as
// Gmail does: a message joins the thread it names only when its
// In-Reply-To or References point into that thread and its subject is the
// thread's; otherwise it starts a new one.
type Local struct {
	dir  string
	addr string
	now  func() time.Time
	db   *state.SQLite
	mu   sync.Mutex // writes and inbox scans

	// What earlier scans learned of inbox/ (guarded by mu): the files
	// already indexed, and those passed over (unreadable, not mail, too
	// big) as they were then, so a scan queries and reads only new files
	// or changed ones.
	indexed map[string]bool
	skipped map[string]fileStamp
}

// fileStamp tells whether a file changed since it was last looked at.
type fileStamp struct {
	size int64
	mod  time.Time
}

// OpenLocal opens (creating it, 0700) the mailbox in cfg.Dir.
func OpenLocal(ctx context.Context, cfg LocalConfig) (*Local, error) {
	if cfg.Dir == "" || cfg.Address == "" {
		return nil, errors.New("mailbox: a local mailbox needs a directory and an address")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	for _, d := range []string{SentDir, DraftsDir, InboxDir} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, d), 0o700); err != nil {
			return nil, fmt.Errorf("mailbox: %w", err)
		}
	}
	sub, _ := fs.Sub(migrationFiles, "migrations")
	db, err := state.OpenSQLite(ctx, filepath.Join(cfg.Dir, "index.db"), state.Options{Migrations: sub})
	if err != nil {
		return nil, fmt.Errorf("mailbox: %w", err)
	}
	return &Local{dir: cfg.Dir, addr: cfg.Address, now: cfg.Now, db: db}, nil
}

// Kind implements Backend.
func (l *Local) Kind() string { return "local" }

// Describe implements Backend.
func (l *Local) Describe() string { return "local mailbox " + l.dir + " (" + l.addr + ")" }

// Address implements Backend.
func (l *Local) Address() string { return l.addr }

// Sender implements Backend.
func (l *Local) Sender(context.Context) (string, error) { return l.addr, nil }

// Dir is the mailbox directory.
func (l *Local) Dir() string { return l.dir }

// Close implements Backend.
func (l *Local) Close() error { return l.db.Close() }

func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Send implements Backend.
func (l *Local) Send(ctx context.Context, raw []byte, threadID string) (*Sent, error) {
	return l.store(ctx, raw, threadID, SentDir, []string{"SENT"})
}

// CreateDraft implements Backend.
func (l *Local) CreateDraft(ctx context.Context, raw []byte, threadID string) (*Sent, error) {
	return l.store(ctx, raw, threadID, DraftsDir, []string{"DRAFT"})
}

func (l *Local) store(ctx context.Context, raw []byte, threadID, sub string, labels []string) (*Sent, error) {
	p, err := mailmsg.Parse(raw, false)
	if err != nil {
		return nil, mcperr.Invalid("message", nil, "an RFC 5322 message", "the message cannot be read back: %v", err)
	}
	if p.MessageID == "" {
		return nil, mcperr.Invalid("message", nil, "a message with a Message-ID", "the message has no Message-ID")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if threadID != "" {
		var n int
		if err := l.db.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE thread_id = ?`, threadID).Scan(&n); err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, notFound("thread", threadID)
		}
	}
	id := newID()
	thread, err := l.threadFor(ctx, p, threadID)
	if err != nil {
		return nil, err
	}
	if thread == "" {
		thread = id
	}
	rel := filepath.Join(sub, id+".eml")
	if err := atomicfile.Write(filepath.Join(l.dir, rel), raw); err != nil {
		return nil, fmt.Errorf("mailbox: %w", err)
	}
	s := &Sent{ID: id, ThreadID: thread, MessageID: p.MessageID, Labels: labels}
	if sub == DraftsDir {
		s.DraftID = "r" + id
	}
	now := l.now()
	if err := l.insert(ctx, id, thread, rel, p, len(raw), labels, s.DraftID, now, dated{at: now, fromHeader: true}); err != nil {
		_ = os.Remove(filepath.Join(l.dir, rel))
		return nil, err
	}
	return s, nil
}

// threadFor returns the thread a message belongs to: want (the thread the
// sender named) when its headers point into it and the subject matches,
// otherwise — with no thread named — the thread of the message it
// answers, if any is in the mailbox; "" starts a new thread.
func (l *Local) threadFor(ctx context.Context, p *mailmsg.Parsed, want string) (string, error) {
	ids := append(slices.Clone(p.References), p.InReplyTo)
	base := mailmsg.BaseSubject(p.Subject)
	for i := len(ids) - 1; i >= 0; i-- {
		if ids[i] == "" {
			continue
		}
		rows, err := l.db.Readers().QueryContext(ctx, `SELECT thread_id, subject FROM messages WHERE rfc_message_id = ?`, ids[i])
		if err != nil {
			return "", err
		}
		for rows.Next() {
			var thread, subject string
			if err := rows.Scan(&thread, &subject); err != nil {
				rows.Close()
				return "", err
			}
			if (want == "" || thread == want) && mailmsg.BaseSubject(subject) == base {
				rows.Close()
				return thread, nil
			}
		}
		rows.Close()
	}
	return "", nil
}

// dated is the date a message shows and is searched by, and whether it
// comes from its Date header.
type dated struct {
	at         time.Time
	fromHeader bool
}

// insert indexes a message. Its place in a thread is when the mailbox got
// it (as Gmail's internalDate): to the millisecond, so a thread's order is
// the order of arrival. Its date is shown.
func (l *Local) insert(ctx context.Context, id, thread, rel string, p *mailmsg.Parsed, size int, labels []string, draftID string, received time.Time, shown dated) error {
	body := p.Text
	if body == "" && p.HTML != "" {
		body = mailmsg.HTMLToText(p.HTML)
	}
	snippet := mailmsg.Snippet(body, 160)
	if len(body) > maxIndexedBody {
		body = body[:maxIndexedBody]
	}
	var names []string
	for _, part := range p.Parts {
		if part.Filename != "" {
			names = append(names, part.Filename)
		}
	}
	date := received
	if date.IsZero() {
		date = p.Date
	}
	if date.IsZero() {
		date = l.now()
	}
	_, err := l.db.ExecContext(ctx, `INSERT INTO messages (id, thread_id, rfc_message_id, in_reply_to, refs, from_addr, to_addrs, cc_addrs,
		bcc_addrs, subject, date_ms, snippet, body, filenames, labels, draft_id, path, size, shown_ms, date_from_header) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		id, thread, p.MessageID, p.InReplyTo, strings.Join(p.References, " "), p.From, strings.Join(p.To, "\n"), strings.Join(p.Cc, "\n"),
		strings.Join(p.Bcc, "\n"), p.Subject, date.UnixMilli(), snippet, body, strings.Join(names, "\n"), strings.Join(labels, " "), draftID, rel, size, shown.at.UnixMilli(), shown.fromHeader)
	if err != nil {
		return fmt.Errorf("mailbox: indexing %s: %w", rel, err)
	}
	return nil
}

type row struct {
	id, thread, msgID, inReplyTo, refs, from, to, cc, bcc, subject string
	dateMS, shownMS                                                int64
	fromHeader                                                     bool
	snippet, body, filenames, labels, path                         string
}

// date is the message's date: its Date header's, as indexed.
func (r *row) date() time.Time {
	if r.shownMS != 0 {
		return time.UnixMilli(r.shownMS).UTC()
	}
	return time.UnixMilli(r.dateMS).UTC()
}

const rowColumns = `id, thread_id, rfc_message_id, in_reply_to, refs, from_addr, to_addrs, cc_addrs, bcc_addrs, subject, date_ms, snippet, body, filenames, labels, path, shown_ms, date_from_header`

func scanRow(sc interface{ Scan(...any) error }) (*row, error) {
	var r row
	err := sc.Scan(&r.id, &r.thread, &r.msgID, &r.inReplyTo, &r.refs, &r.from, &r.to, &r.cc, &r.bcc, &r.subject, &r.dateMS,
		&r.snippet, &r.body, &r.filenames, &r.labels, &r.path, &r.shownMS, &r.fromHeader)
	return &r, err
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func (l *Local) row(ctx context.Context, id string) (*row, error) {
	if err := l.scanInbox(ctx); err != nil {
		return nil, err
	}
	r, err := scanRow(l.db.Readers().QueryRowContext(ctx, `SELECT `+rowColumns+` FROM messages WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("message", id)
	}
	return r, err
}

// Ref implements Backend.
func (l *Local) Ref(ctx context.Context, id string) (*Ref, error) {
	r, err := l.row(ctx, id)
	if err != nil {
		return nil, err
	}
	ref := &Ref{ID: r.id, ThreadID: r.thread, MessageID: r.msgID, References: r.refs, InReplyTo: r.inReplyTo, Subject: r.subject, From: r.from}
	if p, err := l.parseFile(r.path, false); err == nil && len(p.ReplyTo) > 0 {
		ref.ReplyTo = p.ReplyTo[0]
	}
	return ref, nil
}

func (l *Local) parseFile(rel string, keep bool) (*mailmsg.Parsed, error) {
	raw, err := os.ReadFile(filepath.Join(l.dir, rel))
	if err != nil {
		return nil, mcperr.New(mcperr.NotFound, "the message file %s is gone from the mailbox", rel).WithCause(err)
	}
	p, err := mailmsg.Parse(raw, keep)
	if err != nil {
		return nil, mcperr.New(mcperr.Upstream, "the message file %s cannot be read: %v", rel, err).WithRetryable(false)
	}
	return p, nil
}

func (l *Local) message(r *row) (*Message, error) {
	p, err := l.parseFile(r.path, false)
	if err != nil {
		return nil, err
	}
	m := &Message{ID: r.id, ThreadID: r.thread, MessageID: p.MessageID, InReplyTo: p.InReplyTo, References: p.References,
		From: p.From, To: p.To, Cc: p.Cc, Bcc: p.Bcc, ReplyTo: p.ReplyTo, Subject: p.Subject, Date: r.date(),
		Snippet: r.snippet, Labels: strings.Fields(r.labels), Text: p.Text, HTML: p.HTML, Attachments: []AttachmentMeta{}}
	for _, part := range p.Parts {
		m.Attachments = append(m.Attachments, AttachmentMeta{AttachmentID: part.PartID, Filename: part.Filename, ContentType: part.ContentType, Size: part.Size})
	}
	if !r.fromHeader {
		m.DateNote = "the message has no readable Date header; date is when its file was written to the inbox directory"
	}
	return m, nil
}

// Get implements Backend.
func (l *Local) Get(ctx context.Context, id string) (*Message, error) {
	r, err := l.row(ctx, id)
	if err != nil {
		return nil, err
	}
	return l.message(r)
}

// Thread implements Backend.
func (l *Local) Thread(ctx context.Context, threadID string) ([]*Message, error) {
	if err := l.scanInbox(ctx); err != nil {
		return nil, err
	}
	rows, err := l.db.Readers().QueryContext(ctx, `SELECT `+rowColumns+` FROM messages WHERE thread_id = ? ORDER BY date_ms, rowid`, threadID)
	if err != nil {
		return nil, err
	}
	var rs []*row
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		rs = append(rs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, notFound("thread", threadID)
	}
	out := make([]*Message, 0, len(rs))
	for _, r := range rs {
		m, err := l.message(r)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Search implements Backend: the query is matched against every indexed
// message, newest first; the page token is an offset.
func (l *Local) Search(ctx context.Context, q string, max int, pageToken string) (*Page, error) {
	parsed, err := query.Parse(q, l.now())
	if err != nil {
		return nil, err
	}
	offset := 0
	if pageToken != "" {
		if offset, err = strconv.Atoi(pageToken); err != nil || offset < 0 {
			return nil, mcperr.Invalid("page_token", pageToken, "the next_page_token of a previous page", "not a page token of this mailbox")
		}
	}
	if err := l.scanInbox(ctx); err != nil {
		return nil, err
	}
	rows, err := l.db.Readers().QueryContext(ctx, `SELECT `+rowColumns+` FROM messages ORDER BY date_ms DESC, rowid DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	page := &Page{Messages: []Summary{}}
	matched := 0
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, err
		}
		labels := strings.Fields(r.labels)
		doc := &query.Doc{From: r.from, To: r.to, Cc: r.cc, Bcc: r.bcc, Subject: r.subject, Body: r.body,
			Date: r.date(), Labels: labelNames(labels), MessageID: r.msgID, Filenames: lines(r.filenames), Me: l.addr}
		if !parsed.Match(doc) {
			continue
		}
		matched++
		if matched <= offset || len(page.Messages) >= max {
			continue
		}
		page.Messages = append(page.Messages, Summary{ID: r.id, ThreadID: r.thread, MessageID: r.msgID, From: r.from, To: lines(r.to), Subject: r.subject,
			Date: r.date(), Snippet: r.snippet, HasAttachments: r.filenames != "", Labels: labels})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if matched > offset+max {
		page.NextPageToken = strconv.Itoa(offset + max)
	}
	page.ResultSizeEstimate = matched
	return page, nil
}

// labelNames adds the search names of Gmail's system labels (in:sent).
func labelNames(labels []string) []string {
	out := slices.Clone(labels)
	for _, l := range labels {
		switch l {
		case "SENT":
			out = append(out, "sent")
		case "DRAFT":
			out = append(out, "drafts")
		case "INBOX":
			out = append(out, "inbox")
		}
	}
	return out
}

// Attachment implements Backend; the attachment id is the part's place in
// the message (as get_email lists it).
func (l *Local) Attachment(ctx context.Context, messageID, attachmentID string) (*AttachmentData, error) {
	r, err := l.row(ctx, messageID)
	if err != nil {
		return nil, err
	}
	p, err := l.parseFile(r.path, true)
	if err != nil {
		return nil, err
	}
	for _, part := range p.Parts {
		if part.PartID == attachmentID {
			return &AttachmentData{Filename: part.Filename, ContentType: part.ContentType, Data: part.Data()}, nil
		}
	}
	return nil, notFound("attachment", attachmentID)
}

// scanInbox indexes .eml files dropped into inbox/ since the last scan, as
// received mail, threading them onto the messages they answer.
func (l *Local) scanInbox(ctx context.Context) error {
	entries, err := os.ReadDir(filepath.Join(l.dir, InboxDir))
	if err != nil {
		return fmt.Errorf("mailbox: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.indexed == nil {
		l.indexed, l.skipped = map[string]bool{}, map[string]fileStamp{}
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(strings.ToLower(e.Name()), ".eml") {
			continue
		}
		rel := filepath.Join(InboxDir, e.Name())
		if l.indexed[rel] {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		stamp := fileStamp{info.Size(), info.ModTime()}
		if was, ok := l.skipped[rel]; ok && was == stamp {
			continue
		}
		var n int
		if err := l.db.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE path = ?`, rel).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			l.indexed[rel] = true
			continue
		}
		skip := func() { l.skipped[rel] = stamp }
		if !info.Mode().IsRegular() || info.Size() > maxInboxFile {
			skip()
			continue
		}
		raw, err := os.ReadFile(filepath.Join(l.dir, rel))
		if err != nil {
			skip()
			continue
		}
		p, err := mailmsg.Parse(raw, false)
		if err != nil {
			skip()
			continue
		}
		if p.MessageID == "" {
			p.MessageID = mailmsg.NewMessageID("inbox.local")
		}
		id := newID()
		thread, err := l.threadFor(ctx, p, "")
		if err != nil {
			return err
		}
		if thread == "" {
			thread = id
		}
		shown := dated{at: p.Date, fromHeader: true}
		if p.Date.IsZero() {
			shown = dated{at: info.ModTime()}
		}
		if err := l.insert(ctx, id, thread, rel, p, len(raw), []string{"INBOX"}, "", l.now(), shown); err != nil {
			return err
		}
		l.indexed[rel] = true
		delete(l.skipped, rel)
	}
	return nil
}
