package engine

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/mcp-fleet/mcp-fleet/shared/jsontext"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// needInput stops a handler on protocol 2026-07-28 when it asks a question
// the client has not answered yet; the kit answers the call with an
// input-required result carrying the question.
type needInput struct {
	key    string
	method string
	params []byte
}

func (n *needInput) Error() string { return "the client's input is needed: " + n.method }

// missingCapability: the handler needs a client capability the client did
// not declare.
type missingCapability struct{ method string }

func (m *missingCapability) Error() string {
	return fmt.Sprintf("this request needs the client to support %s, which it did not declare", m.method)
}

// MCPError: before 2026-07-28 there is no protocol error for this, so the
// tool fails with it.
func (m *missingCapability) MCPError() *mcperr.Error {
	return mcperr.New(mcperr.PermissionDeny, "%s", m.Error()).WithRetryable(false)
}

// badState: the requestState of a retry fails its integrity check.
type badState struct{ why string }

func (b *badState) Error() string { return "requestState is invalid: " + b.why }

// maxStateBytes bounds the answers carried across retries.
const maxStateBytes = 256 << 10

// Ask puts a question to the client: before 2026-07-28 as a request on the
// call's stream, from 2026-07-28 through the input-required result.
func (c *Call) Ask(ctx context.Context, method string, params []byte) (json.RawMessage, error) {
	if c == nil || c.req == nil {
		return nil, &missingCapability{method: method}
	}
	if !c.Can(method) {
		return nil, &missingCapability{method: method}
	}
	if !c.req.meta.modern {
		if c.req.reply == nil {
			return nil, mcperr.New(mcperr.Internal, "this transport cannot carry a request to the client")
		}
		return c.req.sess.ask(ctx, c.req.reply, method, params)
	}
	if err := c.loadAnswers(); err != nil {
		return nil, err
	}
	c.asked++
	key := "q" + strconv.Itoa(c.asked)
	if a, ok := c.answers[key]; ok {
		return a, nil
	}
	return nil, &needInput{key: key, method: method, params: params}
}

// requestState is what the kit keeps across the retries of one call.
type requestState struct {
	Tool    string                     `json:"t"`
	Args    []byte                     `json:"h"` // sha256 of the arguments
	Answers map[string]json.RawMessage `json:"a"`
}

// loadAnswers reads the answers of earlier rounds from the signed state and
// this round's from inputResponses.
func (c *Call) loadAnswers() error {
	if c.stateOK {
		return nil
	}
	c.stateOK = true
	c.answers = map[string]json.RawMessage{}
	p := c.req.p
	if p.RequestState != "" {
		st, err := c.srv.openState(p.RequestState)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(c.Args)
		if st.Tool != c.Tool || !hmac.Equal(st.Args, sum[:]) {
			return &badState{why: "it belongs to another call"}
		}
		for k, v := range st.Answers {
			c.answers[k] = v
		}
	}
	if p.InputResponses != nil {
		err := wire.Members(p.InputResponses, func(k string, v []byte) error {
			c.answers[k] = json.RawMessage(v)
			return nil
		})
		if err != nil {
			return mcperr.Invalid("inputResponses", nil, "an object of answers", "inputResponses is malformed")
		}
	}
	return nil
}

// inputRequired answers a call whose handler asked a question.
func (s *Server) inputRequired(r *request, c *Call, need *needInput) reply {
	sum := sha256.Sum256(c.Args)
	state, err := s.sealState(requestState{Tool: c.Tool, Args: sum[:], Answers: c.answers})
	if err != nil {
		return s.fail(r, wire.CodeInternalError, "the answers given so far are too large to carry", nil)
	}
	out := []byte(`{"inputRequests":{`)
	out = jsontext.AppendString(out, need.key)
	out = append(out, `:{"method":`...)
	out = jsontext.AppendString(out, need.method)
	if need.params != nil {
		out = append(out, `,"params":`...)
		out = append(out, need.params...)
	}
	out = append(out, `}},"requestState":`...)
	out = jsontext.AppendString(out, state)
	out = append(out, '}')
	return reply{body: wire.AppendResult(nil, r.id, s.decorate(out, "input_required", false, nil)), status: 200}
}

func (s *Server) sealState(st requestState) (string, error) {
	b, err := json.Marshal(st)
	if err != nil || len(b) > maxStateBytes {
		return "", errors.New("state too large")
	}
	mac := hmac.New(sha256.New, s.stateKey)
	mac.Write(b)
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), nil
}

func (s *Server) openState(token string) (requestState, error) {
	var st requestState
	body, sig, ok := strings.Cut(token, ".")
	if !ok || len(token) > 2*maxStateBytes {
		return st, &badState{why: "it is not a state this server issued"}
	}
	b, err1 := base64.RawURLEncoding.DecodeString(body)
	want, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return st, &badState{why: "it is not a state this server issued"}
	}
	mac := hmac.New(sha256.New, s.stateKey)
	mac.Write(b)
	if !hmac.Equal(mac.Sum(nil), want) {
		return st, &badState{why: "it fails its integrity check (altered, or issued by another server process)"}
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, &badState{why: "it cannot be read"}
	}
	return st, nil
}

// rootsCache keeps a session's roots until the client says they changed.
type rootsCache struct {
	mu    sync.Mutex
	roots []Root
	valid bool
}

func (rc *rootsCache) get() ([]Root, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.roots, rc.valid
}

func (rc *rootsCache) set(r []Root) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.roots, rc.valid = r, true
}

func (rc *rootsCache) invalidate() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.roots, rc.valid = nil, false
}
