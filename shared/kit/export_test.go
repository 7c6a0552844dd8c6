package kit

import (
	"context"
	"io"

	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/engine"
)

// RunArgs is Main with the caller's context in place of the signal handler:
// it parses args and the environment, then runs the server until ctx ends.
// Flag errors (including cli.ErrHelp and cli.ErrVersion) are returned as is.
func RunArgs(ctx context.Context, spec Spec, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	f, cfg := serverFlags(spec)
	if err := f.Parse(args, getenv); err != nil {
		return err
	}
	cfg.secrets = f.Secrets()
	return run(ctx, spec, cfg, IO{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv})
}

// Engine is the server's engine, for tests that read its metrics, notifier
// or prompt.
func (s *Server) Engine() *engine.Server { return s.e }
