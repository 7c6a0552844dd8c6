// Package gmailfake is an in-memory Gmail API for tests: the real
// google.golang.org/api/gmail/v1 client talks HTTP to it. It checks what
// Gmail checks — bearer tokens (from a googleauthtest authorization server)
// and their scopes, the mailbox a token may open (a delegated user), raw
// messages in base64url that parse as RFC 5322 with CRLF lines no longer
// than 998 bytes, a valid MIME tree whose parts decode, recipients, the
// sender, and thread membership (a message joins the thread it names only
// when its In-Reply-To or References point into it and its subject
// matches; otherwise it starts a new thread, as in Gmail). It serves
// messages in Gmail's "full", "metadata" and "raw" formats, threads,
// search (the local mailbox's query subset), attachments and drafts, and
// injects failures: 401, 403 rate limits, 429 with Retry-After, 5xx.
package gmailfake

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"net/textproto"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/mailmsg"
	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth/googleauthtest"
)

// Scopes.
const (
	ScopeFull     = "https://mail.google.com/"
	ScopeModify   = "https://www.googleapis.com/auth/gmail.modify"
	ScopeReadonly = "https://www.googleapis.com/auth/gmail.readonly"
	ScopeMetadata = "https://www.googleapis.com/auth/gmail.metadata"
	ScopeCompose  = "https://www.googleapis.com/auth/gmail.compose"
	ScopeSend     = "https://www.googleapis.com/auth/gmail.send"
)

// Op names an API method, for fault injection and counts.
type Op string

// The methods served.
const (
	OpProfile    Op = "profile"
	OpSend       Op = "send"
	OpDraft      Op = "draft"
	OpGet        Op = "get"
	OpList       Op = "list"
	OpThread     Op = "thread"
	OpAttachment Op = "attachment"
)

var allowed = map[Op][]string{
	OpProfile:    {ScopeFull, ScopeModify, ScopeReadonly, ScopeMetadata, ScopeCompose},
	OpSend:       {ScopeFull, ScopeModify, ScopeCompose, ScopeSend},
	OpDraft:      {ScopeFull, ScopeModify, ScopeCompose},
	OpGet:        {ScopeFull, ScopeModify, ScopeReadonly, ScopeMetadata},
	OpList:       {ScopeFull, ScopeModify, ScopeReadonly, ScopeMetadata},
	OpThread:     {ScopeFull, ScopeModify, ScopeReadonly, ScopeMetadata},
	OpAttachment: {ScopeFull, ScopeModify, ScopeReadonly},
}

// Stored is a message in a fake mailbox.
type Stored struct {
	ID       string
	ThreadID string
	Labels   []string
	Raw      []byte
	// Parsed is Raw read back (attachments with their data).
	Parsed   *mailmsg.Parsed
	Internal time.Time
	// ThreadRequested is the threadId the sender asked for ("" if none).
	ThreadRequested string
	// Upload says how it came: "json" (base64url raw) or "multipart".
	Upload string
}

type mailbox struct {
	email    string
	messages map[string]*Stored
	order    []string
}

type fault struct {
	status     int
	reason     string
	retryAfter string
}

// Server is the fake.
type Server struct {
	URL  string
	auth *googleauthtest.Server

	mu          sync.Mutex
	boxes       map[string]*mailbox
	faults      map[Op][]fault
	counts      map[Op]int
	attachments map[string][2]string // attachment id → message id, part id
	// replaceIDs: Gmail assigns its own Message-ID to sent mail.
	replaceIDs bool
	clock      func() time.Time
}

// New starts a fake Gmail API that accepts the tokens auth issued.
func New(t testing.TB, auth *googleauthtest.Server) *Server {
	s := &Server{auth: auth, boxes: map[string]*mailbox{}, faults: map[Op][]fault{}, counts: map[Op]int{},
		attachments: map[string][2]string{}, clock: time.Now}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /gmail/v1/users/{user}/profile", s.handle(OpProfile, s.profile))
	mux.HandleFunc("POST /gmail/v1/users/{user}/messages/send", s.handle(OpSend, s.send))
	mux.HandleFunc("POST /upload/gmail/v1/users/{user}/messages/send", s.handle(OpSend, s.send))
	mux.HandleFunc("POST /gmail/v1/users/{user}/drafts", s.handle(OpDraft, s.draft))
	mux.HandleFunc("POST /upload/gmail/v1/users/{user}/drafts", s.handle(OpDraft, s.draft))
	mux.HandleFunc("GET /gmail/v1/users/{user}/messages", s.handle(OpList, s.list))
	mux.HandleFunc("GET /gmail/v1/users/{user}/messages/{id}", s.handle(OpGet, s.get))
	mux.HandleFunc("GET /gmail/v1/users/{user}/messages/{mid}/attachments/{aid}", s.handle(OpAttachment, s.attachment))
	mux.HandleFunc("GET /gmail/v1/users/{user}/threads/{id}", s.handle(OpThread, s.thread))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

// AddMailbox creates the mailbox of email.
func (s *Server) AddMailbox(email string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.boxes[strings.ToLower(email)] = &mailbox{email: email, messages: map[string]*Stored{}}
}

// ReplaceMessageIDs makes the fake give sent mail its own Message-ID, as
// Gmail may.
func (s *Server) ReplaceMessageIDs(on bool) { s.mu.Lock(); s.replaceIDs = on; s.mu.Unlock() }

// Fail makes the next request of op fail with status and error reason
// (e.g. 403 "rateLimitExceeded", 429 "rateLimitExceeded", 500
// "backendError"); retryAfter, if set, is sent as Retry-After.
func (s *Server) Fail(op Op, status int, reason, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[op] = append(s.faults[op], fault{status, reason, retryAfter})
}

// Count is how many requests of op reached the fake (failed ones included).
func (s *Server) Count(op Op) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[op]
}

// Messages returns the messages of a mailbox in arrival order.
func (s *Server) Messages(email string) []*Stored {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.boxes[strings.ToLower(email)]
	if b == nil {
		return nil
	}
	out := make([]*Stored, 0, len(b.order))
	for _, id := range b.order {
		out = append(out, b.messages[id])
	}
	return out
}

// Deliver puts a received message (a client's reply, say) in a mailbox,
// threaded as Gmail threads incoming mail: onto the thread of the message
// its headers answer, when the subject matches.
func (s *Server) Deliver(t testing.TB, email string, raw []byte) *Stored {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.boxes[strings.ToLower(email)]
	p, err := mailmsg.Parse(raw, true)
	if b == nil || err != nil {
		t.Fatalf("deliver to %s: %v", email, err)
	}
	m := &Stored{ID: newID(), Raw: raw, Parsed: p, Labels: []string{"INBOX", "UNREAD"}, Internal: s.clock(), Upload: "delivered"}
	m.ThreadID = b.threadOf(p, "")
	if m.ThreadID == "" {
		m.ThreadID = m.ID
	}
	b.add(m)
	return m
}

func (b *mailbox) add(m *Stored) {
	b.messages[m.ID] = m
	b.order = append(b.order, m.ID)
}

// threadOf is Gmail's rule: the thread of a message the new one's
// In-Reply-To/References name, if the subjects match (and it is want, when
// a thread was asked for).
func (b *mailbox) threadOf(p *mailmsg.Parsed, want string) string {
	ids := append(slices.Clone(p.References), p.InReplyTo)
	base := mailmsg.BaseSubject(p.Subject)
	for _, mid := range b.order {
		m := b.messages[mid]
		if want != "" && m.ThreadID != want {
			continue
		}
		if m.Parsed.MessageID != "" && slices.Contains(ids, m.Parsed.MessageID) && mailmsg.BaseSubject(m.Parsed.Subject) == base {
			return m.ThreadID
		}
	}
	return ""
}

func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type apiError struct {
	status  int
	reason  string
	message string
}

func (e *apiError) Error() string { return e.message }

func errorf(status int, reason, format string, a ...any) *apiError {
	return &apiError{status: status, reason: reason, message: fmt.Sprintf(format, a...)}
}

func writeError(w http.ResponseWriter, e *apiError, retryAfter string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.WriteHeader(e.status)
	status := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED"}[e.status]
	if status == "" {
		status = "INTERNAL"
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": e.status, "message": e.message, "status": status,
		"errors": []map[string]string{{"message": e.message, "domain": "global", "reason": e.reason}}}})
}

type request struct {
	r     *http.Request
	box   *mailbox
	grant googleauthtest.Grant
}

// handle checks the token, its scopes and the mailbox, applies injected
// faults, then runs fn under the lock.
func (s *Server) handle(op Op, fn func(*request) (any, *apiError)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.counts[op]++
		if q := s.faults[op]; len(q) > 0 {
			f := q[0]
			s.faults[op] = q[1:]
			s.mu.Unlock()
			msg := "Backend Error"
			switch f.reason {
			case "rateLimitExceeded", "userRateLimitExceeded":
				msg = "User-rate limit exceeded. Retry after 2025-11-15T10:00:00.000Z"
			case "authError":
				msg = "Request had invalid authentication credentials."
			}
			writeError(w, &apiError{status: f.status, reason: f.reason, message: msg}, f.retryAfter)
			return
		}
		s.mu.Unlock()
		grant, ok := s.auth.Check(r)
		if !ok {
			writeError(w, errorf(401, "authError", "Request had invalid authentication credentials. Expected OAuth 2 access token."), "")
			return
		}
		if !slices.ContainsFunc(allowed[op], grant.HasScope) {
			writeError(w, errorf(403, "insufficientPermissions", "Request had insufficient authentication scopes."), "")
			return
		}
		user := r.PathValue("user")
		if user == "me" {
			user = grant.Email
		}
		if !strings.EqualFold(user, grant.Email) {
			writeError(w, errorf(403, "forbidden", "Delegation denied for %s", grant.Email), "")
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		box := s.boxes[strings.ToLower(user)]
		if box == nil {
			writeError(w, errorf(400, "failedPrecondition", "Mail service not enabled"), "")
			return
		}
		out, e := fn(&request{r: r, box: box, grant: grant})
		if e != nil {
			writeError(w, e, "")
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_ = json.NewEncoder(w).Encode(out)
	}
}

func (s *Server) profile(q *request) (any, *apiError) {
	return map[string]any{"emailAddress": q.box.email, "messagesTotal": len(q.box.order), "threadsTotal": len(q.box.order), "historyId": "1"}, nil
}

type wireMessage struct {
	ID       string `json:"id,omitempty"`
	ThreadID string `json:"threadId,omitempty"`
	Raw      string `json:"raw,omitempty"`
}

// readUpload returns the message of a send or draft request: JSON with
// base64url raw, or a media upload (multipart/related JSON + message/rfc822,
// or the bare message).
func readUpload(r *http.Request, draft bool) (raw []byte, threadID, how string, e *apiError) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 50<<20))
	if err != nil {
		return nil, "", "", errorf(400, "badRequest", "unreadable body")
	}
	decodeMeta := func(b []byte) (*wireMessage, *apiError) {
		var m wireMessage
		if draft {
			var d struct {
				Message *wireMessage `json:"message"`
			}
			if err := json.Unmarshal(b, &d); err != nil || d.Message == nil {
				return nil, errorf(400, "invalidArgument", "Invalid JSON payload received.")
			}
			return d.Message, nil
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, errorf(400, "invalidArgument", "Invalid JSON payload received.")
		}
		return &m, nil
	}
	if !strings.HasPrefix(r.URL.Path, "/upload/") {
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			return nil, "", "", errorf(400, "badRequest", "Content-Type must be application/json")
		}
		m, e := decodeMeta(body)
		if e != nil {
			return nil, "", "", e
		}
		if m.Raw == "" {
			return nil, "", "", errorf(400, "invalidArgument", "'raw' RFC822 payload message string or uploading message via /upload/* URL required")
		}
		if strings.ContainsAny(m.Raw, "+/") {
			return nil, "", "", errorf(400, "invalidArgument", "Invalid value for ByteString: the raw message must be base64url")
		}
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(m.Raw, "="))
		if err != nil {
			return nil, "", "", errorf(400, "invalidArgument", "Invalid value for ByteString")
		}
		return raw, m.ThreadID, "json", nil
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case err != nil:
		return nil, "", "", errorf(400, "badRequest", "bad Content-Type")
	case r.URL.Query().Get("uploadType") == "multipart" && mt == "multipart/related":
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		meta, err1 := mr.NextPart()
		metaBody, _ := io.ReadAll(meta)
		media, err2 := mr.NextPart()
		if err1 != nil || err2 != nil {
			return nil, "", "", errorf(400, "badRequest", "a multipart upload has a metadata part and a media part")
		}
		if media.Header.Get("Content-Type") != "message/rfc822" {
			return nil, "", "", errorf(400, "badRequest", "Media type '%s' is not supported. Valid media types: [message/*]", media.Header.Get("Content-Type"))
		}
		m, e := decodeMeta(metaBody)
		if e != nil {
			return nil, "", "", e
		}
		raw, _ := io.ReadAll(media)
		return raw, m.ThreadID, "multipart", nil
	case r.URL.Query().Get("uploadType") == "media" && mt == "message/rfc822":
		return body, "", "media", nil
	}
	return nil, "", "", errorf(400, "badRequest", "unsupported upload")
}

// checkMessage is what Gmail verifies of a message before accepting it.
func checkMessage(raw []byte, box *mailbox) (*mailmsg.Parsed, *apiError) {
	if len(raw) > 35<<20 {
		return nil, errorf(400, "invalidArgument", "Message too large")
	}
	for i, line := range bytes.Split(raw, []byte("\r\n")) {
		if len(line) > 998 {
			return nil, errorf(400, "invalidArgument", "line %d is longer than 998 bytes", i+1)
		}
		if bytes.ContainsAny(line, "\r\n") {
			return nil, errorf(400, "invalidArgument", "line %d has a bare CR or LF", i+1)
		}
	}
	msg, err := mail.ReadMessage(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return nil, errorf(400, "invalidArgument", "Invalid RFC 5322 message")
	}
	rcpt := 0
	for _, h := range []string{"To", "Cc", "Bcc"} {
		if v := msg.Header.Get(h); v != "" {
			list, err := msg.Header.AddressList(h)
			if err != nil {
				return nil, errorf(400, "invalidArgument", "Invalid %s header", h)
			}
			rcpt += len(list)
		}
	}
	if rcpt == 0 {
		return nil, errorf(400, "invalidArgument", "Recipient address required")
	}
	from, err := msg.Header.AddressList("From")
	if err != nil || len(from) != 1 || !strings.EqualFold(from[0].Address, box.email) {
		return nil, errorf(400, "invalidArgument", "the From header must be the mailbox's address %s", box.email)
	}
	if msg.Header.Get("MIME-Version") != "1.0" || msg.Header.Get("Date") == "" || !mailmsg.ValidMessageID(msg.Header.Get("Message-ID")) {
		return nil, errorf(400, "invalidArgument", "MIME-Version, Date and a Message-ID are required")
	}
	if _, err := tree(textproto.MIMEHeader(msg.Header), msg.Body, "", 0); err != nil {
		return nil, errorf(400, "invalidArgument", "Invalid MIME: %v", err)
	}
	p, err := mailmsg.Parse(raw, true)
	if err != nil {
		return nil, errorf(400, "invalidArgument", "Invalid MIME: %v", err)
	}
	return p, nil
}

func (s *Server) accept(q *request, draft bool) (*Stored, *apiError) {
	raw, threadID, how, e := readUpload(q.r, draft)
	if e != nil {
		return nil, e
	}
	p, e := checkMessage(raw, q.box)
	if e != nil {
		return nil, e
	}
	if threadID != "" && !slices.ContainsFunc(q.box.order, func(id string) bool { return q.box.messages[id].ThreadID == threadID }) {
		return nil, errorf(404, "notFound", "Requested entity was not found.")
	}
	m := &Stored{ID: newID(), Raw: raw, Parsed: p, Internal: s.clock(), ThreadRequested: threadID, Upload: how, Labels: []string{"SENT"}}
	if draft {
		m.Labels = []string{"DRAFT"}
	}
	if threadID != "" {
		m.ThreadID = q.box.threadOf(p, threadID)
	}
	if m.ThreadID == "" {
		m.ThreadID = m.ID
	}
	if s.replaceIDs && !draft {
		gid := "<CA+fake" + newID() + "@mail.gmail.com>"
		m.Raw = bytes.Replace(raw, []byte(p.MessageID), []byte(gid), 1)
		m.Parsed, _ = mailmsg.Parse(m.Raw, true)
	}
	q.box.add(m)
	return m, nil
}

func (s *Server) send(q *request) (any, *apiError) {
	m, e := s.accept(q, false)
	if e != nil {
		return nil, e
	}
	return map[string]any{"id": m.ID, "threadId": m.ThreadID, "labelIds": m.Labels}, nil
}

func (s *Server) draft(q *request) (any, *apiError) {
	m, e := s.accept(q, true)
	if e != nil {
		return nil, e
	}
	return map[string]any{"id": "r" + m.ID, "message": map[string]any{"id": m.ID, "threadId": m.ThreadID, "labelIds": m.Labels}}, nil
}

func (s *Server) message(q *request, id string) (*Stored, *apiError) {
	m := q.box.messages[id]
	if m == nil {
		return nil, errorf(404, "notFound", "Requested entity was not found.")
	}
	return m, nil
}

func (s *Server) get(q *request) (any, *apiError) {
	m, e := s.message(q, q.r.PathValue("id"))
	if e != nil {
		return nil, e
	}
	return s.render(q, m)
}

// render writes a message in the requested format.
func (s *Server) render(q *request, m *Stored) (map[string]any, *apiError) {
	format := q.r.URL.Query().Get("format")
	if format == "" {
		format = "full"
	}
	if format != "metadata" && (q.grant.HasScope(ScopeMetadata) || !slices.ContainsFunc([]string{ScopeFull, ScopeModify, ScopeReadonly}, q.grant.HasScope)) {
		return nil, errorf(403, "forbidden", "Metadata scope doesn't allow format %s", strings.ToUpper(format))
	}
	out := map[string]any{"id": m.ID, "threadId": m.ThreadID, "labelIds": m.Labels, "snippet": mailmsg.Snippet(m.Parsed.Text, 200),
		"internalDate": strconv.FormatInt(m.Internal.UnixMilli(), 10), "sizeEstimate": len(m.Raw), "historyId": "1"}
	msg, _ := mail.ReadMessage(bufio.NewReader(bytes.NewReader(m.Raw)))
	switch format {
	case "raw":
		out["raw"] = base64.URLEncoding.EncodeToString(m.Raw)
	case "minimal":
	case "metadata":
		want := q.r.URL.Query()["metadataHeaders"]
		var hs []map[string]string
		for _, h := range headerList(textproto.MIMEHeader(msg.Header)) {
			if len(want) == 0 || slices.ContainsFunc(want, func(w string) bool { return strings.EqualFold(w, h["name"]) }) {
				hs = append(hs, h)
			}
		}
		mt, _, _ := mime.ParseMediaType(msg.Header.Get("Content-Type"))
		out["payload"] = map[string]any{"headers": hs, "mimeType": mt}
	case "full":
		root, err := tree(textproto.MIMEHeader(msg.Header), msg.Body, "", 0)
		if err != nil {
			return nil, errorf(500, "backendError", "stored message unreadable")
		}
		s.assignAttachments(m.ID, root)
		out["payload"] = root.wire()
	default:
		return nil, errorf(400, "invalidArgument", "Invalid format %q", format)
	}
	return out, nil
}

func headerList(h textproto.MIMEHeader) []map[string]string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []map[string]string
	for _, k := range keys {
		for _, v := range h[k] {
			out = append(out, map[string]string{"name": k, "value": mailmsg.DecodeHeader(v)})
		}
	}
	return out
}

// node is a MIME entity in Gmail's payload shape.
type node struct {
	partID, mimeType, filename string
	headers                    textproto.MIMEHeader
	data                       []byte
	attachment                 bool
	attachmentID               string
	parts                      []*node
}

func (n *node) wire() map[string]any {
	body := map[string]any{"size": len(n.data)}
	if n.attachmentID != "" {
		body["attachmentId"] = n.attachmentID
	} else if !strings.HasPrefix(n.mimeType, "multipart/") {
		body["data"] = base64.URLEncoding.EncodeToString(n.data)
	}
	out := map[string]any{"partId": n.partID, "mimeType": n.mimeType, "filename": n.filename, "headers": headerList(n.headers), "body": body}
	if len(n.parts) > 0 {
		var ps []map[string]any
		for _, p := range n.parts {
			ps = append(ps, p.wire())
		}
		out["parts"] = ps
	}
	return out
}

func (s *Server) assignAttachments(msgID string, n *node) {
	if n.attachment {
		n.attachmentID = "ANGjdJ" + hex.EncodeToString([]byte(msgID+":"+n.partID))
		s.attachments[n.attachmentID] = [2]string{msgID, n.partID}
	}
	for _, p := range n.parts {
		s.assignAttachments(msgID, p)
	}
}

// tree reads a MIME entity strictly: every multipart has a boundary and
// closes, every body decodes in its transfer encoding.
func tree(h textproto.MIMEHeader, body io.Reader, id string, depth int) (*node, error) {
	if depth > 10 {
		return nil, errors.New("nested too deeply")
	}
	n := &node{partID: id, headers: h}
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if h.Get("Content-Type") == "" {
		mt, err = "text/plain", nil
	}
	if err != nil {
		return nil, fmt.Errorf("part %q: bad Content-Type", id)
	}
	n.mimeType = mt
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for i := 0; ; i++ {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("part %q: %v", id, err)
			}
			cid := strconv.Itoa(i)
			if id != "" {
				cid = id + "." + cid
			}
			c, err := tree(p.Header, p, cid, depth+1)
			if err != nil {
				return nil, err
			}
			n.parts = append(n.parts, c)
		}
		if len(n.parts) == 0 {
			return nil, fmt.Errorf("part %q: an empty multipart", id)
		}
		return n, nil
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	switch strings.ToLower(h.Get("Content-Transfer-Encoding")) {
	case "base64":
		clean := bytes.ReplaceAll(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\n"), nil)
		if n.data, err = base64.StdEncoding.DecodeString(string(clean)); err != nil {
			return nil, fmt.Errorf("part %q: base64 does not decode", id)
		}
	case "quoted-printable":
		if n.data, err = io.ReadAll(quotedPrintable(raw)); err != nil {
			return nil, fmt.Errorf("part %q: quoted-printable does not decode", id)
		}
	case "", "7bit", "8bit", "binary":
		n.data = raw
	default:
		return nil, fmt.Errorf("part %q: unknown transfer encoding", id)
	}
	disp, dp, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	n.filename = dp["filename"]
	if n.filename == "" {
		n.filename = params["name"]
	}
	n.attachment = strings.EqualFold(disp, "attachment") || n.filename != ""
	return n, nil
}

func (s *Server) list(q *request) (any, *apiError) {
	v := q.r.URL.Query()
	if q.grant.HasScope(ScopeMetadata) && v.Get("q") != "" {
		return nil, errorf(403, "forbidden", "Metadata scope does not support 'q' parameter")
	}
	parsed, err := query.Parse(v.Get("q"), s.clock())
	if err != nil {
		return nil, errorf(400, "invalidArgument", "Invalid query")
	}
	max := 100
	if m := v.Get("maxResults"); m != "" {
		max, _ = strconv.Atoi(m)
	}
	offset, _ := strconv.Atoi(v.Get("pageToken"))
	var hits []*Stored
	for i := len(q.box.order) - 1; i >= 0; i-- {
		m := q.box.messages[q.box.order[i]]
		p := m.Parsed
		var names []string
		for _, part := range p.Parts {
			if part.Filename != "" {
				names = append(names, part.Filename)
			}
		}
		labels := slices.Clone(m.Labels)
		for _, l := range m.Labels {
			labels = append(labels, map[string]string{"SENT": "sent", "DRAFT": "drafts", "INBOX": "inbox"}[l])
		}
		d := &query.Doc{From: p.From, To: strings.Join(p.To, ","), Cc: strings.Join(p.Cc, ","), Bcc: strings.Join(p.Bcc, ","),
			Subject: p.Subject, Body: p.Text + mailmsg.HTMLToText(p.HTML), Date: m.Internal, Labels: labels, MessageID: p.MessageID, Filenames: names, Me: q.box.email}
		if parsed.Match(d) {
			hits = append(hits, m)
		}
	}
	out := map[string]any{"resultSizeEstimate": len(hits)}
	var refs []map[string]string
	for i := offset; i < len(hits) && i < offset+max; i++ {
		refs = append(refs, map[string]string{"id": hits[i].ID, "threadId": hits[i].ThreadID})
	}
	if refs != nil {
		out["messages"] = refs
	}
	if offset+max < len(hits) {
		out["nextPageToken"] = strconv.Itoa(offset + max)
	}
	return out, nil
}

func (s *Server) thread(q *request) (any, *apiError) {
	id := q.r.PathValue("id")
	var msgs []map[string]any
	for _, mid := range q.box.order {
		m := q.box.messages[mid]
		if m.ThreadID != id {
			continue
		}
		w, e := s.render(q, m)
		if e != nil {
			return nil, e
		}
		msgs = append(msgs, w)
	}
	if msgs == nil {
		return nil, errorf(404, "notFound", "Requested entity was not found.")
	}
	return map[string]any{"id": id, "historyId": "1", "messages": msgs}, nil
}

func (s *Server) attachment(q *request) (any, *apiError) {
	where, ok := s.attachments[q.r.PathValue("aid")]
	if !ok || where[0] != q.r.PathValue("mid") {
		return nil, errorf(400, "invalidArgument", "Invalid attachment token")
	}
	m, e := s.message(q, where[0])
	if e != nil {
		return nil, e
	}
	msg, _ := mail.ReadMessage(bufio.NewReader(bytes.NewReader(m.Raw)))
	root, _ := tree(textproto.MIMEHeader(msg.Header), msg.Body, "", 0)
	var found *node
	var walk func(n *node)
	walk = func(n *node) {
		if n.partID == where[1] {
			found = n
		}
		for _, c := range n.parts {
			walk(c)
		}
	}
	walk(root)
	if found == nil {
		return nil, errorf(404, "notFound", "Requested entity was not found.")
	}
	return map[string]any{"size": len(found.data), "data": base64.URLEncoding.EncodeToString(found.data)}, nil
}
