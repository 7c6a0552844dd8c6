package rest_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/rest"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://p.supabase.co":          "https://p.supabase.co/rest/v1",
		"https://p.supabase.co/":         "https://p.supabase.co/rest/v1",
		"https://p.supabase.co/rest/v1/": "https://p.supabase.co/rest/v1",
		"http://127.0.0.1:54321":         "http://127.0.0.1:54321/rest/v1",
	} {
		if got, err := rest.BaseURL(in); err != nil || got != want {
			t.Errorf("%s: %s %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "p.supabase.co", "ftp://x", "https://u:p@x.co", "https://x.co/?a=1"} {
		if _, err := rest.BaseURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := rest.New(rest.Config{URL: "https://x.co", Version: "t"}); err == nil {
		t.Error("no key accepted")
	}
}

// answer serves one canned response and records the request headers.
func answer(t *testing.T, status int, body string) (*httptest.Server, *http.Header) {
	var h http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h = r.Header.Clone()
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &h
}

func sel() *query.Select {
	return &query.Select{Schema: "public", Table: "t", Items: []query.Item{{Star: true}}, Limit: 2}
}

func TestAuthHeaders(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ key, jwt, auth string }{
		{"sb_secret_abc", "", ""},
		{"sb_publishable_abc", "eyJa.b.c", "Bearer eyJa.b.c"},
		{"eyJx.y.z", "", "Bearer eyJx.y.z"},
	} {
		srv, h := answer(t, 200, "[]")
		c, err := rest.New(rest.Config{URL: srv.URL, Key: tc.key, JWT: tc.jwt, Version: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Select(ctx, sel()); err != nil {
			t.Fatal(err)
		}
		if h.Get("apikey") != tc.key || h.Get("Authorization") != tc.auth || !strings.HasPrefix(h.Get("User-Agent"), "supabase-mcp/") {
			t.Errorf("%s: apikey %q authorization %q", tc.key, h.Get("apikey"), h.Get("Authorization"))
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		status int
		body   string
		code   mcperr.Code
		text   string
	}{
		{409, `{"code":"23505","message":"duplicate key value violates unique constraint \"c\"","details":"Key (email)=(x) already exists.","hint":null}`, mcperr.Conflict, "already exists"},
		{404, `{"code":"PGRST205","message":"Could not find the table 'public.t' in the schema cache","details":null,"hint":"Perhaps you meant 'public.u'"}`, mcperr.NotFound, "Perhaps"},
		{404, `{"code":"42P01","message":"relation \"t\" does not exist"}`, mcperr.NotFound, "42P01"},
		{403, `{"code":"42501","message":"permission denied for table t"}`, mcperr.PermissionDeny, "permission denied"},
		{400, `{"code":"22P02","message":"invalid input syntax for type integer: \"x\""}`, mcperr.Validation, "invalid input"},
		{400, `{"code":"PGRST124","message":"Query result exceeds max-affected preference constraint","details":"The query affects 3 rows"}`, mcperr.Validation, "max-affected"},
		{401, `{"message":"Invalid API key"}`, mcperr.Authentication, "credentials"},
		{401, `{"code":"PGRST301","message":"JWT expired"}`, mcperr.Authentication, "credentials"},
		{500, `not json`, mcperr.Upstream, "500"},
		{400, `{"message":"bare"}`, mcperr.Validation, "bare"},
		{200, `{"not":"an array"}`, mcperr.Upstream, "JSON array"},
	} {
		srv, _ := answer(t, tc.status, tc.body)
		c, err := rest.New(rest.Config{URL: srv.URL, Key: "eyJx.y.z", Version: "t"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Select(ctx, sel())
		me := mcperr.Wrap(err)
		if me.Code != tc.code || !strings.Contains(me.Message, tc.text) || strings.Contains(me.Message, "eyJx.y.z") {
			t.Errorf("%d %s: %v", tc.status, tc.body, err)
		}
	}
}

func TestDiscoveryRefused(t *testing.T) {
	srv, _ := answer(t, 401, `{"message":"Access to schema is forbidden"}`)
	c, err := rest.New(rest.Config{URL: srv.URL, Key: "sb_publishable_x", Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Tables(context.Background(), "public")
	if me := mcperr.Wrap(err); me.Code != mcperr.Authentication || !strings.Contains(me.Message, "secret keys only") {
		t.Errorf("tables with a publishable key: %v", err)
	}
	_, err = c.Describe(context.Background(), "public", "t")
	if err == nil {
		t.Error("describe answered")
	}
}

func TestCallShapes(t *testing.T) {
	ctx := context.Background()
	for body, scalar := range map[string]bool{`[{"a":1},{"a":2},{"a":3}]`: false, `42`: true, ``: true, `"x"`: true} {
		srv, _ := answer(t, 200, body)
		c, _ := rest.New(rest.Config{URL: srv.URL, Key: "k", Version: "t"})
		res, err := c.Call(ctx, &query.Call{Schema: "public", Function: "f", Limit: 2})
		if err != nil || res.Scalar != scalar || (!scalar && (!res.Truncated || res.RowCount != 2)) {
			t.Errorf("%q: %+v %v", body, res, err)
		}
	}
	srv, _ := answer(t, 200, `{not json`)
	c, _ := rest.New(rest.Config{URL: srv.URL, Key: "k", Version: "t"})
	if _, err := c.Call(ctx, &query.Call{Schema: "public", Function: "f"}); mcperr.Wrap(err).Code != mcperr.Upstream {
		t.Errorf("bad json: %v", err)
	}
}
