package embedded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/backend"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
)

// Types as PostgreSQL names them; the embedded schema declares the short
// forms (TIMESTAMPTZ, JSONB…).
const (
	typeTimestamp = "timestamp with time zone"
	typeDate      = "date"
)

// pgType maps a declared SQLite type to PostgreSQL's name.
func pgType(declared string) string {
	switch t := strings.ToLower(strings.TrimSpace(declared)); t {
	case "timestamptz":
		return typeTimestamp
	case "":
		return "text"
	default:
		return t
	}
}

// timestampLayout is how timestamps are stored and returned: UTC, the form
// PostgreSQL's JSON output takes (microseconds at most, no trailing zeros).
const timestampLayout = "2006-01-02T15:04:05.999999-07:00"

var timestampInputs = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07", "2006-01-02T15:04:05.999999999Z07", "2006-01-02 15:04:05.999999999", "2006-01-02"}

func invalidInput(typ, s string) error {
	e := backend.NewDBError("22P02", fmt.Sprintf("invalid input syntax for type %s: %q", typ, s), "", "")
	return e
}

// timestamp parses the forms PostgreSQL accepts most often; a time without
// a zone is UTC.
func timestamp(s string) (string, error) {
	s = strings.TrimSpace(s)
	for _, layout := range timestampInputs {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Round(time.Microsecond).Format(timestampLayout), nil
		}
	}
	return "", invalidInput(typeTimestamp, s)
}

func date(s string) (string, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.Format("2006-01-02"), nil
	}
	for _, layout := range timestampInputs {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format("2006-01-02"), nil
		}
	}
	return "", invalidInput(typeDate, s)
}

func boolean(s string) (any, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "t", "yes", "on", "1":
		return int64(1), nil
	case "false", "f", "no", "off", "0":
		return int64(0), nil
	}
	return nil, invalidInput("boolean", s)
}

func integer(s string) (any, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	return nil, invalidInput("integer", s)
}

func numeric(s string) (any, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f, nil
	}
	return nil, invalidInput("numeric", s)
}

// convert turns the text of a value into what the column stores.
func convert(typ, s string) (any, error) {
	switch typ {
	case typeTimestamp:
		return timestamp(s)
	case typeDate:
		return date(s)
	case "boolean":
		return boolean(s)
	case "integer", "bigint", "smallint":
		return integer(s)
	case "numeric", "real", "double precision":
		return numeric(s)
	}
	return s, nil
}

func bindValue(col *query.Column, v query.Value) (any, error) {
	if v.Kind == query.Null {
		return nil, nil
	}
	if query.IsJSONType(col.Type) {
		return v.Text, nil
	}
	return convert(col.Type, v.Text)
}

func bindJSON(col *query.Column, raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return nil, nil
	}
	if query.IsJSONType(col.Type) {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, invalidInput("json", string(raw))
		}
		return b.String(), nil
	}
	var text string
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, invalidInput(col.Type, string(raw))
		}
	case '{', '[':
		if col.Type != "text" {
			return nil, invalidInput(col.Type, string(raw))
		}
		return string(raw), nil
	default:
		text = string(raw)
	}
	return convert(col.Type, text)
}

var dialect = &query.Dialect{BindValue: bindValue, BindJSON: bindJSON}
