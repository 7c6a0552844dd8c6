package wire

import (
	"bytes"
	"errors"
	"fmt"
)

// JSON-RPC and MCP error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeServerBusy is this server's code for a request refused because
	// the work already in flight uses its budget; it is worth retrying.
	CodeServerBusy = -32000
	// CodeResourceNotFound is the resource-not-found code of protocol
	// versions before 2026-07-28; later ones use CodeInvalidParams.
	CodeResourceNotFound = -32002
	// CodeHeaderMismatch: a standard MCP HTTP header disagrees with the body.
	CodeHeaderMismatch = -32020
	// CodeMissingCapability: the request needs a client capability the
	// client did not declare.
	CodeMissingCapability = -32021
	// CodeUnsupportedVersion: the request's protocol version is unknown.
	CodeUnsupportedVersion = -32022
)

// Kind is what a message is.
type Kind int

const (
	// Invalid: JSON, but not a JSON-RPC message this server accepts.
	Invalid Kind = iota
	Request
	Notification
	// Response: a result or error answering a request this server sent.
	Response
)

// Message is one JSON-RPC message. Its raw members are slices of the input,
// which must not change while the message is in use.
type Message struct {
	Kind Kind
	// HasID: the message has an id member, usable or not.
	HasID     bool
	HasMethod bool
	ID        []byte // raw id; nil when absent or not usable
	Method    string
	Params    []byte // raw params; nil when absent
	Result    []byte
	Error     []byte
	// Problem says why a message is Invalid.
	Problem string
}

// ErrBatch is returned for a JSON array: JSON-RPC batches were removed from
// MCP in 2025-06-18 and are not served.
var ErrBatch = errors.New("JSON-RPC batches are not supported: send one message at a time")

// Parse reads one message. A syntax error or a batch is an error; a message
// that is JSON but not a valid request, notification or response comes back
// with Kind Invalid and a Problem, and with its ID when the id was usable, so
// the error can be matched to the request.
func Parse(b []byte) (Message, error) {
	var m Message
	i := skipSpace(b, 0)
	if i < len(b) && b[i] == '[' {
		if !Valid(b) {
			return m, syntaxErr(i, "invalid JSON")
		}
		return m, ErrBatch
	}
	if i >= len(b) || b[i] != '{' {
		if Valid(b) {
			m.Problem = "a JSON-RPC message is a JSON object"
			return m, nil
		}
		return m, syntaxErr(i, "expected a JSON object")
	}
	var version, rawID, method []byte
	seen := 0
	const (
		fJSONRPC = 1 << iota
		fID
		fMethod
		fParams
		fResult
		fError
	)
	dup := ""
	err := Members(b, func(key string, v []byte) error {
		bit := 0
		switch key {
		case "jsonrpc":
			bit, version = fJSONRPC, v
		case "id":
			bit, rawID = fID, v
		case "method":
			bit, method = fMethod, v
		case "params":
			bit, m.Params = fParams, v
		case "result":
			bit, m.Result = fResult, v
		case "error":
			bit, m.Error = fError, v
		default:
			return nil // unknown members are ignored, as JSON-RPC allows
		}
		if seen&bit != 0 && dup == "" {
			dup = key
		}
		seen |= bit
		return nil
	})
	if err != nil {
		return m, err
	}
	m.HasID, m.HasMethod = seen&fID != 0, seen&fMethod != 0
	if m.HasID && validID(rawID) {
		m.ID = rawID
	}
	switch {
	case dup != "":
		m.Problem = fmt.Sprintf("member %q appears twice", dup)
	case string(version) != `"2.0"`:
		m.Problem = `jsonrpc must be "2.0"`
	case seen&fMethod != 0:
		name, err := String(method)
		switch {
		case err != nil:
			m.Problem = "method must be a string"
		case name == "":
			m.Problem = "method must not be empty"
		case seen&(fResult|fError) != 0:
			m.Problem = "a request has no result or error"
		case seen&fID != 0 && m.ID == nil:
			m.Problem = "id must be a string or an integer"
		case m.Params != nil && !isContainer(m.Params):
			m.Problem = "params must be an object"
			m.Method = name
		default:
			m.Method = name
			if seen&fID != 0 {
				m.Kind = Request
			} else {
				m.Kind = Notification
			}
		}
	case seen&(fResult|fError) != 0:
		if seen&fResult != 0 && seen&fError != 0 {
			m.Problem = "a response has a result or an error, not both"
		} else if m.ID == nil {
			m.Problem = "a response needs the id of its request"
		} else {
			m.Kind = Response
		}
	default:
		m.Problem = "a message needs a method (request or notification) or a result or error (response)"
	}
	return m, nil
}

// validID: MCP ids are strings or integers (not null, fractions, booleans,
// objects or arrays).
func validID(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"':
		return true
	case c == '-' || c >= '0' && c <= '9':
		return !bytes.ContainsAny(raw, ".eE") && len(raw) <= 20
	}
	return false
}

func isContainer(raw []byte) bool { return len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') }

// IDKey canonicalises an id for maps: the string "7" and the number 7 stay
// distinct, and equal ids spelt differently ("\u0061" and "a") match.
func IDKey(raw []byte) string {
	if len(raw) > 0 && raw[0] == '"' {
		if s, err := String(raw); err == nil {
			return "s" + s
		}
		return ""
	}
	if len(raw) == 0 {
		return ""
	}
	neg := raw[0] == '-'
	digits := bytes.TrimLeft(bytes.TrimPrefix(raw, []byte{'-'}), "0")
	if len(digits) == 0 {
		return "n0"
	}
	if neg {
		return "n-" + string(digits)
	}
	return "n" + string(digits)
}
