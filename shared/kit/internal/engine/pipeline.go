package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/shared/internal/jsonscan"
	"github.com/mcp-fleet/mcp-fleet/shared/jsontext"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/budget"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/untrusted"
	"github.com/mcp-fleet/mcp-fleet/shared/validate"
	"github.com/rs/zerolog"
)

// callTool runs a tools/call through the pipeline: decode, ACL, rate limit,
// validation, concurrency slots, time limit, handler, error mapping. The
// answer is encoded once; the audit line and metrics are written after the
// response has gone out.
func (s *Server) callTool(ctx context.Context, r *request) reply {
	t := s.byName[r.p.Name]
	if t == nil {
		return s.fail(r, wire.CodeInvalidParams, "unknown tool "+strconv.Quote(wire.Truncate(r.p.Name, 64)), nil)
	}
	start := time.Now()
	agent := r.sess.agent
	cid := s.correlationID()
	log := logPrincipal(s.log.With().Str("correlation_id", cid).Str("tool", t.Name).Str("agent", agent), r.sess.principal).Logger()

	args, admitted, failure := s.admit(ctx, r, t)
	// A result that needs no decoration is written after the response's
	// opening, in one buffer sized for both, instead of copied into it.
	var head []byte
	if !r.meta.modern {
		head = wire.AppendResultHead(nil, r.id)
	}
	var res []byte
	var held budget.Slots
	if failure == nil {
		var ok bool
		if held, ok = s.budget.AcquireCall(ctx, r.blocking, r.sess.budget, t.slots); !ok {
			failure = mcperr.New(mcperr.RateLimit, "the server is busy: too many calls of %s running; retry shortly", t.Name)
			failure.RetryAfter = time.Second
		}
	}
	if failure == nil {
		var out any
		var err error
		call := &Call{Tool: t.Name, Agent: agent, Args: r.p.Arguments, Log: &log, srv: s, req: r}
		out, err = s.runHandler(ctx, t, call, cid, &log)
		held.Release()
		if err != nil {
			var need *needInput
			if errors.As(err, &need) && r.meta.modern {
				return s.inputRequired(r, call, need)
			}
			var missing *missingCapability
			if errors.As(err, &missing) && r.meta.modern {
				return s.fail(r, wire.CodeMissingCapability, missing.Error(), nil)
			}
			var bad *badState
			if errors.As(err, &bad) {
				return s.fail(r, wire.CodeInvalidParams, bad.Error(), nil)
			}
			failure = s.classify(ctx, err, s.timeoutOf(t))
			if failure.Code == mcperr.Internal {
				log.Error().Err(s.redactErr(err)).Msg("tool failed with an internal error")
			}
		} else if res, err = encodeResult(head, out, t.output); err != nil {
			log.Error().Err(err).Msg("tool result could not be encoded")
			failure = mcperr.New(mcperr.Internal, "internal error: the result could not be encoded")
		} else if limit := s.budget.Limits.MaxResultBytes; len(res)-len(head) > limit {
			failure = tooLarge(t, len(res)-len(head), limit)
			res = nil
		}
	}
	var rep reply
	switch {
	case failure != nil:
		s.clientLog(r, "warning", t.Name, map[string]any{"tool": t.Name, "error": failure.Body()})
		rep = s.ok(r, errorResult(failure, t.output != nil), false)
	case head != nil:
		rep = reply{body: append(res, '}'), status: http.StatusOK, recycle: true}
	default:
		rep = s.ok(r, res, false)
	}
	rep.after = func() {
		d := time.Since(start)
		code := mcperr.Code("")
		if failure != nil {
			code = failure.Code
		}
		s.metrics.Observe(t.Name, d, code)
		s.audit(&log, t.AuditOmit, r.p.Arguments, args, admitted, d, failure)
	}
	return rep
}

// logPrincipal names who called, beside the agent: how they authenticated
// and, for an OAuth token, its subject, name and client.
func logPrincipal(c zerolog.Context, p Principal) zerolog.Context {
	if p.Auth == "" {
		return c
	}
	c = c.Str("auth", p.Auth)
	if p.Subject != "" {
		c = c.Str("sub", p.Subject)
	}
	if p.Name != "" {
		c = c.Str("name", p.Name)
	}
	if p.ClientID != "" {
		c = c.Str("client_id", p.ClientID)
	}
	return c
}

// admit checks a call before it may run. Arguments the input schema's quick
// walk admits are not decoded here (admitted: the handler decodes them into
// its own type); the rest are decoded, their optional nulls dropped, and
// checked, which writes the error a model sees.
func (s *Server) admit(ctx context.Context, r *request, t *registered) (args any, admitted bool, failure *mcperr.Error) {
	admitted = t.schema.Admits(r.p.Arguments)
	if !admitted {
		var err error
		if args, err = validate.Decode(r.p.Arguments); err != nil {
			return nil, false, validate.DecodeError(err)
		}
	}
	agent := r.sess.agent
	if !s.allowed(agent, t.Name) {
		return args, admitted, mcperr.New(mcperr.PermissionDeny, "agent %q may not call %s", agent, t.Name)
	}
	if ok, wait := s.opts.Limiter.Allow(agent, t.Name); !ok {
		e := mcperr.New(mcperr.RateLimit, "rate limit for %s exceeded; retry in %s", t.Name, wait.Round(time.Millisecond))
		e.RetryAfter = wait
		return args, admitted, e
	}
	if admitted {
		return nil, true, nil
	}
	// A null is always the bytes "null": most calls have none to drop.
	if bytes.Contains(r.p.Arguments, []byte("null")) && t.schema.DropOptionalNulls(args) {
		// The handler reads the arguments as sent; it gets them without
		// the nulls, as if the keys had been left out.
		if b, err := json.Marshal(args); err == nil {
			r.p.Arguments = b
		}
	}
	if verr := t.schema.CheckValue(args); verr != nil {
		return args, false, verr
	}
	return args, false, nil
}

func (s *Server) timeoutOf(t *registered) time.Duration {
	if t.Timeout > 0 {
		return t.Timeout
	}
	return s.opts.DefaultTimeout
}

// runHandler runs the handler under its time limit, turning a panic into an
// internal error.
func (s *Server) runHandler(ctx context.Context, t *registered, call *Call, cid string, log *zerolog.Logger) (out any, err error) {
	cctx, cancel := context.WithTimeout(logging.WithCorrelationID(ctx, cid), s.timeoutOf(t))
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			log.Error().Str("panic", fmt.Sprint(p)).Bytes("stack", debug.Stack()).Msg("tool handler panicked")
			out, err = nil, mcperr.New(mcperr.Internal, "internal error")
		}
	}()
	out, err = t.Handler(cctx, call)
	if err != nil && cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		// Keep the handler's own code when it has one; else say which limit.
		var e *mcperr.Error
		var c mcperr.Coded
		if !errors.As(err, &e) && !errors.As(err, &c) {
			err = mcperr.New(mcperr.Timeout, "the call did not finish within its %s time limit", s.timeoutOf(t)).WithCause(err)
		}
	}
	return out, err
}

// classify maps a handler error; a client's cancellation is CANCELLED.
func (s *Server) classify(ctx context.Context, err error, timeout time.Duration) *mcperr.Error {
	if ctx.Err() != nil {
		var e *mcperr.Error
		if !errors.As(err, &e) {
			if errors.Is(context.Cause(ctx), errShuttingDown) {
				return mcperr.New(mcperr.Cancelled, "%s", errShuttingDown.Error()).WithRetryable(true).WithCause(err)
			}
			return mcperr.New(mcperr.Cancelled, "the request was cancelled by the client").WithCause(err)
		}
	}
	e := mcperr.Wrap(err)
	if e.Code == mcperr.Timeout && errors.Is(err, context.DeadlineExceeded) && e.Message == "the operation timed out" {
		e.Message = fmt.Sprintf("the call did not finish within its %s time limit", timeout)
	}
	return e
}

func (s *Server) redactErr(err error) error {
	if s.opts.Redactor == nil {
		return err
	}
	return errors.New(s.opts.Redactor.String(err.Error()))
}

// encodeResult turns a handler's value into a CallToolResult object, encoding
// the value once: its JSON is both the text (escaped) and structuredContent.
// The object is appended to a copy of head (nil, or a response's opening),
// in a buffer sized for it and one more byte. A tool with an outputSchema
// must produce structuredContent that matches it: clients check it (the
// TypeScript SDK throws on a mismatch), so a mismatch is the server's bug and
// is caught here, not in the client.
func encodeResult(head []byte, v any, output *validate.Schema) ([]byte, error) {
	switch t := v.(type) {
	case string, *mcp.CallToolResult:
		if output != nil {
			return nil, fmt.Errorf("the tool has an outputSchema but returned %T, which has no structuredContent", v)
		}
		if str, ok := t.(string); ok {
			return textResult(head, str, nil), nil
		}
		b, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		return append(append(make([]byte, 0, len(head)+len(b)+1), head...), b...), nil
	case Untrusted:
		if str, ok := t.Value.(string); ok {
			if output != nil {
				return nil, fmt.Errorf("the tool has an outputSchema but returned text, which has no structuredContent")
			}
			open, close := untrusted.Tags(t.Source, str)
			return partsResult(head, nil, open, str, close), nil
		}
		b, done, err := marshal(t.Value, output)
		if err != nil {
			return nil, err
		}
		defer done()
		if err := checkOutput(b, output); err != nil {
			return nil, err
		}
		// The fence is written around the JSON as it is escaped into the
		// text: joining them first would copy a result of many rows twice.
		text := wire.View(b)
		open, close := untrusted.Tags(t.Source, text)
		return partsResult(head, b, open, text, close), nil
	case json.RawMessage:
		t, err := oneLine(t)
		if err != nil {
			return nil, err
		}
		if err := checkOutput(t, output); err != nil {
			return nil, err
		}
		return textBytesResult(head, t, t), nil
	}
	b, done, err := marshal(v, output)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := checkOutput(b, output); err != nil {
		return nil, err
	}
	return textBytesResult(head, b, b), nil
}

// marshalBufs hold results while they are checked and copied into the
// response: json.Marshal would allocate each result's JSON only to be
// copied and dropped.
var marshalBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// appendBufs hold the JSON of results that encode themselves, for the same
// reason.
var appendBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuf is the largest buffer kept for the next result, so that one
// large result does not stay in memory.
const maxPooledBuf = 256 << 10

// marshal encodes v as json.Marshal does into a pooled buffer; b is valid
// until done is called. A result that encodes itself (appender) does so,
// only when the tool has an outputSchema to check it against.
func marshal(v any, output *validate.Schema) (b []byte, done func(), err error) {
	if a, ok := v.(appender); ok && output != nil {
		p := appendBufs.Get().(*[]byte)
		raw, err := a.AppendJSON((*p)[:0])
		done = func() {
			if cap(raw) <= maxPooledBuf {
				*p = raw[:0]
				appendBufs.Put(p)
			}
		}
		if err == nil {
			b, err = oneLine(raw)
		}
		if err != nil {
			done()
			return nil, nil, err
		}
		return b, done, nil
	}
	buf := marshalBufs.Get().(*bytes.Buffer)
	buf.Reset()
	done = func() {
		if buf.Cap() <= maxPooledBuf {
			marshalBufs.Put(buf)
		}
	}
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		done()
		return nil, nil, err
	}
	// Encode ends the value with a newline, which Marshal does not.
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), done, nil
}

// appender is a result that encodes itself, as a tool whose result holds
// JSON already (rows as the database encoded them) does: encoding/json would
// scan every byte of that JSON again to compact it. What it appends is
// checked against the outputSchema like any result, which also proves it
// well-formed.
//
// dst is a recycled buffer (appendBufs), reused once the result is copied
// into the response: an appender must not keep it or what it returns.
type appender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// oneLine removes the line breaks of JSON a tool encoded itself (PostgreSQL's
// json_agg puts one between elements): a message is one line on stdio. A
// line break in JSON can only be white space (inside a string it is
// escaped), so only the white space goes; JSON with a line break that is
// not well-formed is refused.
func oneLine(b []byte) ([]byte, error) {
	if bytes.IndexByte(b, '\n') < 0 && bytes.IndexByte(b, '\r') < 0 {
		return b, nil
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, fmt.Errorf("the result is not well-formed JSON: %w", err)
	}
	return out.Bytes(), nil
}

// checkOutput checks the encoded structuredContent b against the tool's
// outputSchema, when it has one.
func checkOutput(b []byte, output *validate.Schema) error {
	if output == nil {
		return nil
	}
	if i := jsonscan.SkipSpace(b, 0); i >= len(b) || b[i] != '{' {
		return fmt.Errorf("the tool has an outputSchema but its result is not a JSON object")
	}
	if err := output.CheckDocument(b); err != nil {
		return fmt.Errorf("the result does not match the tool's outputSchema: %v", err)
	}
	return nil
}

// textResult: {"content":[{"type":"text","text":…}],"structuredContent":…},
// after head. structuredContent must be an object; other JSON stays text
// only. The buffer has room for one more byte.
func textResult(head []byte, text string, structured []byte) []byte {
	return partsResult(head, structured, "", text, "")
}

// partsResult is textResult with the text given in three parts (a fence's
// opening, the content, its closing), written one after another.
func partsResult(head, structured []byte, before, text, after string) []byte {
	const open, closeText, member = `{"content":[{"type":"text","text":`, "}]", `,"structuredContent":`
	hasStructured := len(structured) > 0 && structured[0] == '{'
	n := len(head) + len(open) + jsontext.StringLen(before) + jsontext.StringLen(text) + jsontext.StringLen(after) - 4 + len(closeText) + 2
	if hasStructured {
		n += len(member) + len(structured)
	}
	// Only a result written after a response's opening is recycled (see
	// callTool), so only such a result takes a pooled buffer.
	var out []byte
	if head != nil {
		out = resultBuf(n)
	} else {
		out = make([]byte, 0, n)
	}
	out = append(out, head...)
	out = append(out, open...)
	out = jsontext.AppendStrings(out, before, text, after)
	out = append(out, closeText...)
	if hasStructured {
		out = append(out, member...)
		out = append(out, structured...)
	}
	return append(out, '}')
}

// resultBufs recycle the buffers tool results are written in: once its
// transport has written it (reply.done), a response is garbage, and per
// call it was most of what the server allocated for the collector to find.
var resultBufs sync.Pool // of *[]byte

// resultBuf is an empty buffer with room for n bytes, recycled when one is
// at hand.
func resultBuf(n int) []byte {
	if p, ok := resultBufs.Get().(*[]byte); ok {
		if cap(*p) >= n {
			return (*p)[:0]
		}
		resultBufs.Put(p) // too small for this one, not for the next
	}
	return make([]byte, 0, n)
}

func textBytesResult(head, text, structured []byte) []byte {
	return textResult(head, wire.View(text), structured)
}

// errorResult is a tool error: isError with the body as text, and as
// structuredContent unless the tool declares an outputSchema. Clients check
// any structuredContent against the outputSchema, an error's too (the
// official TypeScript SDK throws when it does not match), and an error body
// never matches a result's schema.
func errorResult(e *mcperr.Error, typed bool) []byte {
	body := e.JSON()
	var structured []byte
	if !typed {
		structured = body
	}
	out := textBytesResult(nil, body, structured)
	return append(out[:len(out)-1], `,"isError":true}`...)
}

// auditArgLimit caps each string in the audit log, and auditValues the
// values shown: file contents and hostile documents are arguments too, and
// logs are not a place for them.
const (
	auditArgLimit = 256
	auditValues   = 64
)

// audit writes the call's audit line. args are the decoded arguments, or
// nil when they could not be decoded or were admitted without decoding
// (admitted: well-formed and checked).
func (s *Server) audit(log *zerolog.Logger, omit []string, raw []byte, args any, admitted bool, d time.Duration, failure *mcperr.Error) {
	ev := log.Info()
	if failure != nil {
		ev = log.Warn().Str("error_code", string(failure.Code))
	}
	if !ev.Enabled() {
		return
	}
	small := len(raw) <= 4*auditArgLimit
	var rewrite bool
	switch {
	case admitted:
		// Well-formed and checked: decoded only to be rewritten (rare),
		// here, after the answer has gone out.
		if rewrite = !small || rawNeedsRewrite(raw, omit); rewrite {
			args, _ = validate.Decode(raw)
		}
	case args != nil:
		rewrite = !small || needsRewrite(args, omit)
	}
	switch {
	case rewrite && args != nil:
		// Secret-named keys, long strings, omitted arguments and large
		// documents are rewritten; secret values anywhere are masked by the
		// log writer.
		budget := auditValues
		v := prune(s.opts.Redactor.Value(args), &budget, 0)
		if m, ok := v.(map[string]any); ok {
			for _, k := range omit {
				if val, ok := args.(map[string]any)[k]; ok {
					m[k] = omittedNote(val)
				}
			}
		}
		if b, err := json.Marshal(v); err == nil {
			ev = ev.RawJSON("args", b)
		}
	case !rewrite && (admitted || args != nil):
		ev = compactArgs(ev, raw)
	case len(raw) > 0:
		ev = ev.Int("args_bytes", len(raw))
	}
	outcome := "ok"
	if failure != nil {
		outcome = "error"
	}
	ev.Str("event", "tool_call").Str("outcome", outcome).Dur("duration", d).Msg("tool call")
}

// omittedNote stands in for an omitted argument: its size, not its content.
func omittedNote(v any) string {
	if s, ok := v.(string); ok {
		return "[omitted: " + strconv.Itoa(len(s)) + " bytes]"
	}
	b, _ := json.Marshal(v)
	return "[omitted: " + strconv.Itoa(len(b)) + " bytes of JSON]"
}

// compactArgs logs well-formed arguments as sent: without white space they
// are compact already, as most clients send them.
func compactArgs(ev *zerolog.Event, raw []byte) *zerolog.Event {
	if len(raw) == 0 {
		return ev // no arguments, and no args field
	}
	if !bytes.ContainsAny(raw, " \t\r\n") {
		return ev.RawJSON("args", raw)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		ev = ev.RawJSON("args", buf.Bytes())
	}
	return ev
}

// rawNeedsRewrite is needsRewrite over well-formed arguments as sent: a
// string followed by ':' is a member name, any other a value.
func rawNeedsRewrite(raw []byte, omit []string) bool {
	depth := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			end, escaped, err := jsonscan.String(raw, i)
			if err != nil {
				return true
			}
			body := raw[i+1 : end-1]
			if j := jsonscan.SkipSpace(raw, end); j < len(raw) && raw[j] == ':' {
				k := jsonscan.Unquote(raw[i:end], escaped)
				if logging.IsSecretKey(k) || (depth == 1 && slices.Contains(omit, k)) {
					return true
				}
			} else if escaped || !utf8.Valid(body) {
				// Decoded, the string may be longer (U+FFFD for each invalid
				// byte) or a URL its escapes hid ("https:\/\/…").
				if secretOrLong(jsonscan.Unquote(raw[i:end], escaped)) {
					return true
				}
			} else if len(body) > auditArgLimit || bytes.Contains(body, []byte("://")) && secretOrLong(string(body)) {
				return true
			}
			i = end - 1
		}
	}
	return false
}

// needsRewrite reports whether decoded arguments hold a secret-named key, an
// omitted argument, or a string too long for a log line.
func needsRewrite(v any, omit []string) bool {
	if m, ok := v.(map[string]any); ok {
		for _, k := range omit {
			if _, ok := m[k]; ok {
				return true
			}
		}
	}
	return secretOrLong(v)
}

func secretOrLong(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if logging.IsSecretKey(k) || secretOrLong(val) {
				return true
			}
		}
	case []any:
		for _, val := range t {
			if secretOrLong(val) {
				return true
			}
		}
	case string:
		if len(t) > auditArgLimit {
			return true
		}
		_, secretURL := logging.RedactURL(t)
		return secretURL
	}
	return false
}

// prune copies v for the audit line within a budget of values, cutting long
// strings; what is cut is counted.
func prune(v any, budget *int, depth int) any {
	*budget--
	switch t := v.(type) {
	case map[string]any:
		if depth >= 8 {
			return "[object of " + strconv.Itoa(len(t)) + " members]"
		}
		out := make(map[string]any, min(len(t), auditValues))
		n := 0
		for k, val := range t {
			if *budget <= 0 {
				out["…"] = strconv.Itoa(len(t)-n) + " more members"
				break
			}
			out[cut(k)] = prune(val, budget, depth+1)
			n++
		}
		return out
	case []any:
		if depth >= 8 {
			return "[array of " + strconv.Itoa(len(t)) + " items]"
		}
		out := make([]any, 0, min(len(t), auditValues))
		for i, val := range t {
			if *budget <= 0 {
				out = append(out, strconv.Itoa(len(t)-i)+" more items")
				break
			}
			out = append(out, prune(val, budget, depth+1))
		}
		return out
	case string:
		return cut(t)
	}
	return v
}

// cut shortens an audited key or value to auditArgLimit bytes.
func cut(s string) string { return wire.Truncate(s, auditArgLimit) }

// clientLog sends notifications/message to the caller when it asked for
// log messages at this level or lower: through logging/setLevel (before
// protocol 2026-07-28) or the request's own logLevel (from 2026-07-28).
func (s *Server) clientLog(r *request, level, logger string, data any) {
	want := r.meta.logLevel
	if !r.meta.modern {
		r.sess.mu.Lock()
		want = r.sess.level
		r.sess.mu.Unlock()
	}
	li := levelIndex(level)
	if want < 0 || li < want || r.reply == nil {
		return
	}
	b, err := json.Marshal(struct {
		Level  string `json:"level"`
		Logger string `json:"logger,omitempty"`
		Data   any    `json:"data"`
	}{level, logger, data})
	if err != nil {
		return
	}
	_ = r.reply(wire.AppendNotification(nil, "notifications/message", b))
}

// tooLarge is the error for a result over the budget.
func tooLarge(t *registered, size, limit int) *mcperr.Error {
	how := t.Paging
	if how == "" {
		how = "narrow the request"
	}
	e := mcperr.New(mcperr.Validation, "the result of %s is %d bytes, over this server's result budget of %d bytes (--max-result-bytes): %s",
		t.Name, size, limit, how)
	e.Expected = "a request whose result fits " + strconv.Itoa(limit) + " bytes"
	return e.WithRetryable(false)
}
