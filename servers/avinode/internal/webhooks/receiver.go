// Package webhooks receives Avinode's webhook notifications and processes
// them.
//
// Avinode posts a thin pointer for each event — {"id","href","type",
// "tripId"}, authenticated with the subscription's HTTP Basic credentials —
// and redelivers it until it gets a 200, for up to 48 hours. The Receiver
// checks the request (source network, rate, credentials, an optional HMAC
// signature, size, shape), stores the event durably and only then answers
// 200; a redelivery finds the stored event and is answered 200 without a
// second one. It never waits for processing.
//
// The Processor claims due events from the store (a lease per event, so
// several processes share the work and a worker that dies loses nothing),
// fetches what each pointer names through the marketplace backend — the
// Avinode client, or the simulated marketplace — which stores it where the
// tools read it, and marks the event completed, failed (retried with
// exponential backoff) or dead letter (with the reason).
package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
	"github.com/mcp-fleet/mcp-fleet/shared/ratelimit"
	"github.com/mcp-fleet/mcp-fleet/shared/validate"
)

// Path is where the receiver takes notifications.
const Path = "/webhooks/avinode"

// Defaults of ReceiverConfig.
const (
	DefaultMaxBody         = 64 << 10
	DefaultSignatureHeader = "X-Avinode-Signature"
	DefaultStoreTimeout    = 10 * time.Second
	// MinSecretLength is the shortest client secret accepted.
	MinSecretLength = 16
	// bodyDeadline bounds reading one request.
	bodyDeadline = 30 * time.Second
)

// ReceiverConfig configures a Receiver.
type ReceiverConfig struct {
	Store *store.Store
	// ClientID and ClientSecret are the subscription's clientIdentifier
	// and clientSecret, which Avinode sends as HTTP Basic user and password.
	ClientID, ClientSecret string
	// SigningSecret, when set, requires SignatureHeader on every request:
	// the hex HMAC-SHA256 of the body under this secret (a "sha256="
	// prefix is allowed).
	SigningSecret   string
	SignatureHeader string
	// MaxBody caps a request body (DefaultMaxBody).
	MaxBody int64
	// Rate limits requests per source address (zero: off).
	Rate ratelimit.Rate
	// Allow, when not empty, lists the only networks notifications may come
	// from.
	Allow []netip.Prefix
	// TrustedProxies are reverse proxies whose X-Forwarded-For names the
	// real source; from anyone else the header is ignored.
	TrustedProxies []netip.Prefix
	// MaxRetries is each stored event's retry budget.
	MaxRetries int
	// StoreTimeout bounds storing one event (DefaultStoreTimeout).
	StoreTimeout time.Duration
	Logger       *zerolog.Logger
	Metrics      *metrics.Registry
	// OnStored is called after a new event is stored (to wake a worker).
	OnStored func()
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// maxBatch bounds the deliveries committed together.
const maxBatch = 256

// gatherWait bounds how long a commit waits for deliveries still being
// read and checked to join it. Under load, every delivery a commit takes
// along is one statement fewer for the database; idle, there is nobody to
// wait for and nothing waits.
const gatherWait = 2 * time.Millisecond

// maxFlushes bounds the batches being committed at once: while one is in
// the database, the next forms and goes, so neither the database nor the
// receiver waits for the other. On a database with a single writer
// (SQLite) one: a second would only split the batches.
const maxFlushes = 2

// committer stores the deliveries that arrive together at once (group
// commit): deliveries join the batch being formed, and up to maxFlushes
// flushers each commit the batches as they stand, until none is left. A
// flusher first waits (at most gatherWait) until the queue holds at least
// as many deliveries as are still being read and checked: a commit then
// takes about half of what is in flight, and the two flushers alternate —
// one commits while the next batch forms — instead of all deliveries moving
// in one wave that leaves the database and the receiver each idle while the
// other works. A delivery is answered only once its batch has committed; a
// failed commit fails every delivery in it (each is answered 503 and
// delivered again).
//
// The handlers of one batch wait on the batch's one channel and read their
// result from its slice by position: a delivery costs no channel or record
// of its own, and the flusher wakes them all with one close.
type committer struct {
	st         *store.Store
	timeout    time.Duration
	maxFlushes int
	gatherWait time.Duration
	mu         sync.Mutex
	flushing   int
	// arriving counts the requests being checked: each will queue or leave.
	arriving int
	// batches are the batches not yet taken by a flusher, oldest first;
	// only the last may still grow. queued counts their deliveries.
	batches []*batch
	queued  int
	// waiting counts the flushers waiting for the queue to be gathered;
	// joined is closed, and replaced, to wake them once it is.
	waiting int
	joined  chan struct{}
}

// batch is deliveries committed together, and their outcome: res and err
// are written before done is closed and only read after.
type batch struct {
	ins  []store.Incoming
	done chan struct{}
	res  []store.Received
	err  error
}

func newCommitter(st *store.Store, timeout time.Duration) *committer {
	c := &committer{st: st, timeout: timeout, maxFlushes: maxFlushes, gatherWait: gatherWait, joined: make(chan struct{})}
	if st.SingleWriter() {
		c.maxFlushes = 1
	}
	return c
}

// arrive counts a request that may soon be stored: the commit being formed
// waits for it (a little). It must end in store or leave.
func (c *committer) arrive() {
	c.mu.Lock()
	c.arriving++
	c.mu.Unlock()
}

// leave is the end of an arrived request that is not stored.
func (c *committer) leave() {
	c.mu.Lock()
	c.arriving--
	c.signal()
	c.mu.Unlock()
}

// gathered reports whether a commit need wait no longer for deliveries to
// join the queue; c.mu is held.
func (c *committer) gathered() bool {
	return c.arriving <= c.queued || len(c.batches[0].ins) >= maxBatch
}

// signal wakes the waiting flushers once the queue is gathered; c.mu is
// held.
func (c *committer) signal() {
	if c.waiting > 0 && c.queued > 0 && c.gathered() {
		close(c.joined)
		c.joined = make(chan struct{})
	}
}

// store commits one arrived delivery, with whatever else is waiting.
func (c *committer) store(in store.Incoming) (store.Received, error) {
	c.mu.Lock()
	var b *batch
	if n := len(c.batches); n > 0 && len(c.batches[n-1].ins) < maxBatch {
		b = c.batches[n-1]
	} else {
		b = &batch{ins: make([]store.Incoming, 0, 8), done: make(chan struct{})}
		c.batches = append(c.batches, b)
	}
	i := len(b.ins)
	b.ins = append(b.ins, in)
	c.queued++
	c.arriving--
	c.signal()
	start := c.flushing < c.maxFlushes
	if start {
		c.flushing++
	}
	c.mu.Unlock()
	if start {
		go c.flush()
	}
	<-b.done
	if b.err != nil {
		return store.Received{}, b.err
	}
	return b.res[i], nil
}

// flush commits the queued batches, one at a time, until none is left.
func (c *committer) flush() {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		c.mu.Lock()
		var deadline time.Time
		for c.queued > 0 && !c.gathered() {
			if deadline.IsZero() {
				deadline = time.Now().Add(c.gatherWait)
			}
			wait := time.Until(deadline)
			if wait <= 0 {
				break
			}
			joined := c.joined
			c.waiting++
			c.mu.Unlock()
			timer.Reset(wait)
			select {
			case <-joined:
			case <-timer.C:
			}
			c.mu.Lock()
			c.waiting--
		}
		if c.queued == 0 {
			c.flushing--
			c.mu.Unlock()
			return
		}
		b := c.batches[0]
		n := copy(c.batches, c.batches[1:])
		c.batches[n] = nil
		c.batches = c.batches[:n]
		c.queued -= len(b.ins)
		c.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		b.res, b.err = c.st.ReceiveWebhookEvents(ctx, b.ins)
		cancel()
		if b.err == nil && len(b.res) != len(b.ins) {
			b.err = fmt.Errorf("webhooks: the store answered %d of %d deliveries", len(b.res), len(b.ins))
		}
		close(b.done)
	}
}

// Receiver is the http.Handler of Path.
type Receiver struct {
	cfg      ReceiverConfig
	user     [sha256.Size]byte
	pass     [sha256.Size]byte
	limiter  *limiter
	commit   *committer
	log      zerolog.Logger
	instr    *instruments
	decoding validate.Limits
	// macs recycles HMAC-SHA256 states keyed with the signing secret
	// (*macState): a fresh one hashes the key twice and allocates both
	// digests.
	macs sync.Pool
}

// NewReceiver checks cfg and returns the receiver.
func NewReceiver(cfg ReceiverConfig) (*Receiver, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("webhooks: the receiver needs a store")
	case cfg.ClientID == "" || cfg.ClientSecret == "":
		return nil, errors.New("webhooks: the receiver needs the subscription's client identifier and secret")
	case len(cfg.ClientSecret) < MinSecretLength:
		return nil, fmt.Errorf("webhooks: the client secret is %d characters; use at least %d", len(cfg.ClientSecret), MinSecretLength)
	}
	if cfg.SignatureHeader == "" {
		cfg.SignatureHeader = DefaultSignatureHeader
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.StoreTimeout <= 0 {
		cfg.StoreTimeout = DefaultStoreTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	r := &Receiver{cfg: cfg, user: sha256.Sum256([]byte(cfg.ClientID)), pass: sha256.Sum256([]byte(cfg.ClientSecret)),
		limiter: newLimiter(cfg.Rate), commit: newCommitter(cfg.Store, cfg.StoreTimeout), log: zerolog.Nop(),
		instr:    newInstruments(cfg.Metrics),
		decoding: validate.Limits{MaxDepth: 32, MaxValues: 10_000}}
	if cfg.Logger != nil {
		r.log = cfg.Logger.With().Str("component", "webhook receiver").Logger()
	}
	key := []byte(cfg.SigningSecret)
	r.macs.New = func() any { return &macState{mac: hmac.New(sha256.New, key)} }
	return r, nil
}

// answer is the JSON body of every response.
type answer struct {
	Status  string `json:"status"`
	EventID string `json:"event_id,omitempty"`
	Error   string `json:"error,omitempty"`
	Field   string `json:"field,omitempty"`
}

// The answers' header values, shared: net/http only reads them.
var (
	jsonType = []string{"application/json"}
	noStore  = []string{"no-store"}
)

func writeAnswer(w http.ResponseWriter, status int, a answer) {
	h := w.Header()
	h["Content-Type"] = jsonType
	h["Cache-Control"] = noStore
	w.WriteHeader(status)
	buf := answerBufs.Get().(*[]byte)
	*buf = a.appendJSON((*buf)[:0])
	_, _ = w.Write(*buf)
	if cap(*buf) <= 1<<10 { // a long refusal's buffer is left to the collector
		answerBufs.Put(buf)
	}
}

// answerBufs recycles the buffers answers are encoded into: one written
// through the ResponseWriter interface would otherwise be allocated for
// every answer.
var answerBufs = sync.Pool{New: func() any { b := make([]byte, 0, 160); return &b }}

// appendJSON encodes the answer as json.Encoder does, newline included,
// without reflection or an encoder per answer.
func (a answer) appendJSON(b []byte) []byte {
	b = appendJSONString(append(b, `{"status":`...), a.Status)
	if a.EventID != "" {
		b = appendJSONString(append(b, `,"event_id":`...), a.EventID)
	}
	if a.Error != "" {
		b = appendJSONString(append(b, `,"error":`...), a.Error)
	}
	if a.Field != "" {
		b = appendJSONString(append(b, `,"field":`...), a.Field)
	}
	return append(b, "}\n"...)
}

// appendJSONString appends s quoted: as it is when it is printable ASCII
// with nothing to escape (status words, event ids, most messages), else as
// encoding/json escapes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// refusal is a request answered with an error, nothing stored.
type refusal struct {
	status int
	reason string // metric and log label
	msg    string
	field  string
}

func (rc *Receiver) refuse(w http.ResponseWriter, src netip.Addr, f refusal) {
	rc.instr.count(rc.cfg.Metrics, "avinode_webhook_refused_"+f.reason, "webhook deliveries refused: "+f.reason)
	ev := rc.log.Warn()
	if f.reason == "rate" {
		ev = rc.log.Debug()
	}
	ev.Str("reason", f.reason).Int("status", f.status).Str("source", src.String()).Str("detail", f.msg).
		Msg("webhook delivery refused; nothing stored")
	writeAnswer(w, f.status, answer{Status: "refused", Error: f.msg, Field: f.field})
}

// ServeHTTP takes one notification.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := rc.cfg.Now()
	// A body trickled in slowly must not hold the handler: the whole
	// request gets a deadline (the server's own bounds only its headers).
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyDeadline))
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		rc.refuse(w, netip.Addr{}, refusal{http.StatusMethodNotAllowed, "method", "notifications are POSTed", ""})
		return
	}
	rc.commit.arrive()
	queued := false
	defer func() {
		if !queued {
			rc.commit.leave()
		}
	}()
	src, err := clientAddr(r, rc.cfg.TrustedProxies)
	if err != nil {
		rc.refuse(w, src, refusal{http.StatusBadRequest, "source", err.Error(), ""})
		return
	}
	if len(rc.cfg.Allow) > 0 && !inAny(rc.cfg.Allow, src) {
		rc.refuse(w, src, refusal{http.StatusForbidden, "source", "this address may not deliver notifications", ""})
		return
	}
	if ok, wait := rc.limiter.allow(src, start); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait/time.Second)+1))
		rc.refuse(w, src, refusal{http.StatusTooManyRequests, "rate", "too many notifications from this address; deliver it again later", ""})
		return
	}
	if !rc.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="avinode-webhooks", charset="UTF-8"`)
		rc.refuse(w, src, refusal{http.StatusUnauthorized, "auth", "the client identifier or secret is wrong", ""})
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			rc.refuse(w, src, refusal{http.StatusUnsupportedMediaType, "body", "the body must be JSON (Content-Type: application/json)", ""})
			return
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rc.cfg.MaxBody))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			rc.refuse(w, src, refusal{http.StatusRequestEntityTooLarge, "body", fmt.Sprintf("the body is larger than %d bytes", rc.cfg.MaxBody), ""})
			return
		}
		rc.refuse(w, src, refusal{http.StatusBadRequest, "body", "the body could not be read", ""})
		return
	}
	verified := false
	if rc.cfg.SigningSecret != "" {
		if !rc.signed(r.Header.Get(rc.cfg.SignatureHeader), body) {
			rc.refuse(w, src, refusal{http.StatusUnauthorized, "signature", "the " + rc.cfg.SignatureHeader + " signature does not match the body", ""})
			return
		}
		verified = true
	}
	p, field, err := rc.parse(body)
	if err != nil {
		rc.refuse(w, src, refusal{http.StatusBadRequest, "payload", err.Error(), field})
		return
	}
	queued = true
	source := src.String()
	ev, err := rc.commit.store(store.Incoming{Pointer: p, Raw: body, Source: store.SourceAvinode,
		SourceIP: source, SignatureVerified: verified, MaxRetries: rc.cfg.MaxRetries, ReceivedAt: store.Now()})
	if err != nil {
		rc.instr.count(rc.cfg.Metrics, "avinode_webhook_store_errors", "webhook deliveries that could not be stored (answered 503)")
		rc.log.Error().Err(err).Str("avinode_event_id", p.ID).Msg("storing a webhook event failed; answered 503 so that Avinode delivers it again")
		w.Header().Set("Retry-After", "30")
		writeAnswer(w, http.StatusServiceUnavailable, answer{Status: "unavailable", Error: "the notification could not be stored; deliver it again"})
		return
	}
	if ev.Refused != nil {
		// The checks above let nothing through that the store refuses;
		// should one, it is the sender's to mend, not to deliver again.
		rc.refuse(w, src, refusal{http.StatusBadRequest, "payload", ev.Refused.Field + " holds a NUL character (U+0000), which is not accepted", ev.Refused.Field})
		return
	}
	status := "stored"
	if ev.Fresh {
		rc.instr.count(rc.cfg.Metrics, "avinode_webhook_received", "webhook events received and stored")
		rc.log.Info().Str("event_id", ev.ID).Str("avinode_event_id", p.ID).Str("type", p.Type).Str("source", source).
			Msg("webhook event stored")
		if rc.cfg.OnStored != nil {
			rc.cfg.OnStored()
		}
	} else {
		status = "duplicate"
		rc.instr.count(rc.cfg.Metrics, "avinode_webhook_duplicates", "webhook redeliveries of an event already stored")
		rc.log.Debug().Str("event_id", ev.ID).Str("avinode_event_id", p.ID).Int("deliveries", ev.Deliveries).
			Msg("webhook event delivered again; already stored")
	}
	writeAnswer(w, http.StatusOK, answer{Status: status, EventID: ev.ID})
	rc.instr.ack(rc.cfg.Now().Sub(start))
}

// authorized checks HTTP Basic in constant time: the digests of both parts
// are compared whole, so neither their content nor their length leaks.
func (rc *Receiver) authorized(r *http.Request) bool {
	var buf [192]byte
	user, pass, ok := basicAuth(r.Header.Get("Authorization"), &buf)
	u := sha256.Sum256(user)
	p := sha256.Sum256(pass)
	match := subtle.ConstantTimeCompare(u[:], rc.user[:]) & subtle.ConstantTimeCompare(p[:], rc.pass[:])
	return ok && match == 1
}

// basicAuth reads HTTP Basic credentials as Request.BasicAuth does, into
// one decoded buffer instead of strings: the caller's buf when they fit (so
// that it can stay on the caller's stack).
func basicAuth(header string, buf *[192]byte) (user, pass []byte, ok bool) {
	const prefix = "Basic "
	if len(header) < len(prefix) || !strings.EqualFold(header[:len(prefix)], prefix) {
		return nil, nil, false
	}
	enc := header[len(prefix):]
	dec := buf[:0]
	if n := base64.StdEncoding.DecodedLen(len(enc)); n > len(buf) {
		dec = make([]byte, 0, n)
	}
	n, err := base64.StdEncoding.Decode(dec[:cap(dec)], []byte(enc))
	if err != nil {
		return nil, nil, false
	}
	dec = dec[:n]
	i := bytes.IndexByte(dec, ':')
	if i < 0 {
		return nil, nil, false
	}
	return dec[:i], dec[i+1:], true
}

// signed checks the hex HMAC-SHA256 of body.
func (rc *Receiver) signed(header string, body []byte) bool {
	header = strings.TrimSpace(header)
	header = strings.TrimPrefix(header, "sha256=")
	var got [sha256.Size]byte
	if len(header) != hex.EncodedLen(sha256.Size) {
		return false
	}
	if _, err := hex.Decode(got[:], []byte(header)); err != nil {
		return false
	}
	m := rc.macs.Get().(*macState)
	m.mac.Reset()
	m.mac.Write(body)
	want := m.mac.Sum(m.sum[:0])
	ok := hmac.Equal(got[:], want)
	rc.macs.Put(m)
	return ok
}

// macState is a recycled HMAC and the buffer its sum is written to: a sum
// written to the stack through the hash.Hash interface would move to the
// heap on every request.
type macState struct {
	mac hash.Hash
	sum [sha256.Size]byte
}

// Sign returns the signature header value the receiver expects for body:
// for senders and tests.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// isID reports whether s is an Avinode id: a letter or digit, then at most
// 127 letters, digits and _.:- (what ^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$
// matches, checked without a regexp on every delivery).
func isID(s string) bool {
	return shaped(s, 128, false, "_.:-")
}

// isType reports whether s is a resource type: a letter, then at most 63
// letters, digits and _- (^[A-Za-z][A-Za-z0-9_-]{0,63}$).
func isType(s string) bool {
	return shaped(s, 64, true, "_-")
}

// shaped reports whether s is 1 to max bytes of ASCII letters and digits
// and the bytes of extra, beginning with a letter (or, unless letterFirst,
// a digit).
func shaped(s string, max int, letterFirst bool, extra string) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		digit := c >= '0' && c <= '9'
		switch {
		case i == 0 && !(letter || digit && !letterFirst):
			return false
		case !letter && !digit && strings.IndexByte(extra, c) < 0:
			return false
		}
	}
	return true
}

// parse validates a pointer: a JSON object (decoded within bounds, no key
// twice, no NUL character anywhere) with a string id, an absolute http(s)
// href and a type; tripId, when present, a short string. Other fields are
// allowed: Avinode adds fields without notice. It names the offending field
// in its error.
func (rc *Receiver) parse(body []byte) (store.Pointer, string, error) {
	var p store.Pointer
	if !utf8.Valid(body) {
		return p, "", errors.New("the body is not UTF-8 text")
	}
	// A flat object of plain strings — what Avinode posts — is read in
	// one pass into one string; anything else goes through the general
	// decoder, which gives the same verdict on it.
	flat, ok := flatStrings(body)
	look := flat.get
	if !ok {
		v, err := rc.decoding.Decode(body)
		if err != nil {
			return p, "", fmt.Errorf("the body is not a JSON document: %v", err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return p, "", errors.New("the body must be a JSON object")
		}
		// The body is stored as it came, and PostgreSQL holds no NUL in
		// text or jsonb: one would fail the batch it is committed with.
		// JSON writes it only as this escape (a flat object has none).
		if bytes.Contains(body, []byte(`\u0000`)) {
			if field, ok := nulField(obj, ""); ok {
				return p, field, fmt.Errorf("%s holds a NUL character (U+0000), which is not accepted", field)
			}
		}
		look = func(name string) (s string, present, isString bool) {
			v := obj[name]
			s, isString = v.(string)
			return s, v != nil, isString
		}
	}
	str := func(name string, required bool, max int) (string, error) {
		s, present, isString := look(name)
		if !present {
			if required {
				return "", fmt.Errorf("%s is missing", name)
			}
			return "", nil
		}
		if !isString {
			return "", fmt.Errorf("%s must be a string", name)
		}
		if required && s == "" {
			return "", fmt.Errorf("%s is empty", name)
		}
		if len(s) > max {
			return "", fmt.Errorf("%s is longer than %d bytes", name, max)
		}
		return s, nil
	}
	var err error
	if p.ID, err = str("id", true, 128); err != nil {
		return p, "id", err
	}
	if !isID(p.ID) {
		return p, "id", fmt.Errorf("id %q is not an Avinode id (such as arfq-12345678)", p.ID)
	}
	if p.Href, err = str("href", true, 2048); err != nil {
		return p, "href", err
	}
	if u, err := url.Parse(p.Href); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return p, "href", errors.New("href must be an absolute http(s) URL")
	}
	if p.Type, err = str("type", true, 64); err != nil {
		return p, "type", err
	}
	if !isType(p.Type) {
		return p, "type", fmt.Errorf("type %q is not a resource type (such as rfqs or tripmsgs)", p.Type)
	}
	if p.TripRef, err = str("tripId", false, 64); err != nil {
		return p, "tripId", err
	}
	for _, r := range p.TripRef {
		if r < 0x20 || r == 0x7f {
			return p, "tripId", errors.New("tripId holds control characters")
		}
	}
	return p, "", nil
}

// nulField names the first string or key of v, in key order, that holds a
// NUL character — as a path such as note, a.b or a.list[2] (with the NUL
// written \u0000 in a key) — and reports whether there is one.
func nulField(v any, path string) (string, bool) {
	switch v := v.(type) {
	case string:
		return path, strings.IndexByte(v, 0) >= 0
	case []any:
		for i, e := range v {
			if f, ok := nulField(e, path+"["+strconv.Itoa(i)+"]"); ok {
				return f, true
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			name := strings.ReplaceAll(k, "\x00", `\u0000`)
			if path != "" {
				name = path + "." + name
			}
			if strings.IndexByte(k, 0) >= 0 {
				return name, true
			}
			if f, ok := nulField(v[k], name); ok {
				return f, true
			}
		}
	}
	return "", false
}

// maxFlatKeys bounds the keys flatStrings reads: a longer object goes to
// the general decoder.
const maxFlatKeys = 16

// flatObject is a JSON object of plain strings: its text and where each
// key and value lies in it.
type flatObject struct {
	text   string
	fields [maxFlatKeys]struct{ key, val [2]int }
	n      int
}

// get is the value of the key name: whether it is there (and not null),
// and whether it is a string (always, here).
func (o *flatObject) get(name string) (s string, present, isString bool) {
	for _, f := range o.fields[:o.n] {
		if o.text[f.key[0]:f.key[1]] == name {
			return o.text[f.val[0]:f.val[1]], true, true
		}
	}
	return "", false, false
}

// flatStrings reads body when it is a JSON object whose values are all
// strings, and whose keys and values hold no escapes and no control
// characters, with no key twice (the caller has checked it is UTF-8); its
// values are substrings of one copy of body. It reports false for any other
// body, valid or not: that is for the general decoder.
func flatStrings(body []byte) (o flatObject, ok bool) {
	fields, n := &o.fields, 0
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return o, false
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		i++
	} else {
		for {
			if n == maxFlatKeys {
				return o, false
			}
			f := &fields[n]
			if f.key, i, ok = plainString(body, i); !ok {
				return o, false
			}
			if i = skipSpace(body, i); i >= len(body) || body[i] != ':' {
				return o, false
			}
			if f.val, i, ok = plainString(body, skipSpace(body, i+1)); !ok {
				return o, false
			}
			key := body[f.key[0]:f.key[1]]
			for _, g := range fields[:n] {
				if bytes.Equal(body[g.key[0]:g.key[1]], key) {
					return o, false
				}
			}
			n++
			if i = skipSpace(body, i); i >= len(body) {
				return o, false
			}
			if body[i] == '}' {
				i++
				break
			}
			if body[i] != ',' {
				return o, false
			}
			i = skipSpace(body, i+1)
		}
	}
	if skipSpace(body, i) != len(body) {
		return o, false
	}
	o.text, o.n = string(body), n
	return o, true
}

// plainString reads a JSON string at body[i] with no escape and no control
// character in it: the bounds of its content, and where it ends.
func plainString(body []byte, i int) (span [2]int, end int, ok bool) {
	if i >= len(body) || body[i] != '"' {
		return span, i, false
	}
	for j := i + 1; j < len(body); j++ {
		switch c := body[j]; {
		case c == '"':
			return [2]int{i + 1, j}, j + 1, true
		case c == '\\' || c < 0x20:
			return span, j, false
		}
	}
	return span, len(body), false
}

// skipSpace is the first index from i that is not JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
