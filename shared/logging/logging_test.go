package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestIsSecretKey(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"password", true},
		{"PASSWORD", true},
		{"db_password", true},
		{"passwd", true},
		{"client_secret", true},
		{"token", true},
		{"access_token", true},
		{"refreshToken", true},
		{"apikey", true},
		{"api_key", true},
		{"X-Api-Key", true},
		{"Authorization", true},
		{"proxy-authorization", true},
		{"Cookie", true},
		{"set-cookie", true},
		{"credentials", true},
		{"private_key", true},
		{"privateKey", true},
		{"session_key", true},
		{"jwt", true},
		{"id_jwt", true},
		{"bearer", true},
		{"username", false},
		{"email", false},
		{"query", false},
		{"limit", false},
		{"api", false},
		{"key", false},
		{"session", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := IsSecretKey(tc.key); got != tc.want {
			t.Errorf("IsSecretKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

func TestRedactorString(t *testing.T) {
	const sk = "sk-live-0123456789"
	r := NewRedactor(sk, "hunter2pass", "", "abc", "12345") // the last three are too short
	tests := []struct {
		name, in, want string
	}{
		{"exact", sk, Mask},
		{"inside a longer string", "Authorization: Bearer " + sk + " (from env)", "Authorization: Bearer " + Mask + " (from env)"},
		{"glued to other text", "key=" + sk + "&x=1", "key=" + Mask + "&x=1"},
		{"twice", sk + "," + sk, Mask + "," + Mask},
		{"two secrets", "u:hunter2pass@db " + sk, "u:" + Mask + "@db " + Mask},
		{"short values are not secrets", "abc 12345 abc", "abc 12345 abc"},
		{"prefix of a secret is not masked", "sk-live-01234", "sk-live-01234"},
		{"nothing to do", "plain log text", "plain log text"},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.String(tc.in); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestShortSecretsIgnored(t *testing.T) {
	r := NewRedactor("", "1", "on", "true", "12345")
	r.Add("x", "yes")
	if len(r.values) != 0 {
		t.Fatalf("short values recorded: %q", r.values)
	}
	in := "debug=1 tls=on ok=true pin=12345 yes x"
	if got := r.String(in); got != in {
		t.Errorf("String = %q, want it unchanged", got)
	}
	r.Add("123456") // exactly 6 bytes counts
	if got := r.String("pin=123456"); got != "pin="+Mask {
		t.Errorf("6-byte secret not masked: %q", got)
	}
}

// A secret that contains another secret must be masked whole, not leave its
// tail behind because the shorter one was replaced first.
func TestOverlappingSecretsMaskedWhole(t *testing.T) {
	short := "abcdef123456"
	long := short + "-TAIL-SECRET-789"
	for _, order := range [][]string{{short, long}, {long, short}} {
		r := NewRedactor(order...)
		got := r.String("token " + long + " and " + short)
		if want := "token " + Mask + " and " + Mask; got != want {
			t.Errorf("secrets added as %q: String = %q, want %q", order, got, want)
		}
	}
}

func TestRedactorValue(t *testing.T) {
	const sec = "s3cr3t-value-xyz"
	r := NewRedactor(sec)
	in := map[string]any{
		"query":    "select * where key = '" + sec + "'",
		"limit":    float64(10),
		"ok":       true,
		"nothing":  nil,
		"password": "anything",
		"api_key":  float64(42), // masked whatever its type
		"Token":    map[string]any{"nested": "object"},
		"filters": map[string]any{
			"status":        "open",
			"client_secret": "abc",
			"deeper": map[string]any{
				"Authorization": "Bearer xyz",
				"note":          "the key is " + sec,
			},
		},
		"items": []any{
			"plain",
			sec,
			map[string]any{"refresh_token": "r", "name": "n"},
			[]any{map[string]any{"cookie": "c"}, "x" + sec + "y", float64(3)},
		},
	}
	want := map[string]any{
		"query":    "select * where key = '" + Mask + "'",
		"limit":    float64(10),
		"ok":       true,
		"nothing":  nil,
		"password": Mask,
		"api_key":  Mask,
		"Token":    Mask,
		"filters": map[string]any{
			"status":        "open",
			"client_secret": Mask,
			"deeper": map[string]any{
				"Authorization": Mask,
				"note":          "the key is " + Mask,
			},
		},
		"items": []any{
			"plain",
			Mask,
			map[string]any{"refresh_token": Mask, "name": "n"},
			[]any{map[string]any{"cookie": Mask}, "x" + Mask + "y", float64(3)},
		},
	}
	// Keep a deep copy to prove the input is not modified.
	orig := deepCopy(t, in)
	got := r.Value(in)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("Value() =\n%s", g)
	}
	if !reflect.DeepEqual(in, orig) {
		t.Error("Value() modified its input")
	}

	// Scalars.
	for _, v := range []any{float64(1), true, nil, json.Number("7")} {
		if got := r.Value(v); !reflect.DeepEqual(got, v) {
			t.Errorf("Value(%#v) = %#v", v, got)
		}
	}
	if got := r.Value(sec); got != Mask {
		t.Errorf("Value(secret string) = %v", got)
	}
}

func deepCopy(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNilRedactorIsSafe(t *testing.T) {
	var r *Redactor
	if got := r.String("token abcdefgh"); got != "token abcdefgh" {
		t.Errorf("nil String = %q", got)
	}
	in := map[string]any{"password": "p", "list": []any{"a", map[string]any{"token": "t"}}, "n": float64(1)}
	want := map[string]any{"password": Mask, "list": []any{"a", map[string]any{"token": Mask}}, "n": float64(1)}
	if got := r.Value(in); !reflect.DeepEqual(got, want) {
		t.Errorf("nil Value = %v, want key-name redaction still applied: %v", got, want)
	}

	var buf bytes.Buffer
	log := New(&buf, "info", nil, "svc")
	log.Info().Msg("hello abcdefgh")
	if !strings.Contains(buf.String(), "hello abcdefgh") {
		t.Errorf("logger without redactor lost the message: %s", buf.String())
	}
}

func decodeLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, l)
		}
		lines = append(lines, m)
	}
	return lines
}

func TestWriterRedactsWholeLines(t *testing.T) {
	const apiKey = "AKIA-9f8e7d6c5b4a"
	const dbPass = "correct-horse-battery"
	r := NewRedactor(apiKey)
	r.Add(dbPass)

	tests := []struct {
		name string
		log  func(l zerolog.Logger)
	}{
		{"message", func(l zerolog.Logger) { l.Info().Msg("calling upstream with key " + apiKey) }},
		{"formatted message", func(l zerolog.Logger) { l.Warn().Msgf("dsn postgres://u:%s@db/x", dbPass) }},
		{"error", func(l zerolog.Logger) {
			l.Error().Err(errors.New("auth failed for " + apiKey)).Msg("upstream failed")
		}},
		{"string field", func(l zerolog.Logger) { l.Info().Str("header", "Bearer "+apiKey).Msg("request") }},
		{"innocent field name", func(l zerolog.Logger) { l.Info().Str("dsn", "postgres://u:"+dbPass+"@h/db").Msg("connect") }},
		{"strings field", func(l zerolog.Logger) { l.Info().Strs("args", []string{"a", dbPass}).Msg("exec") }},
		{"interface field", func(l zerolog.Logger) {
			l.Info().Interface("args", map[string]any{"q": "k=" + apiKey}).Msg("call")
		}},
		{"context field", func(l zerolog.Logger) {
			l2 := l.With().Str("upstream", apiKey).Logger()
			l2.Info().Msg("x")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			tc.log(New(&buf, "debug", r, "svc"))
			out := buf.String()
			if out == "" {
				t.Fatal("nothing logged")
			}
			if strings.Contains(out, apiKey) || strings.Contains(out, dbPass) {
				t.Fatalf("secret reached the log: %s", out)
			}
			if !strings.Contains(out, Mask) {
				t.Fatalf("no mask in %s", out)
			}
			lines := decodeLines(t, out) // redaction keeps the line valid JSON
			if len(lines) != 1 {
				t.Fatalf("got %d lines, want 1", len(lines))
			}
			if lines[0]["service"] != "svc" {
				t.Errorf("service field = %v", lines[0]["service"])
			}
		})
	}
}

// Secrets with characters JSON must escape (quote, backslash) appear escaped
// in a log line; they must be masked all the same.
func TestWriterRedactsJSONEscapedSecrets(t *testing.T) {
	for _, sec := range []string{`pa"ss"word-1`, `C:\keys\prod-key`, "tab\tsecret-x", `q"\mixed\"9`, "p&ss<w>rd", "ctl\x01\x1fchars"} {
		r := NewRedactor(sec)
		var buf bytes.Buffer
		log := New(&buf, "info", r, "svc")
		log.Info().Str("dsn", "user:"+sec+"@db").Msg("connecting with " + sec)
		log.Error().Err(errors.New("bad "+sec)).Interface("args", map[string]string{"q": sec}).Msg("fail")
		out := buf.String()
		lines := decodeLines(t, out)
		for _, l := range lines {
			for k, v := range l {
				if s, ok := v.(string); ok && strings.Contains(s, sec) {
					t.Errorf("secret %q reached the log in field %q: %s", sec, k, out)
				}
			}
		}
		if strings.Count(out, Mask) != 4 {
			t.Errorf("secret %q: want 4 masks, got log %s", sec, out)
		}
	}
}

func TestWriterWithoutSecretsPassesThrough(t *testing.T) {
	var buf bytes.Buffer
	r := NewRedactor("short") // ignored: nothing to redact
	log := New(&buf, "info", r, "svc")
	log.Info().Str("password_hint", "short").Msg("message short")
	lines := decodeLines(t, buf.String())
	if len(lines) != 1 || lines[0]["message"] != "message short" || lines[0]["password_hint"] != "short" {
		t.Errorf("unexpected output %s", buf.String())
	}
}

// TestWriterPassesCleanLinesUncopied: a line with no secret in it goes to
// the writer as the very bytes logged, without an allocation; one with a
// secret is masked.
func TestWriterPassesCleanLinesUncopied(t *testing.T) {
	var got []byte
	sink := writerFunc(func(p []byte) (int, error) { got = p; return len(p), nil })
	w := &redactingWriter{w: sink, r: NewRedactor("client-secret-123", "signing\"secret")}
	line := []byte(`{"level":"info","message":"webhook event stored","source":"127.0.0.1"}` + "\n")
	if allocs := testing.AllocsPerRun(100, func() { _, _ = w.Write(line) }); allocs != 0 {
		t.Errorf("a clean line cost %v allocations", allocs)
	}
	if &got[0] != &line[0] {
		t.Error("a clean line was copied")
	}
	for _, dirty := range []string{`{"x":"client-secret-123"}`, `{"x":"signing\"secret"}`} {
		_, _ = w.Write([]byte(dirty))
		if strings.Contains(string(got), "secret-123") || strings.Contains(string(got), `signing\"`) || !strings.Contains(string(got), Mask) {
			t.Errorf("%s written as %s", dirty, got)
		}
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

type failingWriter struct{ err error }

func (f failingWriter) Write(p []byte) (int, error) { return 0, f.err }

func TestRedactingWriterReportsErrors(t *testing.T) {
	boom := errors.New("disk full")
	w := &redactingWriter{w: failingWriter{boom}, r: NewRedactor("secret-value")}
	n, err := w.Write([]byte("a secret-value line\n"))
	if !errors.Is(err, boom) || n != 0 {
		t.Errorf("Write = %d, %v; want 0, %v", n, err, boom)
	}

	var buf bytes.Buffer
	w = &redactingWriter{w: &buf, r: NewRedactor("secret-value")}
	in := []byte("a secret-value line\n")
	n, err = w.Write(in)
	if err != nil || n != len(in) {
		t.Errorf("Write = %d, %v; want %d, nil (the caller's length, not the masked length)", n, err, len(in))
	}
	if buf.String() != "a "+Mask+" line\n" {
		t.Errorf("wrote %q", buf.String())
	}
}

func TestLevels(t *testing.T) {
	all := []zerolog.Level{zerolog.DebugLevel, zerolog.InfoLevel, zerolog.WarnLevel, zerolog.ErrorLevel}
	tests := []struct {
		level string
		want  []string // levels that reach the output
	}{
		{"debug", []string{"debug", "info", "warn", "error"}},
		{"DEBUG", []string{"debug", "info", "warn", "error"}},
		{"info", []string{"info", "warn", "error"}},
		{"Info", []string{"info", "warn", "error"}},
		{"warn", []string{"warn", "error"}},
		{"error", []string{"error"}},
		{"", []string{"info", "warn", "error"}},
		{"verbose", []string{"info", "warn", "error"}},
		{"warning", []string{"info", "warn", "error"}},
		{"trace", []string{"debug", "info", "warn", "error"}},
	}
	for _, tc := range tests {
		t.Run(tc.level, func(t *testing.T) {
			var buf bytes.Buffer
			log := New(&buf, tc.level, NewRedactor(), "svc")
			for _, l := range all {
				log.WithLevel(l).Msg("m")
			}
			var got []string
			for _, line := range decodeLines(t, buf.String()) {
				got = append(got, line["level"].(string))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("level %q logged %v, want %v", tc.level, got, tc.want)
			}
		})
	}
}

func TestLineShape(t *testing.T) {
	var buf bytes.Buffer
	log := New(&buf, "info", NewRedactor(), "devtools")
	log.Info().Str("tool", "file_read").Msg("done")
	lines := decodeLines(t, buf.String())
	if len(lines) != 1 {
		t.Fatalf("%d lines", len(lines))
	}
	l := lines[0]
	for _, k := range []string{"level", "time", "service", "message", "tool"} {
		if _, ok := l[k]; !ok {
			t.Errorf("line lacks %q: %v", k, l)
		}
	}
	if l["service"] != "devtools" || l["message"] != "done" || l["level"] != "info" {
		t.Errorf("line = %v", l)
	}
}

func TestNewDefaultsToStderr(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	log := New(nil, "info", NewRedactor("stderr-secret"), "svc")
	os.Stderr = old
	log.Info().Msg("to stderr stderr-secret")
	w.Close()
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "to stderr "+Mask) {
		t.Errorf("stderr got %q", out)
	}
}

func TestRedactURL(t *testing.T) {
	cases := []struct {
		in, want string
		changed  bool
	}{
		{"https://user:pw-secret@example.com/x", "https://user:%5BREDACTED%5D@example.com/x", true},
		{"https://example.com/x?api_key=abc123&page=2", "https://example.com/x?api_key=%5BREDACTED%5D&page=2", true},
		{"https://example.com/x?key=abc&sig=def", "https://example.com/x?key=%5BREDACTED%5D&sig=%5BREDACTED%5D", true},
		{"https://example.com/x?page=2", "https://example.com/x?page=2", false},
		{"https://user@example.com/", "https://user@example.com/", false},
		{"not a url ?token=x", "not a url ?token=x", false},
		{"://broken@?", "://broken@?", false},
	}
	for _, tc := range cases {
		got, changed := RedactURL(tc.in)
		if got != tc.want || changed != tc.changed {
			t.Errorf("RedactURL(%q) = %q, %v; want %q, %v", tc.in, got, changed, tc.want, tc.changed)
		}
	}
	v := NewRedactor().Value(map[string]any{"url": "https://a.example/?access_token=zzz"}).(map[string]any)
	if strings.Contains(v["url"].(string), "zzz") {
		t.Fatalf("Value kept a URL secret: %v", v)
	}
}

func TestCorrelationID(t *testing.T) {
	ctx := context.Background()
	if CorrelationID(ctx) != "" {
		t.Fatal("empty context has an id")
	}
	if got := CorrelationID(WithCorrelationID(ctx, "abc-1")); got != "abc-1" {
		t.Fatalf("CorrelationID = %q", got)
	}
}
