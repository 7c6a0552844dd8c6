package charter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/untrusted"
)

// callTimeout bounds one tool call or read; the local backends answer in
// milliseconds, so reaching it means something is stuck.
const callTimeout = 30 * time.Second

// session is one agent's connection to one server: the server's binary
// started over stdio with the agent's identity, and a real MCP client.
type session struct {
	agent, server string
	c             *client.Client
	modern        bool
	events        chan mcp.JSONRPCNotification
	stopListen    func()
	log           *os.File
}

// dial starts server's binary as agent and initializes the connection. The
// child gets only the environment env (never the caller's: a SUPABASE_URL or
// Google token there must not turn the demo into calls to real services);
// its stderr goes to logPath.
func dial(ctx context.Context, bin, agent, server string, env []string, logPath string) (*session, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	tr := transport.NewStdioWithOptions(bin, env, nil,
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = env
			cmd.Stderr = logFile
			return cmd, nil
		}))
	if err := tr.Start(ctx); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s as %s: %w", filepath.Base(bin), agent, err)
	}
	s := &session{agent: agent, server: server, c: client.NewClient(tr), log: logFile,
		events: make(chan mcp.JSONRPCNotification, 256)}
	s.c.OnNotification(func(n mcp.JSONRPCNotification) {
		select {
		case s.events <- n:
		default: // the demo reads the resource again on the next update; a full buffer loses nothing it needs
		}
	})
	ictx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := s.c.Start(ictx); err != nil {
		s.close()
		return nil, fmt.Errorf("%s as %s: %w", server, agent, err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "charter-demo/" + agent, Version: "1"}
	res, err := s.c.Initialize(ictx, req)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("%s as %s: initialize: %w (its log: %s)", server, agent, err, logPath)
	}
	s.modern = res.ProtocolVersion >= mcp.ProtocolVersion20260728
	return s, nil
}

func (s *session) close() {
	if s.stopListen != nil {
		s.stopListen()
	}
	_ = s.c.Close()
	_ = s.log.Close()
}

// callError is a tool call that failed: the server's structured error.
type callError struct {
	Tool string
	Body mcperr.Body
}

func (e *callError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Tool, e.Body.Code, e.Body.Message)
}

// call runs a tool and decodes its structuredContent into out (when not
// nil). A tool error comes back as *callError.
func (s *session) call(ctx context.Context, tool string, args any, out any) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		var b mcperr.Body
		if err := json.Unmarshal([]byte(text(res.Content)), &b); err != nil || b.Code == "" {
			b = mcperr.Body{Code: "UNKNOWN", Message: text(res.Content)}
		}
		return &callError{Tool: tool, Body: b}
	}
	if out == nil {
		return nil
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil || res.StructuredContent == nil {
		return fmt.Errorf("%s: the result has no structuredContent", tool)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: decode its result: %w", tool, err)
	}
	return nil
}

// subscribe asks for notifications/resources/updated of uri — with
// subscriptions/listen on protocol 2026-07-28, resources/subscribe before
// — and returns once the server has taken the subscription.
func (s *session) subscribe(ctx context.Context, uri string) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if !s.modern {
		req := mcp.SubscribeRequest{}
		req.Params.URI = uri
		//lint:ignore SA1019 the connection speaks a protocol before 2026-07-28, where this is how to subscribe
		return s.c.Subscribe(ctx, req)
	}
	failed := make(chan error, 1)
	stop, err := s.c.ListenAsync(context.Background(), mcp.SubscriptionFilter{ResourceSubscriptions: []string{uri}},
		func(err error) { failed <- err })
	if err != nil {
		return err
	}
	s.stopListen = stop
	for {
		select {
		case n := <-s.events:
			if n.Method == mcp.MethodNotificationSubscriptionsAcknowledged {
				return nil
			}
		case err := <-failed:
			return fmt.Errorf("subscriptions/listen: %w", err)
		case <-ctx.Done():
			return errors.New("subscriptions/listen: the server never acknowledged the subscription")
		}
	}
}

// read returns a resource's text decoded into out.
func (s *session) read(ctx context.Context, uri string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := s.c.ReadResource(ctx, req)
	if err != nil {
		return fmt.Errorf("read %s: %w", uri, err)
	}
	for _, c := range res.Contents {
		if tc, ok := c.(mcp.TextResourceContents); ok {
			body := tc.Text
			if inner, fenced := untrusted.Unfence(body); fenced {
				body = inner
			}
			return json.Unmarshal([]byte(body), out)
		}
	}
	return fmt.Errorf("read %s: no text contents", uri)
}

// updated waits for the next notifications/resources/updated of uri.
func (s *session) updated(ctx context.Context, uri string) error {
	for {
		select {
		case n := <-s.events:
			if n.Method != "notifications/resources/updated" {
				continue
			}
			if got, _ := n.Params.AdditionalFields["uri"].(string); got == uri {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func text(content []mcp.Content) string {
	var b strings.Builder
	for _, c := range content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// syncWriter serialises the transcript's lines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) printf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, format, args...)
}
