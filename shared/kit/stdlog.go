package kit

import (
	"strings"

	"github.com/rs/zerolog"
)

// zlWriter turns mcp-go's own log output into our JSON log lines on stderr,
// so its messages pass the same redaction and never reach stdout.
type zlWriter struct{ l zerolog.Logger }

func (w zlWriter) Write(p []byte) (int, error) {
	w.l.Warn().Str("component", "mcp-go").Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}
