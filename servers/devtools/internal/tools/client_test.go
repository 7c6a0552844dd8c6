// Some tests drive the 2025-11-25 protocol (initialize handshake,
// resources/subscribe), which mcp-go marks deprecated in favour of
// 2026-07-28; the server serves both eras, so they do so on purpose.
//
//lint:file-ignore SA1019 the 2025-11-25 protocol era is tested on purpose

package tools_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

// mcpClient is what these tests need of a client.
type mcpClient interface {
	Call(name string, args any) *mcp.CallToolResult
	Raw() *client.Client
}

// pipeClient is an mcp-go client on s through pipes, as
// mcptest.NewInProcess makes one, with two differences the resource and
// roots tests need:
//   - its transport is started with a context that outlives the handshake:
//     mcp-go's stdio transport answers the server's requests (roots/list)
//     under the context it was started with, and NewInProcess starts it
//     under one it cancels once initialized, so on protocol 2025-11-25 every
//     roots/list would be answered "context canceled";
//   - its cleanup also closes the pipe the server writes to, so a resource
//     update still being written when the test ends fails instead of
//     blocking the server's shutdown for ever.
type pipeClient struct {
	t *testing.T
	c *client.Client
}

// newPipeClient connects as agent; legacy pins protocol 2025-11-25 (with
// the initialize handshake), else the client negotiates 2026-07-28.
func newPipeClient(t *testing.T, s *kit.Server, agent string, legacy bool, opts ...client.ClientOption) *pipeClient {
	t.Helper()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.ServeStdio(ctx, agent, serverIn, serverOut)
		_ = serverOut.Close()
	}()
	tr := transport.NewIO(clientIn, clientOut, io.NopCloser(strings.NewReader("")))
	must(t, tr.Start(context.Background()))
	version := mcp.LATEST_PROTOCOL_VERSION
	if legacy {
		opts = append(opts, client.WithLegacyProtocolOnly())
		version = "2025-11-25"
	}
	c := client.NewClient(tr, opts...)
	t.Cleanup(func() {
		_ = c.Close()
		_ = clientOut.Close()
		_ = clientIn.Close()
		cancel()
		<-done
	})
	must(t, c.Start(context.Background()))
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcp.Implementation{Name: "devtools-tools-test", Version: "1"}
	if _, err := c.Initialize(context.Background(), req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return &pipeClient{t: t, c: c}
}

func (p *pipeClient) Raw() *client.Client { return p.c }

func (p *pipeClient) Call(name string, args any) *mcp.CallToolResult {
	p.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := p.c.CallTool(context.Background(), req)
	if err != nil {
		p.t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}
