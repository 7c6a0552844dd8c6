package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/jsontext"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// resourcesPage bounds one page of resources/list.
const resourcesPage = 100

func (s *Server) listResources(ctx context.Context, r *request) reply {
	agent := r.sess.agent
	var all []ResourceInfo
	for _, res := range s.resources {
		if s.allowedResource(agent, res.Name, res.Tools) {
			all = append(all, ResourceInfo{URI: res.URI, Name: res.Name, Title: res.Title,
				Description: res.Description, MIMEType: res.MIMEType})
		}
	}
	for _, t := range s.templates {
		if t.List == nil || !s.allowedResource(agent, t.Name, t.Tools) {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, s.readTimeout(t.Timeout))
		items, err := t.List(lctx, agent)
		cancel()
		if err != nil {
			s.log.Warn().Err(s.redactErr(err)).Str("template", t.Name).Msg("listing resources failed")
			continue
		}
		all = append(all, items...)
	}
	start := 0
	if r.p.Cursor != "" {
		n, err := strconv.Atoi(r.p.Cursor)
		if err != nil || n < 0 || n > len(all) {
			return s.fail(r, wire.CodeInvalidParams, "invalid cursor", nil)
		}
		start = n
	}
	end := min(start+resourcesPage, len(all))
	page := struct {
		Resources  []ResourceInfo `json:"resources"`
		NextCursor string         `json:"nextCursor,omitempty"`
	}{Resources: all[start:end]}
	if page.Resources == nil {
		page.Resources = []ResourceInfo{}
	}
	if end < len(all) {
		page.NextCursor = strconv.Itoa(end)
	}
	b, _ := json.Marshal(page)
	return s.ok(r, b, true)
}

func (s *Server) listTemplates(r *request) reply {
	type entry struct {
		URITemplate string `json:"uriTemplate"`
		Name        string `json:"name"`
		Title       string `json:"title,omitempty"`
		Description string `json:"description,omitempty"`
		MIMEType    string `json:"mimeType,omitempty"`
	}
	out := struct {
		ResourceTemplates []entry `json:"resourceTemplates"`
	}{ResourceTemplates: []entry{}}
	for _, t := range s.templates {
		if s.allowedResource(r.sess.agent, t.Name, t.Tools) {
			out.ResourceTemplates = append(out.ResourceTemplates, entry{t.URITemplate, t.Name, t.Title, t.Description, t.MIMEType})
		}
	}
	b, _ := json.Marshal(out)
	return s.ok(r, b, true)
}

// notFound answers for a resource that does not exist or that the caller
// may not read: the two are indistinguishable on purpose.
func (s *Server) notFound(r *request) reply {
	data := jsontext.AppendString([]byte(`{"uri":`), wire.Truncate(r.p.URI, 1024))
	data = append(data, '}')
	code := wire.CodeResourceNotFound
	if r.meta.modern {
		code = wire.CodeInvalidParams
	}
	return s.fail(r, code, "Resource not found", data)
}

func (s *Server) readTimeout(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return s.opts.DefaultTimeout
}

// readResource runs resources/read through the pipeline: ACL (a resource
// the caller may not read does not exist for it), concurrency slots, time
// limit, panic recovery, audit line and metrics.
func (s *Server) readResource(ctx context.Context, r *request) reply {
	if r.p.URI == "" {
		return s.fail(r, wire.CodeInvalidParams, "params.uri is required", nil)
	}
	name, family, read, timeout, vars, _, ok := s.lookupResource(r.p.URI)
	agent := r.sess.agent
	if !ok || !s.allowedResource(agent, name, family) {
		return s.notFound(r)
	}
	start := time.Now()
	cid := s.correlationID()
	log := logPrincipal(s.log.With().Str("correlation_id", cid).Str("resource", name).Str("agent", agent), r.sess.principal).Logger()
	metric := "resource:" + name
	held, ok := s.budget.AcquireCall(ctx, r.blocking, r.sess.budget, nil)
	if !ok {
		s.metrics.Observe(metric, time.Since(start), mcperr.RateLimit)
		return s.fail(r, wire.CodeServerBusy, "the server is busy; retry shortly", []byte(`{"retryAfterSeconds":1}`))
	}
	contents, err := func() (c []Contents, err error) {
		defer held.Release()
		defer func() {
			if p := recover(); p != nil {
				log.Error().Str("panic", fmt.Sprint(p)).Bytes("stack", debug.Stack()).Msg("resource reader panicked")
				c, err = nil, mcperr.New(mcperr.Internal, "internal error")
			}
		}()
		rctx, cancel := context.WithTimeout(logging.WithCorrelationID(ctx, cid), s.readTimeout(timeout))
		defer cancel()
		return read(rctx, &ReadRequest{URI: r.p.URI, Vars: vars, Agent: agent, Log: &log})
	}()
	var failure *mcperr.Error
	var rep reply
	if err != nil {
		failure = s.classify(ctx, err, s.readTimeout(timeout))
		switch failure.Code {
		case mcperr.NotFound, mcperr.PermissionDeny:
			rep = s.notFound(r)
		case mcperr.Validation:
			rep = s.fail(r, wire.CodeInvalidParams, failure.Message, failure.JSON())
		default:
			if failure.Code == mcperr.Internal {
				log.Error().Err(s.redactErr(err)).Msg("resource read failed with an internal error")
			}
			rep = s.fail(r, wire.CodeInternalError, failure.Message, failure.JSON())
		}
	} else {
		for i := range contents {
			if contents[i].URI == "" {
				contents[i].URI = r.p.URI
			}
		}
		b, merr := json.Marshal(struct {
			Contents []Contents `json:"contents"`
		}{contents})
		if merr != nil {
			failure = mcperr.New(mcperr.Internal, "internal error")
			rep = s.fail(r, wire.CodeInternalError, "internal error", nil)
		} else {
			rep = s.ok(r, b, true)
		}
	}
	rep.after = func() {
		d := time.Since(start)
		ev := log.Info()
		code := mcperr.Code("")
		if failure != nil {
			code = failure.Code
			ev = log.Warn().Str("error_code", string(code))
		}
		s.metrics.Observe(metric, d, code)
		outcome := "ok"
		if failure != nil {
			outcome = "error"
		}
		ev.Str("event", "resource_read").Str("uri", redactURI(r.p.URI)).Str("outcome", outcome).Dur("duration", d).Msg("resource read")
	}
	return rep
}

// redactURI keeps a URI fit for a log line: secrets in its query masked,
// and its length capped.
func redactURI(u string) string {
	if red, ok := logging.RedactURL(u); ok {
		u = red
	}
	return wire.Truncate(u, 512)
}

// canSubscribe checks a subscription: the URI must be a resource the caller
// may read.
func (s *Server) canSubscribe(agent, uri string) bool {
	if _, err := url.Parse(uri); err != nil || uri == "" {
		return false
	}
	name, family, _, _, _, _, ok := s.lookupResource(uri)
	return ok && s.allowedResource(agent, name, family)
}

func (s *Server) subscribe(r *request) reply {
	if !s.canSubscribe(r.sess.agent, r.p.URI) {
		return s.notFound(r)
	}
	if err := r.sess.subscribe(r.p.URI); err != nil {
		// A template's Watch speaks to the client: its message is shown.
		msg := err.Error()
		var e *mcperr.Error
		if errors.As(err, &e) {
			msg = e.Message
		}
		return s.fail(r, wire.CodeInvalidParams, "cannot watch "+wire.Truncate(r.p.URI, 256)+": "+msg, nil)
	}
	s.log.Info().Str("event", "resource_subscribe").Str("agent", r.sess.agent).Str("uri", redactURI(r.p.URI)).Msg("resource subscribed")
	return s.ok(r, []byte(`{}`), false)
}

func (s *Server) unsubscribe(r *request) reply {
	r.sess.unsubscribe(r.p.URI)
	return s.ok(r, []byte(`{}`), false)
}

// listenFilter is the notifications a subscriptions/listen stream opts in to.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// maxListenURIs bounds the URIs one stream may subscribe to.
const maxListenURIs = 1000

// listen serves subscriptions/listen (protocol 2026-07-28): it acknowledges
// what it can deliver, then streams those notifications, tagged with the
// request's id, until the client cancels or goes away.
func (s *Server) listen(ctx context.Context, r *request) reply {
	var want listenFilter
	if r.p.Notifications != nil {
		if err := json.Unmarshal(r.p.Notifications, &want); err != nil {
			return s.fail(r, wire.CodeInvalidParams, "params.notifications is malformed", nil)
		}
	}
	if len(want.ResourceSubscriptions) > maxListenURIs {
		return s.fail(r, wire.CodeInvalidParams, fmt.Sprintf("at most %d resourceSubscriptions per stream", maxListenURIs), nil)
	}
	var got listenFilter
	if s.hasResources() {
		got.ResourcesListChanged = want.ResourcesListChanged
		for _, uri := range want.ResourceSubscriptions {
			if s.canSubscribe(r.sess.agent, uri) {
				got.ResourceSubscriptions = append(got.ResourceSubscriptions, uri)
			}
		}
	}
	o := newOutbox(s.countDropped)
	o.subID = r.id
	var subscribed []string
	defer func() {
		s.notifier.drop(o, subscribed)
		o.close()
	}()
	kept := got.ResourceSubscriptions[:0]
	for _, uri := range got.ResourceSubscriptions {
		if err := s.notifier.subscribe(o, uri); err == nil {
			subscribed = append(subscribed, uri)
			kept = append(kept, uri)
		}
	}
	got.ResourceSubscriptions = kept
	if got.ResourcesListChanged {
		s.notifier.listen(o, true)
	}
	ack, _ := json.Marshal(got)
	params := append([]byte(`{"_meta":{"`+metaSubID+`":`), r.id...)
	params = append(params, `},"notifications":`...)
	params = append(append(params, ack...), '}')
	if r.reply == nil || r.reply(wire.AppendNotification(nil, "notifications/subscriptions/acknowledged", params)) != nil {
		return reply{}
	}
	if got.ResourcesListChanged || len(got.ResourceSubscriptions) > 0 {
		for {
			msg, ok := o.next(ctx)
			if !ok {
				break
			}
			if r.reply(msg) != nil {
				return reply{}
			}
		}
	}
	meta := append([]byte(`"`+metaSubID+`":`), r.id...)
	return reply{body: wire.AppendResult(nil, r.id, s.decorate([]byte(`{}`), "complete", false, meta)), status: 200}
}
