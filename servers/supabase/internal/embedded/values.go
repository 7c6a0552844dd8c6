package embedded

import (
	"bytes"
	"encoding/json"
	"errors"
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
	state := "22P02"
	if typ == typeTimestamp || typ == typeDate {
		state = "22007" // invalid_datetime_format, as PostgreSQL reports a bad date
	}
	return backend.NewDBError(state, fmt.Sprintf("invalid input syntax for type %s: %q", typ, s), "", "")
}

// special reads PostgreSQL's special date/time inputs: epoch, now, today,
// yesterday, tomorrow (the session's time zone is UTC, as the embedded
// database's), and infinity, -infinity, which it keeps as those words: as
// text they sort after and before every date, as in PostgreSQL.
func special(s string, now time.Time) (t time.Time, word string, ok bool) {
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	switch strings.ToLower(s) {
	case "epoch":
		return time.Unix(0, 0).UTC(), "", true
	case "now":
		return now, "", true
	case "today":
		return day, "", true
	case "yesterday":
		return day.AddDate(0, 0, -1), "", true
	case "tomorrow":
		return day.AddDate(0, 0, 1), "", true
	case "infinity", "+infinity":
		return time.Time{}, "infinity", true
	case "-infinity":
		return time.Time{}, "-infinity", true
	}
	return time.Time{}, "", false
}

// timestamp parses the forms PostgreSQL accepts most often; a time without
// a zone is UTC.
func timestamp(s string) (string, error) {
	s = strings.TrimSpace(s)
	if t, word, ok := special(s, time.Now().UTC()); ok {
		if word != "" {
			return word, nil
		}
		return t.Round(time.Microsecond).Format(timestampLayout), nil
	}
	for _, layout := range timestampInputs {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Round(time.Microsecond).Format(timestampLayout), nil
		}
	}
	return "", invalidInput(typeTimestamp, s)
}

func date(s string) (string, error) {
	s = strings.TrimSpace(s)
	if t, word, ok := special(s, time.Now().UTC()); ok && strings.ToLower(s) != "now" {
		if word != "" {
			return word, nil
		}
		return t.Format("2006-01-02"), nil
	} else if ok {
		return t.Format("2006-01-02"), nil
	}
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

// integer reads an integer of the column's type, refusing what does not
// fit as PostgreSQL does (SQLite would store any 64-bit value).
func integer(typ, s string) (any, error) {
	s = strings.TrimSpace(s)
	bits := map[string]int{"smallint": 16, "integer": 32, "bigint": 64}[typ]
	n, err := strconv.ParseInt(s, 10, bits)
	if err == nil {
		return n, nil
	}
	if errors.Is(err, strconv.ErrRange) {
		return nil, backend.NewDBError("22003", fmt.Sprintf("value %q is out of range for type %s", s, typ), "", "")
	}
	return nil, invalidInput(typ, s)
}

// noNUL refuses a NUL character, which PostgreSQL's text cannot hold.
func noNUL(s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return backend.NewDBError("22021", `invalid byte sequence for encoding "UTF8": 0x00`, "", "remove the NUL character")
	}
	return nil
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
		return integer(typ, s)
	case "numeric", "real", "double precision":
		return numeric(s)
	}
	if err := noNUL(s); err != nil {
		return nil, err
	}
	return s, nil
}

// canonicalJSON is the form in which jsonb values are compared: keys
// sorted, a duplicate key's last value kept, no spaces — as PostgreSQL's
// jsonb, where '{"b":1,"a":2}' equals '{"a":2, "b":1}'. Text that is not
// JSON is refused as PostgreSQL refuses it.
func canonicalJSON(s string) (string, error) {
	v, err := decodeJSON(s)
	if err != nil {
		return "", invalidInput("json", s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", invalidInput("json", s)
	}
	if strings.Contains(string(b), `\u0000`) {
		return "", backend.NewDBError("22P05", "unsupported Unicode escape sequence", `\u0000 cannot be converted to text.`, "")
	}
	return string(b), nil
}

// decodeJSON decodes the one JSON value s holds, numbers as json.Number so
// that they keep every digit; a second value after it is an error.
func decodeJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

func bindValue(col *query.Column, v query.Value) (any, error) {
	if v.Kind == query.Null {
		return nil, nil
	}
	if query.IsJSONType(col.Type) {
		return canonicalJSON(v.Text)
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

var dialect = &query.Dialect{BindValue: bindValue, BindJSON: bindJSON, TypeError: func(msg string) error {
	return backend.NewDBError("42804", msg, "", "")
}}
