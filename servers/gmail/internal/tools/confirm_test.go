package tools_test

//lint:file-ignore SA1019 confirmation is checked in both protocol eras, 2025-11-25 (initialize) included

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

type person struct {
	mu     sync.Mutex
	action mcp.ElicitationResponseAction
	asked  []string
}

func (p *person) Elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, r.Params.Message)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: p.action}}, nil
}

// TestConfirmSend: with confirmation on, the person sees recipients,
// subject and a preview before anything is sent, in both protocol eras; a
// decline sends nothing; a client that cannot ask is refused with the way
// to allow unattended sending.
func TestConfirmSend(t *testing.T) {
	args := map[string]any{"to": "zoe@client.example", "cc": []string{"ops@client.example"}, "subject": "Your options", "body": "<p>Three options</p>"}
	for _, legacy := range []bool{true, false} {
		s := localServer(t)
		s.deps.ConfirmSend = true
		p := &person{action: mcp.ElicitationResponseActionAccept}
		opts := []client.ClientOption{client.WithElicitationHandler(p)}
		if legacy {
			opts = append(opts, client.WithLegacyProtocolOnly())
		}
		c := s.connect(t, nil, "", opts...)
		out := send(t, c, "send_email", args)
		if out.Status != "sent" || len(p.asked) != 1 || !strings.Contains(p.asked[0], "To: zoe@client.example") ||
			!strings.Contains(p.asked[0], "Cc: ops@client.example") || !strings.Contains(p.asked[0], "Subject: Your options") || !strings.Contains(p.asked[0], "Three options") {
			t.Fatalf("legacy=%v: %+v, asked %q", legacy, out, p.asked)
		}
		p.action = mcp.ElicitationResponseActionDecline
		b := mcptest.FailCode(t, c.Call("send_email", args), mcperr.PermissionDeny)
		if !strings.Contains(b.Message, "nothing was sent") {
			t.Errorf("declined: %s", b.Message)
		}
		// Drafts are for review already: no question.
		send(t, c, "create_draft", args)
		var page struct{ Messages []any }
		mcptest.Structured(t, c.Call("search_emails", map[string]any{"query": "in:sent"}), &page)
		if len(page.Messages) != 1 || len(p.asked) != 2 {
			t.Errorf("legacy=%v: %d sent, %d questions", legacy, len(page.Messages), len(p.asked))
		}
	}
	s := localServer(t)
	s.deps.ConfirmSend = true
	c := s.connect(t, nil, "", client.WithLegacyProtocolOnly())
	b := mcptest.FailCode(t, c.Call("send_template_email", map[string]any{"to": "a@client.example", "template_name": "follow_up",
		"template_data": pairs(map[string]any{"client_name": "A", "message": "hi"})}), mcperr.PermissionDeny)
	if !strings.Contains(b.Message, "GMAIL_CONFIRM_SEND") || !strings.Contains(b.Message, "elicitation") {
		t.Errorf("no elicitation: %s", b.Message)
	}
	var page struct{ Messages []any }
	mcptest.Structured(t, c.Call("search_emails", map[string]any{}), &page)
	if len(page.Messages) != 0 {
		t.Error("sent without confirmation")
	}
}
