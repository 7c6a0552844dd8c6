package kit

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/cli"
)

// healthCommand is the "health" subcommand every server has: it asks a
// running server's /healthz and exits 0 when it answers 200. Container images
// built FROM scratch have no HTTP client, so a compose healthcheck runs the
// server's own binary: ["CMD", "/usr/local/bin/<server>-mcp", "health"].
func healthCommand(spec Spec) Command {
	var url, host string
	var port int
	var timeout time.Duration
	return Command{
		Name:    "health",
		Summary: "ask a running server's /healthz (for container healthchecks): exit 0 when it answers 200, 1 otherwise",
		Flags: func(f *cli.Flags) {
			f.String(&host, "host", []string{"MCP_HOST"}, "127.0.0.1", "the server's address (0.0.0.0 and :: mean this machine)")
			f.Int(&port, "port", []string{"MCP_PORT", "MCP_HTTP_PORT"}, spec.DefaultPort, "the server's HTTP port")
			f.String(&url, "url", []string{"MCP_HEALTH_URL"}, "", "the full /healthz URL, instead of --host and --port")
			f.Duration(&timeout, "timeout", nil, 5*time.Second, "how long to wait for the answer")
		},
		Run: func(ctx context.Context, env *Env) error {
			if url == "" {
				h := host
				if h == "" || h == "0.0.0.0" || h == "::" {
					h = "127.0.0.1"
				}
				url = "http://" + net.JoinHostPort(h, strconv.Itoa(port)) + "/healthz"
			}
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return cli.Usagef("--url %q: %v", url, err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return fmt.Errorf("%s: %w", url, err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			_, _ = env.Stdout.Write(body)
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s answered %d", url, resp.StatusCode)
			}
			return nil
		},
	}
}
