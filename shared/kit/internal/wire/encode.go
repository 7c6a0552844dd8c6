package wire

import (
	"strconv"

	"github.com/mcp-fleet/mcp-fleet/shared/jsontext"
	"github.com/mcp-fleet/mcp-fleet/shared/textcut"
)

func appendID(dst, id []byte) []byte {
	if len(id) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

// AppendResult appends a whole response: {"jsonrpc":"2.0","id":…,"result":…}.
// result must be one JSON value.
func AppendResult(dst, id, result []byte) []byte {
	if dst == nil {
		dst = make([]byte, 0, len(id)+len(result)+40)
	}
	dst = AppendResultHead(dst, id)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendResultHead appends a response's opening up to its result,
// {"jsonrpc":"2.0","id":…,"result":, for a result written in place after
// it; a '}' closes the response.
func AppendResultHead(dst, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	return append(dst, `,"result":`...)
}

// AppendError appends an error response. data, if not nil, must be one JSON
// value. A nil id is written as null (the request's id could not be read).
func AppendError(dst, id []byte, code int, message string, data []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = jsontext.AppendString(dst, message)
	if data != nil {
		dst = append(dst, `,"data":`...)
		dst = append(dst, data...)
	}
	return append(dst, "}}"...)
}

// AppendNotification appends a notification; params may be nil.
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = jsontext.AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendRequest appends a request the server sends to its client.
func AppendRequest(dst, id []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"method":`...)
	dst = jsontext.AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// Truncate shortens s to at most n bytes on a rune boundary, marking the cut,
// so that names and values echoed in errors stay small.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return textcut.Prefix(s, n) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
