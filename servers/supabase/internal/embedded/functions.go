package embedded

import (
	"database/sql/driver"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"unicode/utf8"

	"modernc.org/sqlite"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/scoring"
)

// argErrorPrefix marks an error a registered function raises for a bad
// argument, so it maps to SQLSTATE 22023 as PostgreSQL's would.
const argErrorPrefix = "invalid argument: "

// The driver keeps registered functions for the whole process and refuses
// a second registration of a name, hence once.
var registerOnce sync.Once

func register() {
	registerOnce.Do(func() {
		sqlite.MustRegisterDeterministicScalarFunction("mcp_like", 3, likeFunc)
		sqlite.MustRegisterDeterministicScalarFunction("calculate_quote_scores", -1, scoresFunc)
		sqlite.MustRegisterDeterministicScalarFunction("mcp_jsonb", 1, jsonbFunc)
		sqlite.MustRegisterDeterministicScalarFunction("mcp_jsonb_key", 1, jsonbKeyFunc)
	})
}

func text(v driver.Value) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case []byte:
		return string(t), true
	case int64, float64:
		b, _ := json.Marshal(t)
		return string(b), true
	}
	return "", false
}

// jsonbFunc is a stored JSON value in canonicalJSON's form, so that
// jsonb equality does not depend on key order or spacing.
func jsonbFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	s, ok := text(args[0])
	if !ok || args[0] == nil {
		return nil, nil
	}
	c, err := canonicalJSON(s)
	if err != nil {
		return nil, errors.New(argErrorPrefix + "a stored value is not JSON")
	}
	return c, nil
}

// likeFunc is PostgreSQL's LIKE (ci: ILIKE): % any text, _ one character,
// a backslash takes the next character literally; case-sensitive unless ci.
func likeFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	s, ok1 := text(args[0])
	p, ok2 := text(args[1])
	if !ok1 || !ok2 {
		return nil, nil
	}
	if ci, _ := args[2].(int64); ci != 0 {
		s, p = strings.ToLower(s), strings.ToLower(p)
	}
	if like(s, p) {
		return int64(1), nil
	}
	return int64(0), nil
}

func like(s, p string) bool {
	for len(p) > 0 {
		r, n := utf8.DecodeRuneInString(p)
		switch r {
		case '%':
			for len(p) > 0 && p[0] == '%' {
				p = p[1:]
			}
			if p == "" {
				return true
			}
			for i := 0; i <= len(s); {
				if like(s[i:], p) {
					return true
				}
				if i == len(s) {
					break
				}
				_, m := utf8.DecodeRuneInString(s[i:])
				i += m
			}
			return false
		case '_':
			if s == "" {
				return false
			}
			_, m := utf8.DecodeRuneInString(s)
			s, p = s[m:], p[n:]
		default:
			if r == '\\' && len(p) > n {
				p = p[n:]
				r, n = utf8.DecodeRuneInString(p)
			}
			c, m := utf8.DecodeRuneInString(s)
			if s == "" || c != r {
				return false
			}
			s, p = s[m:], p[n:]
		}
	}
	return s == ""
}

// scoresFunc is calculate_quote_scores(quotes [, client_preferences [,
// weights]]): JSON text in, the ranked scores as a JSON array out.
func scoresFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	if len(args) < 1 || len(args) > 3 {
		return nil, errors.New(argErrorPrefix + "calculate_quote_scores takes quotes, client_preferences and weights")
	}
	var in [3]json.RawMessage
	for i, a := range args {
		if a == nil {
			continue
		}
		s, ok := text(a)
		if !ok {
			return nil, errors.New(argErrorPrefix + "arguments must be JSON text")
		}
		in[i] = json.RawMessage(s)
	}
	if len(in[0]) == 0 {
		return nil, errors.New(argErrorPrefix + "quotes must be a JSON array of quote objects")
	}
	scores, err := scoring.Calculate(in[0], in[1], in[2])
	if err != nil {
		return nil, errors.New(argErrorPrefix + err.Error())
	}
	out, err := json.Marshal(scores)
	if err != nil {
		return nil, err
	}
	return string(out), nil
}

// function is a function the embedded database offers to calls.
type function struct {
	name   string
	params []param
}

type param struct {
	name, typ string
	optional  bool
}

var functions = map[string]function{
	"calculate_quote_scores": {name: "calculate_quote_scores", params: []param{
		{name: "quotes", typ: "jsonb"},
		{name: "client_preferences", typ: "jsonb", optional: true},
		{name: "weights", typ: "jsonb", optional: true},
	}},
}
