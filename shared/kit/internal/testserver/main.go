// Command testserver is a small server on the kit for tests and real-client
// checks of what no production server exercises on its own: a tool that
// asks the user (elicitation), a background worker whose health a tool can
// break, and a second listener beside the transport. It is built by the
// kit's tests and by `make sdk-check`; it is not shipped.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/schema"
)

type confirmArgs struct {
	Action string `json:"action" jsonschema:"what to do once the user agrees" mcp:"minLength=1"`
}

type sleepArgs struct {
	MS int `json:"ms" jsonschema:"milliseconds to sleep" mcp:"min=0,max=60000"`
}

type noArgs struct{}

type bumpArgs struct {
	Updates int `json:"updates" jsonschema:"how many updates to make" mcp:"min=1,max=1000000"`
	URIs    int `json:"uris" jsonschema:"spread over this many counters" mcp:"min=1,max=10000"`
}

func main() {
	os.Exit(kit.Main(spec(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

func spec() kit.Spec {
	var sideAddr string
	var broken atomic.Bool
	return kit.Spec{
		Info:    kit.Info{Name: "testserver", Version: "test", Instructions: "A server for the kit's own tests."},
		Summary: "the kit's test server", DefaultPort: 3099,
		Flags: func(f *cli.Flags) {
			f.String(&sideAddr, "side-addr", []string{"TESTSERVER_SIDE_ADDR"}, "127.0.0.1:0", "address of the side listener (serves /healthz)")
		},
		Setup: func(ctx context.Context, env *kit.Env) ([]kit.Tool, func(), error) {
			env.AddWorker(kit.Worker{Name: "ticker", Run: func(ctx context.Context) error {
				t := time.NewTicker(50 * time.Millisecond)
				defer t.Stop()
				for {
					select {
					case <-ctx.Done():
						env.Logger.Info().Msg("ticker stopped")
						return nil
					case <-t.C:
						if broken.Load() {
							env.Health.Set("worker ticker", errors.New("ticker is stuck"))
						} else {
							env.Health.Set("worker ticker", nil)
						}
					}
				}
			}})
			env.AddListener(kit.Listener{Name: "side", Addr: sideAddr, Handler: env.Health.HealthHandler(map[string]any{"server": "testserver-side"}),
				Ready: func(a net.Addr) { env.Logger.Info().Str("side_addr", a.String()).Msg("side listener ready") }})
			var mu sync.Mutex
			counters := map[string]int{}
			env.AddTemplate(kit.ResourceTemplate{URITemplate: "counter://{id}", Name: "counter", MIMEType: "text/plain",
				Description: "A counter that bump changes.", Tools: []string{"bump"},
				Read: func(ctx context.Context, r *kit.ReadRequest) ([]kit.Contents, error) {
					mu.Lock()
					defer mu.Unlock()
					return []kit.Contents{{Text: strconv.Itoa(counters[r.Vars["id"]])}}, nil
				}})
			tools := []kit.Tool{
				{Name: "bump", Description: "Increment counters, notifying subscribers of each change.", InputSchema: schema.MustFor[bumpArgs](),
					Effect: kit.Additive,
					Handler: func(ctx context.Context, c *kit.Call) (any, error) {
						var a bumpArgs
						if err := json.Unmarshal(c.Args, &a); err != nil {
							return nil, err
						}
						for i := 0; i < a.Updates; i++ {
							id := strconv.Itoa(i % a.URIs)
							mu.Lock()
							counters[id]++
							mu.Unlock()
							c.Notifier().Updated("counter://" + id)
						}
						return map[string]any{"updates": a.Updates}, nil
					}},
				{Name: "confirm", Title: "Ask, then act", Description: "Ask the user to confirm an action, then report what they said.",
					InputSchema: schema.MustFor[confirmArgs](), Effect: kit.Additive,
					Handler: func(ctx context.Context, c *kit.Call) (any, error) {
						var a confirmArgs
						if err := json.Unmarshal(c.Args, &a); err != nil {
							return nil, err
						}
						res, err := c.Elicit(ctx, "Do this: "+a.Action+"?", json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean","title":"Go ahead"}},"required":["ok"]}`))
						if err != nil {
							return nil, err
						}
						return map[string]any{"action": res.Action, "content": res.Content, "done": res.Action == "accept"}, nil
					}},
				{Name: "sleep", Description: "Sleep, then answer; cancellable.", InputSchema: schema.MustFor[sleepArgs](), Effect: kit.ReadOnly,
					Handler: func(ctx context.Context, c *kit.Call) (any, error) {
						var a sleepArgs
						if err := json.Unmarshal(c.Args, &a); err != nil {
							return nil, err
						}
						// A test that signals the process mid-call waits for this line.
						fmt.Fprintln(os.Stderr, `{"level":"info","message":"sleeping"}`)
						select {
						case <-time.After(time.Duration(a.MS) * time.Millisecond):
							return map[string]any{"slept_ms": a.MS}, nil
						case <-ctx.Done():
							return nil, ctx.Err()
						}
					}},
				{Name: "break_worker", Description: "Make the ticker worker report that it is stuck.", InputSchema: schema.MustFor[noArgs](),
					Effect: kit.Destructive, Idempotent: true,
					Handler: func(ctx context.Context, c *kit.Call) (any, error) {
						broken.Store(true)
						return "broken", nil
					}},
			}
			return tools, nil, nil
		},
	}
}
