// Command echo-mcp is the smallest server the kit builds: one tool that
// echoes its text and one that always fails, for mcptest's own tests.
package main

import (
	"context"
	"errors"
	"os"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type echoOut struct {
	Text string `json:"text"`
}

func spec() kit.Spec {
	return kit.Spec{Info: kit.Info{Name: "echo", Version: "test"}, Summary: "echo for tests",
		Setup: func(ctx context.Context, env *kit.Env) ([]kit.Tool, func(), error) {
			echo := kit.NewTool(kit.Tool{Name: "echo", Title: "Echo", Description: "Echo the text back.", Effect: kit.ReadOnly},
				func(_ context.Context, _ *kit.Call, in echoIn) (echoOut, error) { return echoOut(in), nil })
			fail := kit.NewTool(kit.Tool{Name: "fail", Title: "Fail", Description: "Always fail.", Effect: kit.ReadOnly},
				func(_ context.Context, _ *kit.Call, in echoIn) (echoOut, error) {
					if in.Text == "" {
						return echoOut{}, errors.New("no text")
					}
					return echoOut{}, mcperr.Invalid("text", in.Text, "nothing", "this tool takes no text")
				})
			return []kit.Tool{echo, fail}, func() {}, nil
		}}
}

func main() {
	os.Exit(kit.Main(spec(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}
