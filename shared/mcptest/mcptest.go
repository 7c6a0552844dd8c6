// Package mcptest drives servers the way MCP clients do, for tests: an
// in-process client on a kit.Server (fast, with the agent identity of your
// choice), and a real stdio client on a built binary (the full process, real
// pipes). Helpers decode results and error bodies so tests assert on them.
package mcptest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/untrusted"
)

// Client is an initialized MCP client bound to a test.
type Client struct {
	t      testing.TB
	c      *client.Client
	agent  string
	stderr *Buffer // stdio clients only: what the server logged
	Init   *mcp.InitializeResult
}

// NewInProcess connects a real MCP client (mcp-go's) to s through a pair of
// pipes served by s.ServeStdio, calling as agent: the same engine a stdio
// process runs, without a process. Options are mcp-go client options (for
// example client.WithElicitationHandler, client.WithLegacyProtocolOnly).
func NewInProcess(t testing.TB, s *kit.Server, agent string, opts ...client.ClientOption) *Client {
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
	// The transport keeps Start's context to answer the server's requests
	// (elicitation, roots), so it must outlive the test's calls.
	if err := tr.Start(context.Background()); err != nil {
		t.Fatalf("start the client transport: %v", err)
	}
	cl := &Client{t: t, c: client.NewClient(tr, opts...), agent: agent}
	t.Cleanup(func() {
		_ = clientOut.Close()
		_ = clientIn.Close() // a server write still in flight must not block its exit
		cancel()
		<-done
	})
	cl.start()
	return cl
}

func (c *Client) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

func (c *Client) start() {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	if err := c.c.Start(ctx); err != nil {
		c.t.Fatalf("start client: %v", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "mcptest", Version: "1"}
	res, err := c.c.Initialize(ctx, req)
	if err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	c.Init = res
	c.t.Cleanup(func() { _ = c.c.Close() })
}

// Raw returns the underlying mcp-go client.
func (c *Client) Raw() *client.Client { return c.c }

// ListTools returns tools/list.
func (c *Client) ListTools() []mcp.Tool {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	res, err := c.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		c.t.Fatalf("tools/list: %v", err)
	}
	return res.Tools
}

// ToolNames returns the names from tools/list.
func (c *Client) ToolNames() []string {
	var out []string
	for _, t := range c.ListTools() {
		out = append(out, t.Name)
	}
	return out
}

// Call invokes a tool; a protocol-level error fails the test.
func (c *Client) Call(name string, args any) *mcp.CallToolResult {
	c.t.Helper()
	res, err := c.CallErr(context.Background(), name, args)
	if err != nil {
		c.t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// CallErr invokes a tool and returns protocol errors to the caller.
func (c *Client) CallErr(parent context.Context, name string, args any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(parent, 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return c.c.CallTool(ctx, req)
}

// OK asserts a successful result and decodes its JSON text into v (if
// non-nil). Text fenced as untrusted data is decoded from inside the fence.
func OK(t testing.TB, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool failed: %s", Text(res))
	}
	if v != nil {
		text := Text(res)
		if inner, ok := untrusted.Unfence(text); ok {
			text = inner
		}
		if err := json.Unmarshal([]byte(text), v); err != nil {
			t.Fatalf("decode result %q: %v", text, err)
		}
	}
}

// Structured asserts a successful result and decodes its structuredContent
// into v.
func Structured(t testing.TB, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool failed: %s", Text(res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil || res.StructuredContent == nil {
		t.Fatalf("result has no structuredContent: %s", Text(res))
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode structuredContent %s: %v", raw, err)
	}
}

// Fail asserts an error result and returns its structured body.
func Fail(t testing.TB, res *mcp.CallToolResult) mcperr.Body {
	t.Helper()
	if !res.IsError {
		t.Fatalf("expected an error result, got: %s", Text(res))
	}
	var b mcperr.Body
	if err := json.Unmarshal([]byte(Text(res)), &b); err != nil {
		t.Fatalf("error body %q is not the structured error shape: %v", Text(res), err)
	}
	return b
}

// FailCode asserts an error result with the given code and returns its body.
func FailCode(t testing.TB, res *mcp.CallToolResult, code mcperr.Code) mcperr.Body {
	t.Helper()
	b := Fail(t, res)
	if b.Code != code {
		t.Fatalf("error code = %s, want %s (message %q)", b.Code, code, b.Message)
	}
	return b
}

// Text concatenates the text contents of a result.
func Text(res *mcp.CallToolResult) string {
	var buf bytes.Buffer
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			buf.WriteString(tc.Text)
		}
	}
	return buf.String()
}

var builds sync.Map // package path → *buildResult

type buildResult struct {
	once sync.Once
	path string
	err  error
}

// Build compiles a main package (an import path or ./relative dir, as go
// build takes it) once per test binary and returns the binary's path.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	v, _ := builds.LoadOrStore(pkg, &buildResult{})
	b := v.(*buildResult)
	b.once.Do(func() {
		// One stable place per checkout and package, reused by every run: go
		// build is incremental and nothing piles up in the temp directory,
		// while two checkouts on one machine never run each other's builds.
		dir := filepath.Join(os.TempDir(), "mcptest-bin", checkoutKey(), strings.NewReplacer("/", "_", ".", "_").Replace(pkg))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, filepath.Base(pkg))
		// Built as `make build` builds: static, no cgo.
		cmd := exec.Command("go", "build", "-trimpath", "-o", b.path, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatalf("%v", b.err)
	}
	return b.path
}

// StartStdio runs bin with env (added to a minimal environment) and args,
// and connects a real stdio client to it. The server's stderr is captured in
// Client.Stderr.
func StartStdio(t testing.TB, bin string, env []string, args ...string) *Client {
	return StartStdioWith(t, bin, env, args, nil)
}

// StartStdioWith is StartStdio with mcp-go client options.
func StartStdioWith(t testing.TB, bin string, env []string, args []string, opts []client.ClientOption) *Client {
	t.Helper()
	stderr := &Buffer{}
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	tr := transport.NewStdioWithOptions(bin, append(base, env...), args,
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = env
			cmd.Stderr = stderr
			return cmd, nil
		}))
	if err := tr.Start(context.Background()); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	c := &Client{t: t, c: client.NewClient(tr, opts...), stderr: stderr}
	c.start()
	return c
}

// Stderr returns what a stdio server has written to stderr so far.
func (c *Client) Stderr() string {
	if c.stderr == nil {
		return ""
	}
	return c.stderr.String()
}

// Buffer is an io.Writer that goroutines may write while a test reads what
// they wrote: a server's log sink, or a child process's stderr. It is the
// buffer stdio clients capture the server's stderr in. The zero value is
// ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// Reset forgets everything written so far, for a test that looks at what
// is written from a point on.
func (s *Buffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Reset()
}

// checkoutKey names the checkout the test runs in: a hash of the directory
// holding go.work above the working directory (or of the working directory).
func checkoutKey() string {
	dir, err := checkoutRoot()
	if err != nil {
		if dir, err = os.Getwd(); err != nil {
			return "unknown"
		}
	}
	sum := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(sum[:6])
}

// checkoutRoot is the nearest directory at or above the working directory
// that holds go.work.
func checkoutRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work at or above %s", dir)
		}
	}
}
