// Command charter-demo plays the charter workflow end to end on the servers'
// local backends — six agents, each a real MCP client over stdio with its own
// identity in the agent policy — and prints the transcript (`make demo`):
//
//	charter-demo [--bin bin] [--policy configs/acl.yaml] [--grant configs/acl.d/x.yaml]... [--dir .demo] [--quote-wait 5s]
//
// The workflow's error-monitor step reads the avinode webhook queue, which
// the least-privilege policy does not grant: `make demo` passes the opt-in
// grant file configs/acl.d/error-monitor-webhook-queue.yaml, and the
// transcript names it.
//
// It exits 0 when the workflow completed with no failed call (the one call
// refused by the policy on purpose aside), 1 otherwise, 2 on bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/charter"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/command"
)

func main() { command.Exit(run) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("charter-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := charter.Config{Out: stdout}
	fs.StringVar(&cfg.Bin, "bin", "bin", "directory of the built servers (make build)")
	fs.StringVar(&cfg.Policy, "policy", "configs/acl.yaml", "the agent policy the servers enforce")
	fs.Func("grant", "an opt-in grant file (configs/acl.d/) widening the policy; repeat for more", func(v string) error {
		cfg.Grants = append(cfg.Grants, v)
		return nil
	})
	fs.StringVar(&cfg.Dir, "dir", ".demo", "the run's state and logs: created, or emptied when a previous run left it")
	fs.DurationVar(&cfg.QuoteWait, "quote-wait", 5*time.Second, "longest wait for every operator to answer before ranking the quotes in hand")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "charter-demo: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if _, err := charter.Run(ctx, cfg); err != nil {
		fmt.Fprintf(stderr, "charter-demo: %v\n", err)
		return 1
	}
	return 0
}
