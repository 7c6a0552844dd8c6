package engine

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/mcp-fleet/mcp-fleet/shared/jsontext"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/budget"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/rs/zerolog"
)

// Call is the engine's side of one tool invocation: its validated
// arguments, identity and logger, and the session and request it came on,
// through which the kit's Call reaches the client while it runs. Questions
// to the client (Ask) work the same on every transport and in both protocol
// eras: before 2026-07-28 the engine sends the client a request and waits
// for its answer; from 2026-07-28 it answers the call with an input-required
// result and runs the handler again when the client retries with the
// answers. A nil *Call (a handler run outside a server, in a unit test) can
// reach no client.
type Call struct {
	Tool  string
	Agent string
	// Args are the raw JSON arguments, already validated against the schema.
	Args json.RawMessage
	// Log carries the correlation id, tool and agent.
	Log *zerolog.Logger

	srv *Server
	req *request
	// asked counts the questions this run of the handler asked, so each
	// gets a stable key across the retries of protocol 2026-07-28.
	asked int
	// answers are the client's answers known to this run, by key.
	answers map[string]json.RawMessage
	// stateOK: answers were loaded (and their state verified) once.
	stateOK bool
}

// Progress sends notifications/progress when, and only when, the client
// asked for it with a progress token. Errors are ignored: progress is advice.
func (c *Call) Progress(ctx context.Context, progress, total float64, message string) {
	if c == nil || c.req == nil || c.req.meta.progressToken == nil || c.req.reply == nil || ctx.Err() != nil {
		return
	}
	p := append([]byte(`{"progressToken":`), c.req.meta.progressToken...)
	p = append(p, `,"progress":`...)
	p = strconv.AppendFloat(p, progress, 'g', -1, 64)
	if total > 0 {
		p = append(p, `,"total":`...)
		p = strconv.AppendFloat(p, total, 'g', -1, 64)
	}
	if message != "" {
		p = append(p, `,"message":`...)
		p = jsontext.AppendString(p, message)
	}
	_ = c.req.reply(wire.AppendNotification(nil, "notifications/progress", append(p, '}')))
}

// ClientLog sends a log message to the client, if it asked for messages of
// this level (debug, info, notice, warning, error…). data is any JSON value.
func (c *Call) ClientLog(level string, data any) {
	if c != nil && c.req != nil {
		c.srv.clientLog(c.req, level, c.Tool, data)
	}
}

// Notifier returns the server's notifier, for tools that change resources.
func (c *Call) Notifier() *Notifier {
	if c == nil {
		return nil
	}
	return c.srv.notifier
}

// Can reports whether the client declared it can answer method
// ("elicitation/create", "sampling/createMessage" or "roots/list"). A tool
// that cannot work without the answer checks first and explains itself.
func (c *Call) Can(method string) bool {
	if c == nil || c.req == nil {
		return false
	}
	if c.req.meta.modern {
		return c.req.meta.caps.has(method)
	}
	return c.req.sess.clientCaps().has(method)
}

// Root is one of the client's roots.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// Roots returns the client's roots, or nil when the client declared none.
// Before protocol 2026-07-28 they are asked once per session and kept until
// the client says they changed.
func (c *Call) Roots(ctx context.Context) ([]Root, error) {
	if !c.Can(methodRoots) {
		return nil, nil
	}
	if !c.req.meta.modern {
		if roots, ok := c.req.sess.roots.get(); ok {
			return roots, nil
		}
	}
	raw, err := c.Ask(ctx, methodRoots, nil)
	if err != nil {
		return nil, err
	}
	var res struct {
		Roots []Root `json:"roots"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, mcperr.New(mcperr.Upstream, "the client's roots/list answer is malformed").WithRetryable(false)
	}
	if !c.req.meta.modern {
		c.req.sess.roots.set(res.Roots)
	}
	return res.Roots, nil
}

// ResultBudget is the most bytes this call's result may take as sent.
func (c *Call) ResultBudget() int {
	if c == nil {
		return budget.DefaultMaxResultBytes
	}
	return c.srv.budget.Limits.MaxResultBytes
}
