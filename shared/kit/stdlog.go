package kit

import (
	"log"
	"strings"

	"github.com/rs/zerolog"
)

// newStdLogger adapts mcp-go's *log.Logger output to our JSON logs on stderr.
func newStdLogger(l zerolog.Logger) *log.Logger {
	return log.New(zlWriter{l: l}, "", 0)
}

type zlWriter struct{ l zerolog.Logger }

func (w zlWriter) Write(p []byte) (int, error) {
	w.l.Warn().Str("component", "mcp-go").Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}
