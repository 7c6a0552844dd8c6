package kit

import (
	"encoding/json"
	"testing"
)

func TestRequestIDKey(t *testing.T) {
	same := [][2]string{{`7`, `7.0`}, {`7`, ` 7 `}, {`1e2`, `100`}, {`"a"`, `"\u0061"`}}
	for _, p := range same {
		a, okA := requestIDKey(json.RawMessage(p[0]))
		b, okB := requestIDKey(json.RawMessage(p[1]))
		if !okA || !okB || a != b {
			t.Errorf("%s and %s should be the same id (%q, %q)", p[0], p[1], a, b)
		}
	}
	a, _ := requestIDKey(json.RawMessage(`7`))
	b, _ := requestIDKey(json.RawMessage(`"7"`))
	if a == b {
		t.Error("the number 7 and the string \"7\" are different ids")
	}
	for _, bad := range []string{``, `null`, `{}`, `[1]`, `"unterminated`, `true`} {
		if _, ok := requestIDKey(json.RawMessage(bad)); ok {
			t.Errorf("%q is not an id", bad)
		}
	}
}

func TestPendingRequests(t *testing.T) {
	p := newPendingRequests()
	f := p.begin("s1", json.RawMessage(`5`))
	p.cancel("s2", json.RawMessage(`5`)) // another session
	p.cancel("s1", json.RawMessage(`"5"`))
	if f.Load() {
		t.Fatal("a cancellation for another session or id marked the request")
	}
	if again := p.begin("s1", json.RawMessage(`5.0`)); again != f {
		t.Fatal("a duplicate id in flight should share the first request's flag")
	}
	p.cancel("s1", json.RawMessage(`5`))
	if !f.Load() || !p.done("s1", json.RawMessage(`5`)) {
		t.Fatal("cancel did not mark the request")
	}
	if p.done("s1", json.RawMessage(`5`)) {
		t.Fatal("done twice")
	}
	p.cancel("s1", json.RawMessage(`6`)) // unknown: ignored, nothing stored
	p.begin("s1", json.RawMessage(`8`))
	p.begin("s2", json.RawMessage(`8`))
	p.dropSession("s1")
	if len(p.m) != 1 {
		t.Fatalf("after dropSession: %d entries, want 1", len(p.m))
	}
	if f := p.begin("s1", nil); f == nil || len(p.m) != 1 {
		t.Fatal("a request without an id is not tracked")
	}
}

func TestResponseID(t *testing.T) {
	cases := map[string]string{
		`{"jsonrpc":"2.0","id":5,"result":{"x":1}}`:                 `5`,
		`{"jsonrpc":"2.0","result":{"x":[1,2]},"id":"a"}`:           `"a"`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}`: `7`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`:                  ``, // a server request
		`{"jsonrpc":"2.0","method":"notifications/progress"}`:       ``,
		`{"jsonrpc":"2.0","id":3}`:                                  ``,
		`not json`:                                                  ``,
	}
	for in, want := range cases {
		if got := string(responseID([]byte(in))); got != want {
			t.Errorf("responseID(%s) = %q, want %q", in, got, want)
		}
	}
}
