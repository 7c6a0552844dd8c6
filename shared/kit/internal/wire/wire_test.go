package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-fleet/mcp-fleet/shared/internal/jsonscan"
	"github.com/mcp-fleet/mcp-fleet/shared/jsontext"
)

func TestParseKinds(t *testing.T) {
	cases := []struct {
		in      string
		kind    Kind
		id      string
		method  string
		problem string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, Request, "1", "ping", ""},
		{` {"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}} `, Request, `"a"`, "tools/call", ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, Notification, "", "notifications/initialized", ""},
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, Response, "3", "", ""},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}`, Response, "3", "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, Invalid, "1", "", "empty"},
		{`{"jsonrpc":"2.0","method":""}`, Invalid, "", "", "empty"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, Invalid, "", "", "id must be"},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, Invalid, "", "", "id must be"},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, Invalid, "", "", "id must be"},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, Invalid, "", "", "id must be"},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, Invalid, "", "", "id must be"},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, Invalid, "1", "", "jsonrpc"},
		{`{"id":1,"method":"ping"}`, Invalid, "1", "", "jsonrpc"},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, Invalid, "1", "", "method must be a string"},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}`, Invalid, "1", "x", "params"},
		{`{"jsonrpc":"2.0","id":1,"method":"x","id":2}`, Invalid, "2", "", "twice"},
		{`{"jsonrpc":"2.0","id":1}`, Invalid, "1", "", "needs a method"},
		{`{"jsonrpc":"2.0","result":{}}`, Invalid, "", "", "id of its request"},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, Invalid, "1", "", "not both"},
		{`"hello"`, Invalid, "", "", "JSON object"},
	}
	for _, c := range cases {
		m, err := Parse([]byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if m.Kind != c.kind || string(m.ID) != c.id || m.Method != c.method || !strings.Contains(m.Problem, c.problem) {
			t.Errorf("%s: got kind=%v id=%s method=%q problem=%q", c.in, m.Kind, m.ID, m.Method, m.Problem)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a"}`, `{"jsonrpc":"2.0",}`, `nul`, `{"a":1}x`, `{"a":"\x01"}`, `{"a":"\q"}`, `[1,`} {
		if _, err := Parse([]byte(in)); !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: err = %v, want syntax error", in, err)
		}
	}
	if _, err := Parse([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`)); !errors.Is(err, ErrBatch) {
		t.Errorf("batch: err = %v", err)
	}
}

// A request whose params are nested far beyond any decoder's limit still
// yields its id, and scanning it needs no recursion.
func TestParseDeepParamsKeepsID(t *testing.T) {
	deep := strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000)
	m, err := Parse([]byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"arguments":` + deep + `}}`))
	if err != nil || m.Kind != Request || string(m.ID) != "42" {
		t.Fatalf("deep params: %v %+v", err, m.Kind)
	}
}

func TestIDKey(t *testing.T) {
	if IDKey([]byte(`"7"`)) == IDKey([]byte(`7`)) {
		t.Fatal("string and number ids collide")
	}
	if IDKey([]byte(`"\u0061"`)) != IDKey([]byte(`"a"`)) || IDKey([]byte(`007`)) != IDKey([]byte(`7`)) || IDKey([]byte(`-0`)) != IDKey([]byte(`0`)) {
		t.Fatal("equal ids do not match")
	}
	if IDKey(nil) != "" {
		t.Fatal("empty id has a key")
	}
}

func TestMembers(t *testing.T) {
	var keys []string
	err := Members([]byte(` { "a" : 1 , "b\n" : {"c":[1,2,{"d":null}]}, "e":"x" } `), func(k string, v []byte) error {
		keys = append(keys, k+"="+string(v))
		return nil
	})
	if err != nil || strings.Join(keys, "|") != `a=1|b`+"\n"+`={"c":[1,2,{"d":null}]}|e="x"` {
		t.Fatalf("members = %q, %v", keys, err)
	}
	if err := Members([]byte(`{}`), func(string, []byte) error { t.Fatal("called"); return nil }); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	if err := Members([]byte(`{"a":1,"b":2}`), func(string, []byte) error { return stop }); err != stop {
		t.Fatalf("fn error not returned: %v", err)
	}
	for _, bad := range []string{`[]`, `{"a":1`, `{"a" 1}`, `{"a":1 "b":2}`, `{"a":1}}`, `{1:2}`} {
		if err := Members([]byte(bad), func(string, []byte) error { return nil }); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestElements(t *testing.T) {
	var got []string
	err := Elements([]byte(` [ 1 , "a,]" , {"b":[2,3]} ,null] `), func(el []byte) error {
		got = append(got, string(el))
		return nil
	})
	if err != nil || strings.Join(got, "|") != `1|"a,]"|{"b":[2,3]}|null` {
		t.Fatalf("elements = %q, %v", got, err)
	}
	if err := Elements([]byte(`[]`), func([]byte) error { t.Fatal("called"); return nil }); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	if err := Elements([]byte(`[1,2]`), func([]byte) error { return stop }); err != stop {
		t.Fatalf("fn error not returned: %v", err)
	}
	for _, bad := range []string{`{}`, `[1`, `[1 2]`, `[1,]`, `[1]]`, `[,1]`, ``} {
		if err := Elements([]byte(bad), func([]byte) error { return nil }); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestString(t *testing.T) {
	for _, in := range []string{`"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`, `"\ud83d x"`, `"\ude00"`} {
		got, err := String([]byte(in))
		var want string
		if json.Unmarshal([]byte(in), &want) != nil || err != nil || got != want {
			t.Errorf("String(%s) = %q, %v; encoding/json says %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`x`, `"a" "b"`, `"a`, `1`} {
		if _, err := String([]byte(bad)); err == nil {
			t.Errorf("String(%s) accepted", bad)
		}
	}
	if got, _ := String([]byte("\"a\xffb\"")); got != "a\ufffdb" {
		t.Errorf("invalid UTF-8 not replaced: %q", got)
	}
}

func TestAppendStringOfAView(t *testing.T) {
	if string(jsontext.AppendString(nil, View([]byte(`{"a":1}`)))) != `"{\"a\":1}"` {
		t.Fatal("AppendString of a View")
	}
}

func TestAppendMessages(t *testing.T) {
	check := func(b []byte, want string) {
		t.Helper()
		if !json.Valid(b) || string(b) != want {
			t.Errorf("got %s, want %s", b, want)
		}
	}
	check(AppendResult(nil, []byte(`1`), []byte(`{}`)), `{"jsonrpc":"2.0","id":1,"result":{}}`)
	check(AppendError(nil, nil, CodeParseError, "bad \"x\"", nil), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad \"x\""}}`)
	check(AppendError(nil, []byte(`"a"`), CodeInvalidParams, "m", []byte(`{"uri":"x"}`)), `{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"m","data":{"uri":"x"}}}`)
	check(AppendNotification(nil, "notifications/x", nil), `{"jsonrpc":"2.0","method":"notifications/x"}`)
	check(AppendNotification(nil, "n", []byte(`{"a":1}`)), `{"jsonrpc":"2.0","method":"n","params":{"a":1}}`)
	check(AppendRequest(nil, []byte(`"s1"`), "roots/list", nil), `{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`)
}

func TestTruncate(t *testing.T) {
	if Truncate("short", 10) != "short" {
		t.Fatal("short string changed")
	}
	got := Truncate(strings.Repeat("é", 100), 11)
	if !utf8.ValidString(got) || !strings.HasPrefix(got, "ééééé…(200 bytes)") {
		t.Fatalf("Truncate = %q", got)
	}
}

func FuzzValidAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2.5e-3,-0,"x\u00e9",true,false,null]}`, `{"a":}`, `[1,]`, `01`, `1.`, `-`, `"\ud800"`, " \t\n1 ", `{"a":1,}`, `[[[]]]`, `{"a":{"b":{}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if Valid(b) != json.Valid(b) {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, Valid(b), json.Valid(b))
		}
		if m, err := Parse(b); err == nil && m.Kind == Request && !json.Valid(b) {
			t.Fatalf("Parse accepted invalid JSON %q", b)
		}
	})
}

func BenchmarkParseToolsCall(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"file_read","arguments":{"path":"src/main.go","encoding":"utf-8","head":20},"_meta":{"progressToken":3}}}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if m, err := Parse(msg); err != nil || m.Kind != Request {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendFileResult: the two passes a file_read result of 1 KiB
// gets after encoding/json has written it: its text copy escaped, and its
// content string scanned (as the outputSchema check scans it).
func BenchmarkAppendFileResult(b *testing.B) {
	res, err := json.Marshal(map[string]any{"path": "one-kib.txt", "content": strings.Repeat("0123456789abcde\n", 64), "size": 1024})
	if err != nil {
		b.Fatal(err)
	}
	content := bytes.Index(res, []byte(`"0123`))
	buf := make([]byte, 0, 4096)
	b.Run("escape", func(b *testing.B) {
		for b.Loop() {
			buf = jsontext.AppendString(buf[:0], View(res))
		}
	})
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := jsonscan.String(res, content); err != nil {
				b.Fatal(err)
			}
		}
	})
}
