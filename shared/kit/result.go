package kit

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcp-fleet/mcp-fleet/shared/textcut"

	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
)

// A tool result travels twice: as structuredContent, and as the same JSON
// escaped once more in the text content, for clients that read only text.
// The result budget (Limits.MaxResultBytes, --max-result-bytes) caps the
// two together. Tools whose output can be large (files, command output,
// pages, rows, mail) fit their content into Room with Clip and CostJSON,
// say that they cut it, and say how to get the rest; the kit refuses any
// result still over the budget with an error that says how to ask for less,
// so no single answer can end a client's session.

// resultReserve is the part of the budget kept for the envelope, the
// fence around untrusted content and a tool's own small fields.
const resultReserve = 4 << 10

// Room is the cost (see Cost) a handler may spend on the variable part of
// its result: the budget less a reserve for everything else.
func (c *Call) Room() int { return c.e.ResultBudget() - resultReserve }

// Cost is what the string s costs in a result: its JSON escape in
// structuredContent plus that escape escaped again in the text.
func Cost(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n += byteCost(s[i])
	}
	return n
}

// byteCost: structured escape (encoding/json, which also escapes <, > and
// & as \u003c…) and the text's escape of that.
func byteCost(b byte) int {
	switch {
	case b == '"' || b == '\\':
		return 2 + 4
	case b == '\n' || b == '\r' || b == '\t':
		return 2 + 3
	case b < 0x20 || b == '<' || b == '>' || b == '&':
		return 6 + 7
	}
	return 2
}

// Clip returns the longest prefix of s, cut at a character boundary, whose
// Cost is at most limit, and whether anything was cut.
func Clip(s string, limit int) (string, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		n += byteCost(s[i])
		if n > limit {
			return textcut.Prefix(s, i), true
		}
	}
	return s, false
}

// CostJSON is what an encoded JSON value costs in a result (see Cost).
func CostJSON(b []byte) int {
	n := 2 * len(b)
	for _, c := range b {
		if c == '"' || c == '\\' {
			n++
		}
	}
	return n
}

// CostOf is what v costs in a result, encoded as JSON (see CostJSON). A
// value that does not encode costs 0: the result holding it fails anyway.
func CostOf(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return CostJSON(b)
}

// FitItems returns how many of items, from the first, fit in room as the
// elements of a JSON array (CostJSON, with the commas), so that a tool
// listing rows, messages or entries can return the ones that fit and a
// cursor or offset for the rest. An item that cannot be encoded is an error.
// Items that are JSON already (json.RawMessage) are measured as they are.
func FitItems[T any](items []T, room int) (int, error) {
	used := 4 // the brackets, in both encodings
	for i, it := range items {
		b, ok := any(it).(json.RawMessage)
		if !ok {
			var err error
			if b, err = json.Marshal(it); err != nil {
				return i, err
			}
		}
		used += CostJSON(b) + 2
		if used > room {
			return i, nil
		}
	}
	return len(items), nil
}

// errFull stops FitArray's walk at the first element over the room.
var errFull = errors.New("full")

// FitArray returns the elements, from the first, of the encoded JSON array
// raw that fit in room (counted as FitItems counts them), and whether they
// are all of its elements. A tool that holds its rows as JSON already (a
// database's answer) pages them this way without decoding them. An empty
// raw or null is an empty array.
func FitArray(raw json.RawMessage, room int) (items []json.RawMessage, all bool, err error) {
	items = []json.RawMessage{}
	if len(raw) == 0 || string(raw) == "null" {
		return items, true, nil
	}
	used := 4
	err = wire.Elements(raw, func(el []byte) error {
		if used += CostJSON(el) + 2; used > room {
			return errFull
		}
		items = append(items, el)
		return nil
	})
	switch {
	case errors.Is(err, errFull):
		return items, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("not a JSON array: %w", err)
	}
	return items, true, nil
}
