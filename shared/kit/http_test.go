package kit_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

const (
	httpToken   = "single-token-0123456789abcdef"
	readerToken = "reader-token-0123456789abcdef"
	writerToken = "writer-token-0123456789abcdef"
	// legacyVersion is a protocol revision that still has the initialize
	// handshake and Mcp-Session-Id sessions.
	legacyVersion = "2025-06-18"
)

var legacyInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + legacyVersion +
	`","capabilities":{},"clientInfo":{"name":"kit-test","version":"1"}}}`

// startHTTP serves s's HTTP handler on an httptest server (which listens on
// 127.0.0.1) and returns its base URL.
func startHTTP(t *testing.T, s *kit.Server, o kit.HTTPOptions) string {
	t.Helper()
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	h, shutdown, err := s.HTTPHandler(o)
	if err != nil {
		t.Fatalf("HTTPHandler: %v", err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shutdown(ctx)
		ts.Close()
	})
	return ts.URL
}

func policyWithTokens(t *testing.T) *acl.Policy {
	t.Helper()
	p := mustPolicy(t)
	if err := p.AddToken("reader", readerToken); err != nil {
		t.Fatal(err)
	}
	if err := p.AddToken("writer", writerToken); err != nil {
		t.Fatal(err)
	}
	return p
}

// httpResult is a raw HTTP answer; Msg is the JSON-RPC message in the body
// (plain JSON or the last event of an SSE stream), when there is one.
type httpResult struct {
	Status int
	Header http.Header
	Body   string
	Msg    map[string]any
}

func (r httpResult) errorCode() float64 {
	e, _ := r.Msg["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// do sends one raw request. hdr may hold "Host" (sets the Host header).
func do(t *testing.T, method, url, token, sid, body string, hdr map[string]string) httpResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", legacyVersion)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	r := httpResult{Status: resp.StatusCode, Header: resp.Header, Body: string(raw)}
	payload := raw
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		payload = nil
		for _, line := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				payload = []byte(d)
			}
		}
	}
	var m map[string]any
	if json.Unmarshal(payload, &m) == nil {
		r.Msg = m
	}
	return r
}

func post(t *testing.T, base, token, sid, body string) httpResult {
	t.Helper()
	return do(t, http.MethodPost, base+"/mcp", token, sid, body, nil)
}

// initSession runs a legacy initialize and returns the new session id.
func initSession(t *testing.T, base, token string) string {
	t.Helper()
	r := post(t, base, token, "", legacyInit)
	if r.Status != http.StatusOK {
		t.Fatalf("initialize: status %d: %s", r.Status, r.Body)
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize returned no Mcp-Session-Id (body %s)", r.Body)
	}
	return sid
}

func rpcCall(id int, method string, params string) string {
	if params == "" {
		params = "{}"
	}
	b, _ := json.Marshal(id)
	return `{"jsonrpc":"2.0","id":` + string(b) + `,"method":"` + method + `","params":` + params + `}`
}

// rawToolNames decodes a tools/list answer.
func rawToolNames(t *testing.T, r httpResult) []string {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("tools/list: status %d: %s", r.Status, r.Body)
	}
	res, _ := r.Msg["result"].(map[string]any)
	tools, ok := res["tools"].([]any)
	if !ok {
		t.Fatalf("tools/list: no tools in %s", r.Body)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	sort.Strings(names)
	return names
}

// dial connects a real mcp-go streamable HTTP client. legacy pins the
// initialize handshake (sessions); otherwise the client negotiates the
// newest protocol.
func dial(t *testing.T, base, token string, legacy bool) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(base+"/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "kit-test", Version: "1"}
	if legacy {
		req.Params.ProtocolVersion = legacyVersion
	} else {
		req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

func clientToolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	return names
}

func clientCall(t *testing.T, c *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

func calls(s *kit.Server, tool string) uint64 {
	for _, ts := range s.Engine().Metrics().Snapshot() {
		if ts.Tool == tool {
			return ts.Calls
		}
	}
	return 0
}

func TestHTTPAuthentication(t *testing.T) {
	s := newServer(t, kit.Options{})
	base := startHTTP(t, s, kit.HTTPOptions{AuthToken: httpToken})

	for name, token := range map[string]string{"no token": "", "wrong token": "not-the-token-0123456789"} {
		t.Run(name, func(t *testing.T) {
			r := post(t, base, token, "", legacyInit)
			if r.Status != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", r.Status)
			}
			if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
			}
			if r.Msg["jsonrpc"] != "2.0" || r.errorCode() != -32001 {
				t.Fatalf("body is not a JSON-RPC error: %s", r.Body)
			}
			if r.Header.Get("Mcp-Session-Id") != "" {
				t.Fatal("an unauthenticated initialize created a session")
			}
		})
	}
	t.Run("other schemes", func(t *testing.T) {
		for _, h := range []string{"Basic " + httpToken, "Bearer", "Bearer ", httpToken} {
			r := do(t, http.MethodPost, base+"/mcp", "", "", legacyInit, map[string]string{"Authorization": h})
			if r.Status != http.StatusUnauthorized {
				t.Errorf("Authorization %q: status %d, want 401", h, r.Status)
			}
		}
	})
	t.Run("scheme is case-insensitive", func(t *testing.T) {
		r := do(t, http.MethodPost, base+"/mcp", "", "", legacyInit, map[string]string{"Authorization": "bearer " + httpToken})
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	})
	for _, legacy := range []bool{true, false} {
		name := "real client, newest protocol"
		if legacy {
			name = "real client, legacy handshake"
		}
		t.Run(name, func(t *testing.T) {
			c := dial(t, base, httpToken, legacy)
			names := clientToolNames(t, c)
			if strings.Join(names, ",") != strings.Join(s.ToolNames(), ",") {
				t.Fatalf("tools/list %v, want %v", names, s.ToolNames())
			}
			var out struct {
				Text string `json:"text"`
			}
			mcptest.OK(t, clientCall(t, c, "echo", map[string]any{"text": "hi", "count": 2}), &out)
			if out.Text != "hihi" {
				t.Fatalf("echo returned %q", out.Text)
			}
			mcptest.FailCode(t, clientCall(t, c, "echo", map[string]any{}), mcperr.Validation)
		})
	}
}

func TestHTTPPolicy(t *testing.T) {
	s := newServer(t, kit.Options{Policy: policyWithTokens(t)})
	base := startHTTP(t, s, kit.HTTPOptions{})

	t.Run("reader", func(t *testing.T) {
		c := dial(t, base, readerToken, true)
		if got := strings.Join(clientToolNames(t, c), ","); got != "echo,slow" {
			t.Fatalf("reader sees %q, want echo,slow", got)
		}
		var out struct {
			Agent string `json:"agent"`
		}
		mcptest.OK(t, clientCall(t, c, "echo", map[string]any{"text": "x"}), &out)
		if out.Agent != "reader" {
			t.Fatalf("call ran as agent %q, want reader", out.Agent)
		}
		b := mcptest.FailCode(t, clientCall(t, c, "write", map[string]any{}), mcperr.PermissionDeny)
		if !strings.Contains(b.Message, "reader") {
			t.Fatalf("message %q should name the agent", b.Message)
		}
	})
	t.Run("writer", func(t *testing.T) {
		c := dial(t, base, writerToken, false)
		if got := strings.Join(clientToolNames(t, c), ","); got != "echo,write" {
			t.Fatalf("writer sees %q, want echo,write", got)
		}
		mcptest.OK(t, clientCall(t, c, "write", map[string]any{}), nil)
		mcptest.FailCode(t, clientCall(t, c, "slow", map[string]any{}), mcperr.PermissionDeny)
	})
	t.Run("unknown token", func(t *testing.T) {
		r := post(t, base, "stranger-token-0123456789abcdef", "", legacyInit)
		if r.Status != http.StatusUnauthorized || r.errorCode() != -32001 {
			t.Fatalf("status %d body %s, want 401 JSON-RPC error", r.Status, r.Body)
		}
	})
}

func TestHTTPSessionBinding(t *testing.T) {
	s := newServer(t, kit.Options{Policy: policyWithTokens(t)})
	base := startHTTP(t, s, kit.HTTPOptions{})
	list := rpcCall(2, "tools/list", "")

	t.Run("requests before initialize are refused", func(t *testing.T) {
		r := post(t, base, readerToken, "", rpcCall(1, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`))
		if r.Status != http.StatusBadRequest {
			t.Fatalf("tools/call without a session: status %d, want 400 (%s)", r.Status, r.Body)
		}
		r = post(t, base, readerToken, "mcp-session-made-up", list)
		if r.Status != http.StatusNotFound {
			t.Fatalf("tools/list with an unknown session: status %d, want 404", r.Status)
		}
		if n := calls(s, "echo"); n != 0 {
			t.Fatalf("echo ran %d times without a session", n)
		}
	})

	sidA := initSession(t, base, readerToken)
	if names := rawToolNames(t, post(t, base, readerToken, sidA, list)); strings.Join(names, ",") != "echo,slow" {
		t.Fatalf("reader's session lists %v", names)
	}

	t.Run("another agent's token cannot use the session", func(t *testing.T) {
		r := post(t, base, writerToken, sidA, list)
		if r.Status != http.StatusNotFound {
			t.Fatalf("POST: status %d, want 404 (%s)", r.Status, r.Body)
		}
		r = post(t, base, writerToken, sidA, rpcCall(3, "tools/call", `{"name":"write","arguments":{}}`))
		if r.Status != http.StatusNotFound || calls(s, "write") != 0 {
			t.Fatalf("tools/call: status %d, write calls %d", r.Status, calls(s, "write"))
		}
	})
	t.Run("another agent cannot listen on the session", func(t *testing.T) {
		// The standalone GET stream carries server-to-client messages of
		// the session: another identity must not open one on it.
		r := do(t, http.MethodGet, base+"/mcp", writerToken, sidA, "", nil)
		if r.Status != http.StatusNotFound {
			t.Fatalf("GET with another agent's session: status %d, want 404", r.Status)
		}
		r = do(t, http.MethodGet, base+"/mcp", writerToken, "", "", nil)
		if r.Status != http.StatusBadRequest {
			t.Fatalf("GET without a session: status %d, want 400", r.Status)
		}
		// Claiming the newest protocol (which has no GET stream) opens nothing.
		r = do(t, http.MethodGet, base+"/mcp", writerToken, "", "", map[string]string{"Mcp-Protocol-Version": mcp.LATEST_PROTOCOL_VERSION, "Mcp-Session-Id": sidA})
		if r.Status != http.StatusMethodNotAllowed {
			t.Fatalf("GET claiming %s: status %d, want 405", mcp.LATEST_PROTOCOL_VERSION, r.Status)
		}
	})
	t.Run("the owner can listen on its session", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		openEventStream(ctx, t, base+"/mcp", readerToken, sidA)
	})
	t.Run("another agent cannot delete the session", func(t *testing.T) {
		r := do(t, http.MethodDelete, base+"/mcp", writerToken, sidA, "", nil)
		if r.Status == http.StatusOK {
			t.Fatal("DELETE with another agent's token succeeded")
		}
		if got := post(t, base, readerToken, sidA, list); got.Status != http.StatusOK {
			t.Fatalf("session unusable after a foreign DELETE: %d", got.Status)
		}
	})
	t.Run("DELETE terminates", func(t *testing.T) {
		r := do(t, http.MethodDelete, base+"/mcp", readerToken, sidA, "", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("DELETE: status %d (%s)", r.Status, r.Body)
		}
		r = post(t, base, readerToken, sidA, list)
		if r.Status != http.StatusNotFound {
			t.Fatalf("use after DELETE: status %d, want 404", r.Status)
		}
	})
	t.Run("real client session id", func(t *testing.T) {
		c := dial(t, base, writerToken, true)
		sid := c.GetSessionId()
		if sid == "" {
			t.Fatal("legacy client has no session id")
		}
		if r := post(t, base, readerToken, sid, list); r.Status != http.StatusNotFound {
			t.Fatalf("reader using writer's session: status %d, want 404", r.Status)
		}
		if got := strings.Join(clientToolNames(t, c), ","); got != "echo,write" {
			t.Fatalf("writer's client sees %q", got)
		}
	})
}

func TestHTTPMaxSessions(t *testing.T) {
	s := newServer(t, kit.Options{})
	base := startHTTP(t, s, kit.HTTPOptions{AuthToken: httpToken, MaxSessions: 2})
	first := initSession(t, base, httpToken)
	initSession(t, base, httpToken)

	r := post(t, base, httpToken, "", legacyInit)
	if r.Status != http.StatusServiceUnavailable || r.errorCode() == 0 {
		t.Fatalf("third initialize: status %d body %s, want 503 JSON-RPC error", r.Status, r.Body)
	}
	if !strings.Contains(r.Body, "limit 2") {
		t.Fatalf("503 body should state the limit: %s", r.Body)
	}
	// An initialize always creates a session, whatever header it carries.
	r = post(t, base, httpToken, first, legacyInit)
	if r.Status != http.StatusServiceUnavailable {
		t.Fatalf("initialize carrying an Mcp-Session-Id: status %d, want 503", r.Status)
	}
	// A GET stream cannot mint sessions past the limit either.
	if r := do(t, http.MethodGet, base+"/mcp", httpToken, "", "", nil); r.Status == http.StatusOK {
		t.Fatal("GET without a session opened a stream")
	}
	// Existing sessions keep working.
	if r := post(t, base, httpToken, first, rpcCall(2, "tools/list", "")); r.Status != http.StatusOK {
		t.Fatalf("existing session refused: %d", r.Status)
	}
	health := do(t, http.MethodGet, base+"/healthz", "", "", "", nil)
	if health.Msg["sessions"] != float64(2) {
		t.Fatalf("healthz sessions = %v, want 2", health.Msg["sessions"])
	}
	// Closing one frees room.
	if r := do(t, http.MethodDelete, base+"/mcp", httpToken, first, "", nil); r.Status != http.StatusOK {
		t.Fatalf("DELETE: %d", r.Status)
	}
	initSession(t, base, httpToken)
}

func TestHTTPIdleSessionExpires(t *testing.T) {
	// The session table is tested with a fake clock in sessions_test.go;
	// this checks the HTTP answer with a real, tiny idle time.
	s := newServer(t, kit.Options{})
	base := startHTTP(t, s, kit.HTTPOptions{AuthToken: httpToken, MaxSessions: 1, SessionIdle: 30 * time.Millisecond})
	// (Whether a second initialize is refused before expiry depends on
	// timing here; TestSessionCap covers it with a fake clock.)
	sid := initSession(t, base, httpToken)
	time.Sleep(60 * time.Millisecond)
	r := post(t, base, httpToken, sid, rpcCall(2, "tools/list", ""))
	if r.Status != http.StatusNotFound {
		t.Fatalf("expired session: status %d, want 404", r.Status)
	}
	// The expired session no longer counts against MaxSessions=1.
	initSession(t, base, httpToken)
}

func TestHTTPDNSRebinding(t *testing.T) {
	s := newServer(t, kit.Options{})
	metricsGET := func(t *testing.T, base string, hdr map[string]string) int {
		t.Helper()
		return do(t, http.MethodGet, base+"/metrics", httpToken, "", "", hdr).Status
	}

	t.Run("loopback listener", func(t *testing.T) {
		base := startHTTP(t, s, kit.HTTPOptions{Addr: "127.0.0.1:0", AuthToken: httpToken})
		cases := []struct {
			hdr  map[string]string
			want int
		}{
			{nil, http.StatusOK},
			{map[string]string{"Host": "localhost:9999"}, http.StatusOK},
			{map[string]string{"Host": "[::1]:9999"}, http.StatusOK},
			{map[string]string{"Host": "evil.example"}, http.StatusForbidden},
			{map[string]string{"Host": "evil.example:80"}, http.StatusForbidden},
			{map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
			{map[string]string{"Origin": "http://localhost.evil.example"}, http.StatusForbidden},
			{map[string]string{"Origin": "null"}, http.StatusForbidden},
			{map[string]string{"Origin": "file:///etc/passwd"}, http.StatusForbidden},
			{map[string]string{"Origin": "http://localhost:1234"}, http.StatusOK},
			{map[string]string{"Origin": "https://127.0.0.1"}, http.StatusOK},
			{map[string]string{"Origin": "http://[::1]:8080"}, http.StatusOK},
		}
		for _, tc := range cases {
			if got := metricsGET(t, base, tc.hdr); got != tc.want {
				t.Errorf("%v: status %d, want %d", tc.hdr, got, tc.want)
			}
		}
		// The checks come before authentication, and cover /mcp and /healthz.
		if r := post(t, base, "", "", legacyInit); r.Status != http.StatusUnauthorized {
			t.Fatalf("sanity: %d", r.Status)
		}
		if r := do(t, http.MethodPost, base+"/mcp", "", "", legacyInit, map[string]string{"Origin": "http://evil.example"}); r.Status != http.StatusForbidden {
			t.Errorf("/mcp with a foreign origin: %d, want 403", r.Status)
		}
		if r := do(t, http.MethodPost, base+"/mcp", httpToken, "", legacyInit, map[string]string{"Host": "evil.example"}); r.Status != http.StatusForbidden {
			t.Errorf("/mcp with a foreign host: %d, want 403", r.Status)
		}
		if r := do(t, http.MethodGet, base+"/healthz", "", "", "", map[string]string{"Host": "evil.example"}); r.Status != http.StatusForbidden {
			t.Errorf("/healthz with a foreign host: %d, want 403", r.Status)
		}
	})
	// Each listener set-up, the Host and Origin headers it accepts (200 on
	// /metrics) and refuses (403).
	type hostCase struct {
		hdr  map[string]string
		want int
	}
	for _, tc := range []struct {
		name  string
		o     kit.HTTPOptions
		cases []hostCase
	}{
		{"allowed origins and hosts extend the loopback set",
			kit.HTTPOptions{Addr: "127.0.0.1:0", AllowedOrigins: []string{"https://app.example/"}, AllowedHosts: []string{"mcp.example"}},
			[]hostCase{
				{map[string]string{"Origin": "https://app.example"}, http.StatusOK},
				{map[string]string{"Origin": "https://APP.example"}, http.StatusOK},
				{map[string]string{"Origin": "http://app.example"}, http.StatusForbidden},
				{map[string]string{"Origin": "http://localhost:1234"}, http.StatusOK},
				{map[string]string{"Host": "mcp.example:8443"}, http.StatusOK},
				{map[string]string{"Host": "localhost"}, http.StatusOK},
				{map[string]string{"Host": "other.example"}, http.StatusForbidden},
			}},
		// The handler is mounted on a loopback test listener, but configured
		// as if listening on 0.0.0.0.
		{"all-interfaces listener", kit.HTTPOptions{Addr: "0.0.0.0:8080"},
			[]hostCase{
				{map[string]string{"Host": "mcp.internal:8080"}, http.StatusOK},
				{map[string]string{"Origin": "http://localhost:1234"}, http.StatusForbidden},
			}},
		{"all-interfaces listener with allowed hosts", kit.HTTPOptions{Addr: "0.0.0.0:8080", AllowedHosts: []string{"mcp.internal"}},
			[]hostCase{
				{map[string]string{"Host": "mcp.internal:8080"}, http.StatusOK},
				{map[string]string{"Host": "evil.example"}, http.StatusForbidden},
			}},
		// The listen host itself is always accepted; AllowedHosts adds to it.
		{"specific non-loopback listener", kit.HTTPOptions{Addr: "10.1.2.3:8080", AllowedHosts: []string{"mcp.example"}},
			[]hostCase{
				{map[string]string{"Host": "10.1.2.3:8080"}, http.StatusOK},
				{map[string]string{"Host": "mcp.example"}, http.StatusOK},
				{map[string]string{"Host": "localhost:8080"}, http.StatusForbidden},
				{map[string]string{"Host": "evil.example"}, http.StatusForbidden},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.AuthToken = httpToken
			base := startHTTP(t, s, tc.o)
			for _, c := range tc.cases {
				if got := metricsGET(t, base, c.hdr); got != c.want {
					t.Errorf("%v: status %d, want %d", c.hdr, got, c.want)
				}
			}
		})
	}
}

// openEventStream GETs url as an event stream (with a session id when sid
// is set), checks that one opened, and closes it when the test ends.
func openEventStream(ctx context.Context, t *testing.T, url, token, sid string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET %s: status %d, content type %q", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return resp
}

func TestHTTPBodyLimit(t *testing.T) {
	s := newServer(t, kit.Options{Limits: kit.Limits{MaxMessageBytes: int64(len(legacyInit) + 10)}})
	base := startHTTP(t, s, kit.HTTPOptions{AuthToken: httpToken})
	if r := post(t, base, httpToken, "", legacyInit); r.Status != http.StatusOK {
		t.Fatalf("body under the limit: status %d", r.Status)
	}
	sid := initSession(t, base, httpToken)
	big := rpcCall(2, "tools/call", `{"name":"echo","arguments":{"text":"`+strings.Repeat("x", 200)+`"}}`)
	r := post(t, base, httpToken, sid, big)
	if r.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", r.Status)
	}
	if r.errorCode() != -32600 || !strings.Contains(r.Body, "larger than") {
		t.Fatalf("413 body is not the JSON-RPC error: %s", r.Body)
	}
	if calls(s, "echo") != 0 {
		t.Fatal("the oversized call ran")
	}
}

func TestHTTPHealthAndMetrics(t *testing.T) {
	s := newServer(t, kit.Options{})
	base := startHTTP(t, s, kit.HTTPOptions{AuthToken: httpToken})

	h := do(t, http.MethodGet, base+"/healthz", "", "", "", nil)
	if h.Status != http.StatusOK || !strings.HasPrefix(h.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("healthz: status %d, content type %q", h.Status, h.Header.Get("Content-Type"))
	}
	if h.Msg["status"] != "ok" || h.Msg["server"] != "test" || h.Msg["version"] != "1.0" || h.Msg["tools"] != float64(len(s.ToolNames())) {
		t.Fatalf("healthz body %s", h.Body)
	}

	if r := do(t, http.MethodGet, base+"/metrics", "", "", "", nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("metrics without a token: %d, want 401", r.Status)
	}
	if r := do(t, http.MethodGet, base+"/metrics", "wrong-token-0123456789", "", "", nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("metrics with a wrong token: %d, want 401", r.Status)
	}

	c := dial(t, base, httpToken, true)
	mcptest.OK(t, clientCall(t, c, "echo", map[string]any{"text": "x"}), nil)
	mcptest.FailCode(t, clientCall(t, c, "notfound", map[string]any{}), mcperr.NotFound)

	m := do(t, http.MethodGet, base+"/metrics", httpToken, "", "", nil)
	if m.Status != http.StatusOK || !strings.HasPrefix(m.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("metrics: status %d, content type %q", m.Status, m.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`mcp_tool_calls_total{server="test",tool="echo"} 1`,
		`mcp_tool_calls_total{server="test",tool="write"} 0`,
		`mcp_tool_errors_total{code="NOT_FOUND",server="test",tool="notfound"} 1`,
		`mcp_tool_duration_seconds_count{server="test",tool="echo"} 1`,
		`mcp_uptime_seconds{server="test"}`,
	} {
		if !strings.Contains(m.Body, want) {
			t.Errorf("metrics lack %q:\n%s", want, m.Body)
		}
	}
}

func TestCheckHTTPOptions(t *testing.T) {
	plain := newServer(t, kit.Options{})
	withTokens := newServer(t, kit.Options{Policy: policyWithTokens(t)})
	noTokens := newServer(t, kit.Options{Policy: mustPolicy(t)})
	cases := []struct {
		name    string
		s       *kit.Server
		o       kit.HTTPOptions
		wantErr string
	}{
		{"no token", plain, kit.HTTPOptions{Addr: "127.0.0.1:0"}, "needs a bearer token"},
		{"policy without tokens", noTokens, kit.HTTPOptions{Addr: "127.0.0.1:0"}, "needs a bearer token"},
		{"no auth on all interfaces", plain, kit.HTTPOptions{Addr: "0.0.0.0:8080", NoAuth: true}, "loopback"},
		{"no auth on empty host", plain, kit.HTTPOptions{Addr: ":8080", NoAuth: true}, "loopback"},
		{"no auth on a LAN address", plain, kit.HTTPOptions{Addr: "192.168.1.5:8080", NoAuth: true}, "loopback"},
		{"no auth with a policy", withTokens, kit.HTTPOptions{Addr: "127.0.0.1:0", NoAuth: true}, "cannot be combined"},
		{"single token with a policy", withTokens, kit.HTTPOptions{Addr: "127.0.0.1:0", AuthToken: httpToken}, "MCP_AUTH_TOKEN"},
		{"bad address", plain, kit.HTTPOptions{Addr: "no-port", AuthToken: httpToken}, "listen address"},
		{"single token", plain, kit.HTTPOptions{Addr: "0.0.0.0:8080", AuthToken: httpToken}, ""},
		{"policy tokens", withTokens, kit.HTTPOptions{Addr: "0.0.0.0:8080"}, ""},
		{"no auth on loopback", plain, kit.HTTPOptions{Addr: "127.0.0.1:0", NoAuth: true}, ""},
		{"no auth on localhost", plain, kit.HTTPOptions{Addr: "localhost:0", NoAuth: true}, ""},
		{"no auth on ::1", plain, kit.HTTPOptions{Addr: "[::1]:0", NoAuth: true}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, shutdown, err := tc.s.HTTPHandler(tc.o)
			if tc.wantErr == "" {
				if err != nil || h == nil || shutdown == nil {
					t.Fatalf("unexpected error %v", err)
				}
				shutdown(context.Background())
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	t.Run("no auth serves without a token", func(t *testing.T) {
		base := startHTTP(t, plain, kit.HTTPOptions{Addr: "127.0.0.1:0", NoAuth: true})
		sid := initSession(t, base, "")
		if names := rawToolNames(t, post(t, base, "", sid, rpcCall(2, "tools/list", ""))); len(names) != len(plain.ToolNames()) {
			t.Fatalf("tools/list %v", names)
		}
		if r := do(t, http.MethodGet, base+"/metrics", "", "", "", nil); r.Status != http.StatusOK {
			t.Fatalf("metrics: %d", r.Status)
		}
	})
}

func TestServeHTTP(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	var finished atomic.Bool
	hold := kit.Tool{
		Name: "hold", Description: "Block until released.", Effect: kit.ReadOnly,
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			close(started)
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			finished.Store(true)
			return "done", nil
		},
	}
	s, err := kit.New(kit.Info{Name: "serve"}, []kit.Tool{hold}, kit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- s.ServeHTTP(ctx, kit.HTTPOptions{Addr: "127.0.0.1:0", AuthToken: httpToken}, func(a net.Addr) { addrc <- a })
	}()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-errc:
		t.Fatalf("ServeHTTP: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("ServeHTTP never became ready")
	}
	base := "http://" + addr.String()
	if r := do(t, http.MethodGet, base+"/healthz", "", "", "", nil); r.Status != http.StatusOK {
		t.Fatalf("healthz: %d", r.Status)
	}
	c := dial(t, base, httpToken, false)

	type result struct {
		res *mcp.CallToolResult
		err error
	}
	callc := make(chan result, 1)
	go func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		req := mcp.CallToolRequest{}
		req.Params.Name = "hold"
		res, err := c.CallTool(cctx, req)
		callc <- result{res, err}
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("tool call never started")
	}

	cancel()
	select {
	case err := <-errc:
		t.Fatalf("ServeHTTP returned (%v) while a call was in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)

	select {
	case r := <-callc:
		if r.err != nil {
			t.Fatalf("in-flight call failed: %v", r.err)
		}
		if mcptest.Text(r.res) != "done" || r.res.IsError {
			t.Fatalf("in-flight call result %q", mcptest.Text(r.res))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("in-flight call never completed")
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("ServeHTTP after shutdown: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeHTTP did not return after ctx was cancelled")
	}
	if !finished.Load() {
		t.Fatal("ServeHTTP returned before the handler finished")
	}
	if conn, err := net.DialTimeout("tcp", addr.String(), time.Second); err == nil {
		conn.Close()
		t.Fatal("listener still accepts connections after shutdown")
	}
}

func TestServeHTTPIdleShutdownAndErrors(t *testing.T) {
	s := newServer(t, kit.Options{})
	t.Run("idle server stops promptly", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		addrc := make(chan net.Addr, 1)
		errc := make(chan error, 1)
		go func() {
			errc <- s.ServeHTTP(ctx, kit.HTTPOptions{Addr: "127.0.0.1:0", AuthToken: httpToken, SessionIdle: time.Minute}, func(a net.Addr) { addrc <- a })
		}()
		addr := <-addrc
		// A session and a kept-alive connection must not hold shutdown up,
		// nor a connection that never sent a request (net/http counts one
		// as busy until it is 5 s old; Node's fetch keeps spare ones open).
		initSession(t, "http://"+addr.String(), httpToken)
		unused, err := net.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		defer unused.Close()
		time.Sleep(50 * time.Millisecond) // accepted
		start := time.Now()
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Fatalf("ServeHTTP: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("ServeHTTP did not return")
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("shutdown took %s", d)
		}
	})
	t.Run("bad options", func(t *testing.T) {
		err := s.ServeHTTP(context.Background(), kit.HTTPOptions{Addr: "127.0.0.1:0"}, nil)
		if err == nil || !strings.Contains(err.Error(), "bearer token") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("address in use", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		err = s.ServeHTTP(context.Background(), kit.HTTPOptions{Addr: ln.Addr().String(), AuthToken: httpToken}, nil)
		if err == nil || !strings.Contains(err.Error(), "listen on") {
			t.Fatalf("err %v", err)
		}
	})
}

func TestHTTPSSE(t *testing.T) {
	s := newServer(t, kit.Options{})
	t.Run("disabled by default", func(t *testing.T) {
		base := startHTTP(t, s, kit.HTTPOptions{AuthToken: httpToken})
		if r := do(t, http.MethodGet, base+"/sse", httpToken, "", "", nil); r.Status != http.StatusNotFound {
			t.Fatalf("/sse without the option: %d, want 404", r.Status)
		}
		if r := do(t, http.MethodPost, base+"/message", httpToken, "", "{}", nil); r.Status != http.StatusNotFound {
			t.Fatalf("/message without the option: %d, want 404", r.Status)
		}
	})
	t.Run("enabled", func(t *testing.T) {
		base := startHTTP(t, s, kit.HTTPOptions{AuthToken: httpToken, SSE: true})
		if r := do(t, http.MethodGet, base+"/sse", "", "", "", nil); r.Status != http.StatusUnauthorized {
			t.Fatalf("/sse without a token: %d, want 401", r.Status)
		}
		if r := do(t, http.MethodGet, base+"/sse", httpToken, "", "", map[string]string{"Host": "evil.example"}); r.Status != http.StatusForbidden {
			t.Fatalf("/sse with a foreign host: %d, want 403", r.Status)
		}
		if r := do(t, http.MethodPost, base+"/message?sessionId=x", "", "", "{}", nil); r.Status != http.StatusUnauthorized {
			t.Fatalf("/message without a token: %d, want 401", r.Status)
		}

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp := openEventStream(ctx, t, base+"/sse", httpToken, "")
		var event []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if sc.Text() == "" {
				break
			}
			event = append(event, sc.Text())
		}
		if len(event) < 2 || event[0] != "event: endpoint" || !strings.Contains(event[1], "/message?sessionId=") {
			t.Fatalf("first event %q, want the endpoint event", event)
		}
		cancel()
	})
}

// TestHTTPSSEMessageBoundToAgent: a POST to /message is admitted only for a
// session the caller's own agent opened, and SSE sessions count against the cap.
func TestHTTPSSEMessageBoundToAgent(t *testing.T) {
	s := newServer(t, kit.Options{Policy: policyWithTokens(t)})
	base := startHTTP(t, s, kit.HTTPOptions{SSE: true, MaxSessions: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	req.Header.Set("Authorization", "Bearer "+readerToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var endpoint string
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			endpoint = line
			break
		}
	}
	_, query, ok := strings.Cut(endpoint, "?")
	if !ok {
		t.Fatalf("no endpoint event, got %q", endpoint)
	}
	init := rpcCall(1, "initialize", `{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	if r := do(t, http.MethodPost, base+"/message?"+query, writerToken, "", init, nil); r.Status != http.StatusNotFound {
		t.Fatalf("writer posting into reader's SSE session: %d, want 404", r.Status)
	}
	if r := do(t, http.MethodPost, base+"/message?sessionId=made-up", readerToken, "", init, nil); r.Status != http.StatusNotFound {
		t.Fatalf("unknown SSE session: %d, want 404", r.Status)
	}
	if r := do(t, http.MethodPost, base+"/message?"+query, readerToken, "", init, map[string]string{"Content-Type": "text/plain"}); r.Status != http.StatusUnsupportedMediaType {
		t.Fatalf("a message not declared application/json: %d, want 415", r.Status)
	}
	if r := do(t, http.MethodPost, base+"/message?"+query, readerToken, "", init, nil); r.Status != http.StatusAccepted {
		t.Fatalf("reader posting into its own session: %d, want 202", r.Status)
	}
	// The open stream holds the only session slot.
	req2, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	req2.Header.Set("Authorization", "Bearer "+writerToken)
	resp2, err := http.DefaultClient.Do(req2)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	if resp2.StatusCode == http.StatusOK {
		t.Fatal("a second SSE stream past MaxSessions=1 was accepted")
	}
}

// errReader makes the body read fail mid-way.
type errReader struct{ r io.Reader }

func (e errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		return n, errors.New("connection reset")
	}
	return n, err
}

func TestHTTPHandlerDirect(t *testing.T) {
	// The handler works without a network listener (httptest.NewRecorder).
	s := newServer(t, kit.Options{})
	h, shutdown, err := s.HTTPHandler(kit.HTTPOptions{Addr: "127.0.0.1:0", AuthToken: httpToken})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background())
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", errReader{bytes.NewReader([]byte(legacyInit))})
	req.Header.Set("Authorization", "Bearer "+httpToken)
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code < 400 {
		t.Fatalf("a body that cannot be read was accepted: %d", w.Code)
	}
	req = httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(legacyInit))
	req.Header.Set("Authorization", "Bearer "+httpToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK || w.Header().Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize through the recorder: %d %s", w.Code, w.Body)
	}
}

// TestHTTPPostNeedsJSONContentType: the streamable HTTP transport says a
// POST carries a JSON-RPC message as application/json; a POST that does not
// say so (no Content-Type, or another type) is refused with 415 before its
// body is read, and application/json with parameters is accepted.
func TestHTTPPostNeedsJSONContentType(t *testing.T) {
	base := startHTTP(t, newServer(t, kit.Options{}), kit.HTTPOptions{AuthToken: httpToken})
	for ct, want := range map[string]int{
		"":                                  http.StatusUnsupportedMediaType,
		"text/plain":                        http.StatusUnsupportedMediaType,
		"application/x-www-form-urlencoded": http.StatusUnsupportedMediaType,
		"application/jsonx":                 http.StatusUnsupportedMediaType,
		"application/json":                  http.StatusOK,
		"application/json; charset=utf-8":   http.StatusOK,
		"Application/JSON":                  http.StatusOK,
	} {
		req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(legacyInit))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+httpToken)
		req.Header.Set("Accept", "application/json, text/event-stream")
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Content-Type %q: status %d, want %d (%s)", ct, resp.StatusCode, want, body)
		}
		if want == http.StatusUnsupportedMediaType && !strings.Contains(string(body), "application/json") {
			t.Errorf("Content-Type %q: the refusal %s does not say what is wanted", ct, body)
		}
	}
}
