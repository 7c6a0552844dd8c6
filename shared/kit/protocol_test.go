package kit_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

// badMessages are requests the specification answers with an error that
// the client can match to its request wherever the id could be read.
var badMessages = []struct {
	name   string
	line   string
	code   float64
	id     any // nil: the id could not be read
	status int // over HTTP
}{
	{"empty method", `{"jsonrpc":"2.0","id":3,"method":""}`, -32600, 3.0, http.StatusBadRequest},
	{"unknown method", `{"jsonrpc":"2.0","id":4,"method":"nope/nope"}`, -32601, 4.0, http.StatusOK},
	{"batch", `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, -32600, nil, http.StatusBadRequest},
	{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, nil, http.StatusBadRequest},
	{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, nil, http.StatusBadRequest},
	{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, nil, http.StatusBadRequest},
	{"fraction id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, nil, http.StatusBadRequest},
	{"wrong version", `{"jsonrpc":"1.0","id":6,"method":"ping"}`, -32600, 6.0, http.StatusBadRequest},
	{"params not an object", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":"x"}`, -32600, 7.0, http.StatusBadRequest},
	{"too deep", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":` +
		strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}}}`, 0, 8.0, http.StatusOK},
	{"parse error", `{"jsonrpc":`, -32700, nil, http.StatusBadRequest},
}

func TestProtocolAnswersOverStdio(t *testing.T) {
	s := newServer(t, kit.Options{})
	p := startStdioPeer(t, s, "")
	p.send(t, initLine)
	p.recv(t)
	for _, b := range badMessages {
		p.send(t, b.line)
		m := p.recv(t)
		if b.code == 0 { // a tool error, with the id kept
			res, _ := m["result"].(map[string]any)
			if m["id"] != b.id || res == nil || res["isError"] != true || !strings.Contains(fmt.Sprint(res), "nested deeper") {
				t.Errorf("%s: %v", b.name, m)
			}
			continue
		}
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != b.code || m["id"] != b.id {
			t.Errorf("%s: got %v, want code %v id %v", b.name, m, b.code, b.id)
		}
		if msg, _ := e["message"].(string); len(msg) > 300 {
			t.Errorf("%s: message of %d bytes", b.name, len(msg))
		}
	}
	// Notifications are never answered, malformed or not: the next line's
	// answer is the next thing on stdout.
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}`)
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}}`)
	p.send(t, `{"jsonrpc":"2.0","method":""}`)
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/unknown"}`)
	p.send(t, `{"jsonrpc":"2.0","id":99,"method":"ping"}`)
	if m := p.recv(t); m["id"] != 99.0 {
		t.Fatalf("a notification was answered: %v", m)
	}
	// A huge name is echoed truncated.
	p.send(t, `{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"`+strings.Repeat("x", 1<<20)+`"}}`)
	m := p.recv(t)
	if e, _ := m["error"].(map[string]any); e == nil || len(fmt.Sprint(e["message"])) > 200 {
		t.Fatalf("unknown huge tool name: %d bytes", len(fmt.Sprint(m)))
	}
}

func TestProtocolAnswersOverHTTP(t *testing.T) {
	s := newServer(t, kit.Options{})
	base := startHTTP(t, s, kit.HTTPOptions{AuthToken: httpToken})
	sid := initSession(t, base, httpToken)
	for _, b := range badMessages {
		r := post(t, base, httpToken, sid, b.line)
		if r.Status != b.status {
			t.Errorf("%s: status %d, want %d (%s)", b.name, r.Status, b.status, r.Body)
		}
		if b.code == 0 {
			if r.Msg["id"] != b.id || !strings.Contains(r.Body, "nested deeper") {
				t.Errorf("%s: %s", b.name, r.Body)
			}
			continue
		}
		if r.errorCode() != b.code || r.Msg["id"] != b.id {
			t.Errorf("%s: got %s, want code %v id %v", b.name, r.Body, b.code, b.id)
		}
	}
	for _, n := range []string{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}`, `{"jsonrpc":"2.0","method":""}`} {
		if r := post(t, base, httpToken, sid, n); r.Status != http.StatusAccepted || r.Body != "" {
			t.Errorf("notification %s answered: %d %q", n, r.Status, r.Body)
		}
	}
}

// TestModernHTTPRules: protocol 2026-07-28 over HTTP — headers that must
// agree with the body, removed methods 404, GET/DELETE 405, the session
// header ignored.
func TestModernHTTPRules(t *testing.T) {
	s := newServer(t, kit.Options{})
	base := startHTTP(t, s, kit.HTTPOptions{AuthToken: httpToken})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	modern := func(body string, hdr map[string]string) httpResult {
		h := map[string]string{"Mcp-Protocol-Version": "2026-07-28"}
		for k, v := range hdr {
			h[k] = v
		}
		return do(t, http.MethodPost, base+"/mcp", httpToken, "", body, h)
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},` + meta + `}}`
	cases := []struct {
		name   string
		body   string
		hdr    map[string]string
		status int
		code   float64
	}{
		{"ok", call, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "echo"}, 200, 0},
		{"no method header", call, map[string]string{"Mcp-Name": "echo"}, 400, -32020},
		{"wrong name header", call, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "other"}, 400, -32020},
		{"no meta", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Method": "tools/list"}, 400, -32602},
		{"version mismatch", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`, map[string]string{"Mcp-Method": "tools/list"}, 400, -32020},
		{"no capabilities", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, map[string]string{"Mcp-Method": "tools/list"}, 400, -32602},
		{"removed ping", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{` + meta + `}}`, map[string]string{"Mcp-Method": "ping"}, 404, -32601},
		{"last event id", call, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "echo", "Last-Event-ID": "3"}, 400, -32020},
	}
	for _, c := range cases {
		r := modern(c.body, c.hdr)
		if r.Status != c.status || r.errorCode() != c.code {
			t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
		}
	}
	if r := modern(call, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "echo"}); r.Header.Get("Mcp-Session-Id") != "" {
		t.Error("a session id was minted for a stateless request")
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		r := do(t, m, base+"/mcp", httpToken, "", "", map[string]string{"Mcp-Protocol-Version": "2026-07-28"})
		if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST" {
			t.Errorf("%s: %d allow %q", m, r.Status, r.Header.Get("Allow"))
		}
	}
	v := do(t, http.MethodPost, base+"/mcp", httpToken, "", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2030-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		map[string]string{"Mcp-Protocol-Version": "2030-01-01", "Mcp-Method": "server/discover"})
	if v.Status != 400 || v.errorCode() != -32022 || !strings.Contains(v.Body, `"supported"`) {
		t.Errorf("unsupported version: %d %s", v.Status, v.Body)
	}
}

// TestCancelledRequestGetsNoAnswer: over stdio, a request the client
// cancels is never answered, and the server keeps serving.
func TestCancelledRequestGetsNoAnswerStdio(t *testing.T) {
	s := newServer(t, kit.Options{})
	p := startStdioPeer(t, s, "")
	p.send(t, initLine)
	p.recv(t)
	p.send(t, `{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"slow"}}`)
	time.Sleep(10 * time.Millisecond)
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1"}}`)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := p.recv(t); m["id"] != 2.0 {
		t.Fatalf("the cancelled request was answered: %v", m)
	}
}
