// Package fakeavinode is an in-memory stand-in for Avinode's REST API, for
// tests: an httptest server that checks what the real API checks — the
// X-Avinode headers on every request, a SentTimestamp within five minutes of
// its clock, the bearer token (static or issued by its OAuth endpoint) and the
// AVI_JWT cookie, request bodies against the documented shapes (unknown
// fields refused) — and answers in Avinode's envelope, with fields clients do
// not know added to every document. Faults can be injected per route: a
// status with Retry-After, a delay, a dropped connection, malformed JSON, or
// an error reported in meta.errors with HTTP 200. Tests play the sellers with
// AddRFQ, Quote, Decline and SellerMessage. Webhook subscriptions are kept
// under /webhooks/settings; a seller's quote, decline or chat message is then
// posted to each active subscription to its event type as Avinode does: a
// thin pointer with HTTP Basic credentials, redelivered until answered 200.
package fakeavinode

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Config configures the fake.
type Config struct {
	APIToken  string
	AuthToken string
	// ClientID and ClientSecret are accepted at /oauth/token; TokenLife is
	// the issued tokens' expires_in (default 30 minutes).
	ClientID, ClientSecret string
	TokenLife              time.Duration
	// MaxSkew is how far X-Avinode-SentTimestamp may be from the fake's
	// clock (default five minutes).
	MaxSkew time.Duration
	// Now is the fake's clock (default time.Now).
	Now func() time.Time
}

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
	// Status is what the fake answered.
	Status int
}

// Fault is something to do instead of (or after) serving a request.
type Fault struct {
	// Method and Path select requests: Path is a prefix of the path below
	// /api (e.g. "/trips"); an empty Method matches every method.
	Method, Path string
	// Times is how many requests it applies to (default 1).
	Times int
	// Status answers with this status (and an error envelope).
	Status     int
	RetryAfter string
	// Code, with Status 0, answers 200 with this code in meta.errors.
	Code string
	// Malformed answers 200 with a body that is not JSON.
	Malformed bool
	// Drop closes the connection without an answer.
	Drop bool
	// Delay waits before answering (or until the client gives up).
	Delay time.Duration
	// After serves the request first, then applies the fault to the answer:
	// the request took effect, the client does not learn it.
	After bool
}

// Server is the fake API.
type Server struct {
	*httptest.Server
	cfg Config

	mu       sync.Mutex
	requests []Request
	faults   []*Fault
	tokens   map[string]time.Time
	seq      int
	trips    map[string]*trip
	rfqs     map[string]*rfq
	quotes   map[string]*quote
	messages map[string]*message
	watches  map[string]*watch
	airports []map[string]any
	legs     []map[string]any
	// started logs [method, path] of every request as it arrives.
	started [][2]string

	webhooks   []*webhookIn
	deliveries []*Delivery
	posting    sync.WaitGroup
	closed     chan struct{}
	closeOnce  sync.Once
}

// New starts the fake; it stops when the test ends.
func New(t interface {
	Cleanup(func())
}, cfg Config) *Server {
	if cfg.TokenLife == 0 {
		cfg.TokenLife = 30 * time.Minute
	}
	if cfg.MaxSkew == 0 {
		cfg.MaxSkew = 5 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, tokens: map[string]time.Time{}, trips: map[string]*trip{}, rfqs: map[string]*rfq{},
		quotes: map[string]*quote{}, messages: map[string]*message{}, watches: map[string]*watch{}, seq: 1000,
		closed: make(chan struct{})}
	s.Server = httptest.NewServer(s.routes())
	t.Cleanup(s.Close)
	return s
}

// Close stops redelivering notifications and shuts the fake down.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closed)
		s.Server.Close()
		s.posting.Wait()
	})
}

// BaseURL is the API root to configure a client with.
func (s *Server) BaseURL() string { return s.URL + "/api" }

// Inject adds faults, applied in order to matching requests.
func (s *Server) Inject(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range faults {
		if f.Times == 0 {
			f.Times = 1
		}
		s.faults = append(s.faults, &f)
	}
}

// Requests returns what the fake has received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count returns how many requests matched method and path prefix.
func (s *Server) Count(method, pathPrefix string) int {
	n := 0
	for _, r := range s.Requests() {
		if (method == "" || r.Method == method) && strings.HasPrefix(r.Path, pathPrefix) {
			n++
		}
	}
	return n
}

func (s *Server) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s-%d", prefix, 1000000000+s.seq)
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/oauth/token", s.token)
	api := map[string]func(w http.ResponseWriter, r *http.Request, body []byte) (int, any){
		"POST /api/trips":                    s.createTrip,
		"GET /api/trips/{id}":                s.getTrip,
		"PUT /api/trips/{id}/cancel":         s.cancelTrip,
		"GET /api/rfqs/{id}":                 s.getRFQs,
		"GET /api/quotes/{id}":               s.getQuote,
		"POST /api/tripmsgs/{id}/chat":       s.chat,
		"GET /api/tripmsgs/{id}":             s.getMessage,
		"GET /api/airports/search":           s.searchAirports,
		"POST /api/emptylegs/search":         s.searchEmptyLegs,
		"GET /api/emptylegs/watches":         s.listWatches,
		"POST /api/emptylegs/watches":        s.createWatch,
		"PUT /api/emptylegs/watches/{id}":    s.updateWatch,
		"GET /api/emptylegs/watches/{id}":    s.getWatch,
		"DELETE /api/emptylegs/watches/{id}": s.methodNotAllowed,
		"POST /api/webhooks/settings":        s.createWebhook,
		"GET /api/webhooks/settings":         s.listWebhooks,
		"PUT /api/webhooks/settings/{id}":    s.updateWebhook,
	}
	for pattern, h := range api {
		mux.HandleFunc(pattern, s.serve(h))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.record(r, body, http.StatusNotFound)
		writeEnvelope(w, http.StatusNotFound, nil, problem("ERR_NOT_FOUND", "no such resource"))
	})
	return mux
}

func (s *Server) methodNotAllowed(http.ResponseWriter, *http.Request, []byte) (int, any) {
	return http.StatusMethodNotAllowed, problem("ERR_METHOD", "method not allowed")
}

func (s *Server) record(r *http.Request, body []byte, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, "/api"),
		Query: r.URL.Query(), Header: r.Header.Clone(), Body: body, Status: status})
}

// fault takes the next fault matching r, if any.
func (s *Server) fault(r *http.Request) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := strings.TrimPrefix(r.URL.Path, "/api")
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == r.Method) && strings.HasPrefix(path, f.Path) {
			f.Times--
			if f.Times <= 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			c := *f
			return &c
		}
	}
	return nil
}

// errorDoc is what a handler returns to answer with meta.errors.
type errorDoc struct{ problems []map[string]string }

func problem(code, title string) errorDoc {
	return errorDoc{problems: []map[string]string{{"code": code, "title": title}}}
}

// serve wraps an API handler: authentication and headers, faults, the
// envelope, and the request log.
func (s *Server) serve(h func(http.ResponseWriter, *http.Request, []byte) (int, any)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		s.mu.Lock()
		s.started = append(s.started, [2]string{r.Method, strings.TrimPrefix(r.URL.Path, "/api")})
		s.mu.Unlock()
		if status, doc := s.authenticate(r); status != 0 {
			s.record(r, body, status)
			writeEnvelope(w, status, nil, doc)
			return
		}
		f := s.fault(r)
		if f != nil && !f.After {
			if done := s.applyFault(w, r, body, f); done {
				return
			}
		}
		s.mu.Lock()
		status, out := h(w, r, body)
		s.mu.Unlock()
		if f != nil && f.After {
			s.record(r, body, status)
			s.applyFault(w, r, body, f)
			return
		}
		s.record(r, body, status)
		if doc, ok := out.(errorDoc); ok {
			writeEnvelope(w, status, nil, doc)
			return
		}
		writeEnvelope(w, status, out, errorDoc{})
	}
}

// applyFault answers for the fault; it reports whether the request is done.
func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, body []byte, f *Fault) bool {
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			if !f.After {
				s.record(r, body, 0)
			}
			return true
		}
	}
	record := func(status int) {
		if !f.After {
			s.record(r, body, status)
		}
	}
	switch {
	case f.Drop:
		record(0)
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return true
			}
		}
		panic(http.ErrAbortHandler)
	case f.Malformed:
		record(http.StatusOK)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"meta":{"errors":[]},"data":{"id":"atrip-1",`)
		return true
	case f.Status != 0:
		record(f.Status)
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		writeEnvelope(w, f.Status, nil, problem("ERR_INJECTED", http.StatusText(f.Status)))
		return true
	case f.Code != "":
		record(http.StatusOK)
		writeEnvelope(w, http.StatusOK, nil, problem(f.Code, "injected soft error"))
		return true
	}
	return f.After
}

// writeEnvelope writes {"meta":{…},"data":…} plus a field no client knows.
func writeEnvelope(w http.ResponseWriter, status int, data any, errs errorDoc) {
	problems := errs.problems
	if problems == nil {
		problems = []map[string]string{}
	}
	env := map[string]any{
		"meta": map[string]any{"errors": problems, "warnings": []any{}, "infos": []any{},
			"serverTime": time.Now().UTC().Format(time.RFC3339)},
		"data":    data,
		"links":   map[string]any{"self": "https://sandbox.avinode.com/api"},
		"newTopX": map[string]any{"added": "without notice"},
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(env)
}

// authenticate checks the headers every request must carry.
func (s *Server) authenticate(r *http.Request) (int, errorDoc) {
	for _, h := range []string{"X-Avinode-ApiToken", "X-Avinode-SentTimestamp", "X-Avinode-Product", "X-Avinode-ApiVersion", "Authorization"} {
		if r.Header.Get(h) == "" {
			return http.StatusBadRequest, problem("ERR_INPUT_MISSING", "missing required header "+h)
		}
	}
	if r.Header.Get("X-Avinode-ApiToken") != s.cfg.APIToken {
		return http.StatusUnauthorized, problem("ERR_INPUT_GENERIC_INVALID", "unknown API token")
	}
	sent, err := time.Parse(time.RFC3339Nano, r.Header.Get("X-Avinode-SentTimestamp"))
	if err != nil {
		return http.StatusBadRequest, problem("ERR_INPUT_GENERIC_INVALID", "X-Avinode-SentTimestamp is not an ISO 8601 time")
	}
	if d := s.cfg.Now().Sub(sent); d > s.cfg.MaxSkew || d < -s.cfg.MaxSkew {
		return http.StatusUnauthorized, problem("ERR_INPUT_GENERIC_INVALID", "X-Avinode-SentTimestamp is too far from the server time")
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !s.validToken(token) {
		return http.StatusUnauthorized, problem("ERR_INPUT_GENERIC_INVALID", "invalid authentication token")
	}
	if c, err := r.Cookie("AVI_JWT"); err != nil || c.Value != token {
		return http.StatusUnauthorized, problem("ERR_INPUT_GENERIC_INVALID", "the AVI_JWT cookie does not match the bearer token")
	}
	return 0, errorDoc{}
}

func (s *Server) validToken(token string) bool {
	if s.cfg.AuthToken != "" && token == s.cfg.AuthToken {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[token]
	return ok && s.cfg.Now().Before(exp)
}

// RevokeTokens invalidates every token the OAuth endpoint issued.
func (s *Server) RevokeTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = map[string]time.Time{}
}

// token is the OAuth client-credentials endpoint.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	status := http.StatusOK
	defer func() { s.record(r, body, status) }()
	if f := s.fault(r); f != nil {
		status = f.Status
		writeEnvelope(w, f.Status, nil, problem("ERR_INJECTED", "token endpoint fault"))
		return
	}
	form, err := url.ParseQuery(string(body))
	if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || err != nil {
		status = http.StatusBadRequest
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"error":"invalid_request"}`)
		return
	}
	if form.Get("grant_type") != "client_credentials" || form.Get("client_id") != s.cfg.ClientID ||
		form.Get("client_secret") != s.cfg.ClientSecret || s.cfg.ClientID == "" {
		status = http.StatusUnauthorized
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"error":"invalid_client"}`)
		return
	}
	s.mu.Lock()
	s.seq++
	tok := fmt.Sprintf("oauth-token-%d", s.seq)
	s.tokens[tok] = s.cfg.Now().Add(s.cfg.TokenLife)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer",
		"expires_in": int(s.cfg.TokenLife / time.Second), "scope": "api"})
}

// decodeStrict decodes a request body, refusing fields the document does
// not have, as the API's schema validation does.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the document")
	}
	return nil
}

func invalid(format string, args ...any) (int, any) {
	return http.StatusBadRequest, problem("ERR_INPUT_GENERIC_INVALID", fmt.Sprintf(format, args...))
}

func missing(field string) (int, any) {
	return http.StatusBadRequest, problem("ERR_INPUT_MISSING", "missing required field "+field)
}

func notFound(kind, id string) (int, any) {
	return http.StatusNotFound, problem("ERR_NOT_FOUND", fmt.Sprintf("no %s %s", kind, id))
}
