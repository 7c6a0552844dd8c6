// Package kit is what an mcp-fleet server is written with. A server
// declares its tools — each a definition beside its handler, typed by its
// argument and result structs (NewTool) — and its resources and resource
// templates; its main calls Main with a Spec, which parses flags and
// environment, runs Setup, subcommands, extra listeners and background
// workers, and serves the tools over stdio or HTTP under one signal-aware
// shutdown.
//
// The protocol engine (wire format, dispatch, transports, sessions,
// notifications, budgets, the pipeline in front of every call) lives in
// kit/internal/engine, out of the authors' sight. The kit checks every
// definition, turns it into the engine's record, and gives each handler a
// Call: its arguments, identity, logger, result budget and the ways to reach
// the client while it runs.
package kit

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/budget"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/engine"
)

// Info names a server.
type Info = engine.Info

// Options are the settings of one server; Main fills them from flags and
// environment, tests set them directly.
type Options = engine.Options

// Limits bound concurrent work and memory; zero fields take defaults.
type Limits = budget.Limits

// HTTPOptions configure the HTTP side: streamable HTTP at /mcp, /healthz,
// /metrics, and optionally the 2024-11-05 SSE transport.
type HTTPOptions = engine.HTTPOptions

// DefaultMaxResultBytes is the result budget when none is configured
// (--max-result-bytes).
const DefaultMaxResultBytes = budget.DefaultMaxResultBytes

// Server is a configured MCP server, for tests and programs that serve it
// themselves; a server binary lets Main build and run it.
type Server struct {
	e *engine.Server
}

// New checks and registers tools and resources. A malformed definition, an
// unknown name in Include/Exclude, or a duplicate is an error.
func New(info Info, tools []Tool, opts Options) (*Server, error) {
	list := make([]engine.Tool, 0, len(tools))
	for i := range tools {
		t, err := tools[i].engineTool()
		if err != nil {
			return nil, err
		}
		list = append(list, t)
	}
	e, err := engine.New(info, list, opts)
	if err != nil {
		return nil, err
	}
	return &Server{e: e}, nil
}

// Handle serves one JSON-RPC request outside any transport, as an
// initialized session of agent would, and returns the response. Tests and
// generators use it (for example to snapshot tools/list).
func (s *Server) Handle(ctx context.Context, agent string, msg []byte) []byte {
	return s.e.Handle(ctx, agent, msg)
}

// ServeStdio serves newline-delimited JSON-RPC on in and out as agent
// until in ends or ctx is done.
func (s *Server) ServeStdio(ctx context.Context, agent string, in io.Reader, out io.Writer) error {
	return s.e.ServeStdio(ctx, agent, in, out)
}

// ServeHTTP listens on o.Addr until ctx ends, then shuts down gracefully:
// it stops accepting, ends event streams and sessions, and gives requests
// in flight up to o.Grace to finish. ready, when set, learns the address.
func (s *Server) ServeHTTP(ctx context.Context, o HTTPOptions, ready func(addr net.Addr)) error {
	return s.e.ServeHTTP(ctx, o, ready)
}

// HTTPHandler returns the full HTTP handler and a function that, at
// shutdown, ends its event streams, waits (until ctx ends) for requests
// answered on SSE streams, and ends its sessions.
func (s *Server) HTTPHandler(o HTTPOptions) (http.Handler, func(ctx context.Context), error) {
	return s.e.HTTPHandler(o)
}

// ToolNames lists the served tools, sorted.
func (s *Server) ToolNames() []string { return s.e.ToolNames() }

// engineTool is the definition as the engine serves it, once checked. The
// handler gets a Call over the engine's; a Fenced result reaches the engine
// as the Untrusted value it stands for.
func (t *Tool) engineTool() (engine.Tool, error) {
	if err := t.check(); err != nil {
		return engine.Tool{}, err
	}
	def, advertised, err := t.listJSON()
	if err != nil {
		return engine.Tool{}, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	h := t.Handler
	return engine.Tool{Name: t.Name, Description: t.Description, Effect: t.Effect.String(),
		Idempotent: t.Idempotent, OpenWorld: t.OpenWorld, Def: def, Advertised: advertised,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Paging: t.Paging,
		Timeout: t.Timeout, MaxConcurrent: t.MaxConcurrent, AuditOmit: t.AuditOmit,
		Handler: func(ctx context.Context, ec *engine.Call) (any, error) {
			out, err := h(ctx, &Call{Tool: ec.Tool, Agent: ec.Agent, Args: ec.Args, Log: ec.Log, e: ec})
			if f, ok := out.(fencedResult); ok {
				out = f.untrusted()
			}
			return out, err
		}}, nil
}
