// Package logging sets up the fleet's structured logs: zerolog JSON on stderr
// (stdout belongs to the MCP protocol in stdio mode), and a Redactor that
// scrubs secrets from anything logged — by key name (token, password,
// authorization…) and by value (every secret the process was configured
// with, wherever it appears in a string).
package logging

import (
	"encoding/json"
	"io"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/rs/zerolog"
)

// Mask replaces a redacted value.
const Mask = "[REDACTED]"

// New returns a JSON logger writing to w (os.Stderr when nil) at the given
// level ("debug", "info", "warn", "error"; unknown → info). Every line is
// passed through r so that a secret value cannot reach the log even inside a
// free-text message.
func New(w io.Writer, level string, r *Redactor, service string) zerolog.Logger {
	if w == nil {
		w = os.Stderr
	}
	if r != nil {
		w = &redactingWriter{w: w, r: r}
	}
	lvl, err := zerolog.ParseLevel(strings.ToLower(level))
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano
	return zerolog.New(w).Level(lvl).With().Timestamp().Str("service", service).Logger()
}

// Redactor knows which keys are secret and which values are secrets.
type Redactor struct {
	values []string
}

// NewRedactor records secret values (API keys, tokens, passwords, DSNs with
// passwords). Values shorter than 6 bytes are ignored: masking "on" or "1"
// everywhere would destroy logs without protecting anything.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add records more secret values.
func (r *Redactor) Add(secrets ...string) {
	for _, s := range secrets {
		if len(s) >= 6 {
			r.values = append(r.values, s)
			// A log line is JSON, where a secret holding a quote, a backslash,
			// a control character (or <, >, & in Interface fields) appears
			// escaped: record the escaped forms too.
			r.values = append(r.values, jsonEscaped(s)...)
		}
	}
	// Longest first, so that a secret containing another is masked whole
	// rather than leaving its tail behind.
	sort.SliceStable(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
}

// jsonEscaped returns the forms s takes inside a JSON string, when they differ
// from s: without HTML escaping (zerolog's Str, Msg, Err) and with it
// (encoding/json, used for Interface fields).
func jsonEscaped(s string) []string {
	var out []string
	for _, html := range []bool{false, true} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(s) // a string always encodes
		e := strings.TrimSuffix(b.String(), "\n")
		e = e[1 : len(e)-1] // drop the quotes
		if e != s && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// secretKeyParts are substrings of a key name that mark its value secret.
var secretKeyParts = []string{"password", "passwd", "secret", "token", "apikey", "api_key",
	"api-key", "authorization", "cookie", "credential", "private_key", "privatekey", "session_key", "jwt", "bearer"}

// IsSecretKey reports whether a field named key holds a secret.
func IsSecretKey(key string) bool {
	k := strings.ToLower(key)
	for _, p := range secretKeyParts {
		if strings.Contains(k, p) {
			return true
		}
	}
	return false
}

// String masks every known secret value inside s.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Mask)
		}
	}
	return s
}

// anyIn reports whether p holds any secret value. p is only read while
// the call runs, so it is viewed as a string, not copied.
func (r *Redactor) anyIn(p []byte) bool {
	if r == nil || len(p) == 0 {
		return false
	}
	s := unsafe.String(unsafe.SliceData(p), len(p))
	for _, v := range r.values {
		if strings.Contains(s, v) {
			return true
		}
	}
	return false
}

// Value returns a copy of v (a decoded JSON value) with secret-named keys
// masked and secret values replaced, at any depth.
func (r *Redactor) Value(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			if IsSecretKey(k) {
				out[k] = Mask
				continue
			}
			out[k] = r.Value(val)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = r.Value(val)
		}
		return out
	case string:
		if u, changed := RedactURL(t); changed {
			t = u
		}
		return r.String(t)
	default:
		return v
	}
}

type redactingWriter struct {
	w io.Writer
	r *Redactor
}

func (rw *redactingWriter) Write(p []byte) (int, error) {
	if !rw.r.anyIn(p) {
		// Most lines hold no secret: written as they are, not copied
		// into a string and back.
		return rw.w.Write(p)
	}
	s := rw.r.String(string(p))
	if _, err := io.WriteString(rw.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// RedactURL masks the secrets a URL can carry: the password of its userinfo
// and the values of secret-named query parameters (?api_key=…, ?token=…).
// It reports whether s was a URL that needed masking.
func RedactURL(s string) (string, bool) {
	if !strings.Contains(s, "://") || (!strings.Contains(s, "@") && !strings.Contains(s, "?")) {
		return s, false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s, false
	}
	changed := false
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), Mask)
			changed = true
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if IsSecretKey(k) || strings.EqualFold(k, "key") || strings.EqualFold(k, "sig") || strings.EqualFold(k, "signature") {
				q[k] = []string{Mask}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	if !changed {
		return s, false
	}
	return u.String(), true
}
