package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/oauth"
	"github.com/mcp-fleet/mcp-fleet/shared/oauth/oauthtest"
)

func introspecting(c *oauth.Config) {
	c.IntrospectionClientID, c.IntrospectionSecret = oauthtest.IntrospectionClient, oauthtest.IntrospectionSecret
}

func TestIntrospection(t *testing.T) {
	as := oauthtest.NewServer(t)
	v := newVerifier(t, as, func(c *oauth.Config) { introspecting(c); c.RequiredScopes = []string{"mcp:tools"} }, oauth.Options{})
	ctx := context.Background()
	exp := float64(time.Now().Add(time.Hour).Unix())
	active := func(mod func(map[string]any)) map[string]any {
		m := map[string]any{"active": true, "iss": as.Issuer, "sub": "alice", "aud": resource, "scope": "mcp:tools",
			"client_id": "c1", "username": "alice@example.com", "exp": exp, "groups": []any{"ops"}}
		if mod != nil {
			mod(m)
		}
		return m
	}
	as.SetOpaque("opaque-ok", active(nil))
	id, err := v.Verify(ctx, "opaque-ok")
	if err != nil {
		t.Fatal(err)
	}
	if id.Subject != "alice" || id.ClientID != "c1" || id.Name != "alice@example.com" || strings.Join(id.Groups, ",") != "ops" ||
		id.Issuer != as.Issuer || id.Expiry.Unix() != int64(exp) {
		t.Fatalf("identity %+v", id)
	}
	n := as.Introspections.Load()
	if _, err := v.Verify(ctx, "opaque-ok"); err != nil || as.Introspections.Load() != n {
		t.Fatalf("second check: %v, %d more introspections (want the cached answer)", err, as.Introspections.Load()-n)
	}

	cases := map[string]struct {
		resp   map[string]any
		reason string
	}{
		"inactive":      {map[string]any{"active": false}, "inactive"},
		"unknown":       {nil, "inactive"},
		"wrong aud":     {active(func(m map[string]any) { m["aud"] = []any{"https://other.example"} }), "aud"},
		"no aud":        {active(func(m map[string]any) { delete(m, "aud") }), "aud"},
		"wrong iss":     {active(func(m map[string]any) { m["iss"] = "https://evil.example" }), "iss"},
		"expired":       {active(func(m map[string]any) { m["exp"] = float64(time.Now().Add(-time.Minute).Unix()) }), "exp"},
		"nbf in future": {active(func(m map[string]any) { m["nbf"] = float64(time.Now().Add(time.Minute).Unix()) }), "nbf"},
		"no sub":        {active(func(m map[string]any) { delete(m, "sub") }), "sub"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tok := "opaque-" + strings.ReplaceAll(name, " ", "-")
			if tc.resp != nil {
				as.SetOpaque(tok, tc.resp)
			}
			_, err := v.Verify(ctx, tok)
			refused(t, err, tc.reason)
		})
	}
	t.Run("missing scope", func(t *testing.T) {
		as.SetOpaque("opaque-scope", active(func(m map[string]any) { m["scope"] = "openid" }))
		id, err := v.Verify(ctx, "opaque-scope")
		if !errors.Is(err, oauth.ErrInsufficientScope) || id.Subject != "alice" {
			t.Fatalf("%+v %v", id, err)
		}
	})
	t.Run("extra audience, iss absent", func(t *testing.T) {
		v2 := newVerifier(t, as, func(c *oauth.Config) { introspecting(c); c.Audiences = []string{"authenticated"} }, oauth.Options{})
		as.SetOpaque("opaque-aud", active(func(m map[string]any) { m["aud"] = "authenticated"; delete(m, "iss") }))
		if id, err := v2.Verify(ctx, "opaque-aud"); err != nil || id.Issuer != as.Issuer {
			t.Fatalf("%+v %v", id, err)
		}
	})
	t.Run("JWTs are still checked locally", func(t *testing.T) {
		n := as.Introspections.Load()
		if _, err := v.Verify(ctx, as.Sign(t, as.Claims(resource))); err != nil || as.Introspections.Load() != n {
			t.Fatalf("%v, %d introspections", err, as.Introspections.Load()-n)
		}
	})
	t.Run("a flood of made-up tokens is rate limited", func(t *testing.T) {
		n := as.Introspections.Load()
		unavailable := 0
		for i := range 200 {
			_, err := v.Verify(ctx, fmt.Sprintf("made-up-%d", i))
			if errors.Is(err, oauth.ErrUnavailable) {
				unavailable++
			}
		}
		if calls := as.Introspections.Load() - n; calls > 60 || unavailable == 0 {
			t.Fatalf("200 made-up tokens: %d introspections, %d refused as unavailable", calls, unavailable)
		}
	})
}

// TestIntrospectionFloodFromOneClient: junk tokens from one client use up
// that client's share of the introspection calls, not everyone's: a valid
// opaque token from another client is still checked.
func TestIntrospectionFloodFromOneClient(t *testing.T) {
	as := oauthtest.NewServer(t)
	v := newVerifier(t, as, introspecting, oauth.Options{})
	as.SetOpaque("opaque-good", map[string]any{"active": true, "iss": as.Issuer, "sub": "bob", "aud": resource,
		"exp": float64(time.Now().Add(time.Hour).Unix())})
	attacker := oauth.WithClient(context.Background(), "203.0.113.7")
	unavailable := 0
	for i := range 200 {
		if _, err := v.Verify(attacker, fmt.Sprintf("junk-%d", i)); errors.Is(err, oauth.ErrUnavailable) {
			unavailable++
		}
	}
	if unavailable == 0 {
		t.Fatal("200 junk tokens from one client were all introspected")
	}
	id, err := v.Verify(oauth.WithClient(context.Background(), "198.51.100.2"), "opaque-good")
	if err != nil || id.Subject != "bob" {
		t.Fatalf("a valid token from another client after the flood: %+v %v", id, err)
	}
}

// TestIntrospectionSharedCall: requests carrying the same token while its
// introspection is under way wait for that call instead of making their own.
func TestIntrospectionSharedCall(t *testing.T) {
	as := oauthtest.NewServer(t)
	release := make(chan struct{})
	as.BeforeIntrospect(func() { <-release })
	v := newVerifier(t, as, introspecting, oauth.Options{})
	as.SetOpaque("opaque-shared", map[string]any{"active": true, "iss": as.Issuer, "sub": "carol", "aud": resource,
		"exp": float64(time.Now().Add(time.Hour).Unix())})
	const n = 20
	errs := make(chan error, n)
	for i := range n {
		go func() {
			ctx := oauth.WithClient(context.Background(), fmt.Sprintf("192.0.2.%d", i))
			_, err := v.Verify(ctx, "opaque-shared")
			errs <- err
		}()
	}
	for as.Introspections.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	// Let the other requests reach the verifier while the first call is held.
	time.Sleep(100 * time.Millisecond)
	close(release)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if calls := as.Introspections.Load(); calls != 1 {
		t.Fatalf("%d concurrent checks of one token made %d introspection calls, want 1", n, calls)
	}
}

func TestIntrospectionConfiguration(t *testing.T) {
	as := oauthtest.NewServer(t)
	t.Run("wrong client secret: unavailable, not invalid", func(t *testing.T) {
		v := newVerifier(t, as, func(c *oauth.Config) { introspecting(c); c.IntrospectionSecret = "wrong" }, oauth.Options{})
		as.SetOpaque("opaque-x", map[string]any{"active": true})
		if _, err := v.Verify(context.Background(), "opaque-x"); !errors.Is(err, oauth.ErrUnavailable) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("not configured: opaque tokens are malformed", func(t *testing.T) {
		v := newVerifier(t, as, nil, oauth.Options{})
		_, err := v.Verify(context.Background(), "opaque-x")
		refused(t, err, "format")
	})
	t.Run("client id without secret", func(t *testing.T) {
		c := oauth.Config{Issuer: as.Issuer, Resource: resource, IntrospectionClientID: "x"}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "give both") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("metadata without an introspection endpoint", func(t *testing.T) {
		var srv *httptest.Server
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": srv.URL, "jwks_uri": as.URL + "/jwks"})
		}))
		defer srv.Close()
		_, err := oauth.NewVerifier(context.Background(), oauth.Config{Issuer: srv.URL, Resource: resource,
			IntrospectionClientID: "a", IntrospectionSecret: "b"}, oauth.Options{})
		if !errors.Is(err, oauth.ErrMetadata) || !strings.Contains(err.Error(), "introspection_endpoint") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("JWKS URL override with introspection still discovers", func(t *testing.T) {
		liar := oauthtest.NewServer(t)
		liar.Issuer = "https://other.example"
		_, err := oauth.NewVerifier(context.Background(), oauth.Config{Issuer: liar.URL, Resource: resource,
			JWKSURL: as.URL + "/jwks", IntrospectionClientID: "a", IntrospectionSecret: "b"}, oauth.Options{})
		if !errors.Is(err, oauth.ErrIssuerMismatch) {
			t.Fatalf("err %v", err)
		}
	})
}
