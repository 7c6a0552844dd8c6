package oauth_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mcp-fleet/mcp-fleet/shared/oauth"
	"github.com/mcp-fleet/mcp-fleet/shared/oauth/oauthtest"
)

const resource = "https://mcp.example.com/mcp"

func newVerifier(t *testing.T, as *oauthtest.Server, mod func(*oauth.Config), opts oauth.Options) *oauth.Verifier {
	t.Helper()
	cfg := oauth.Config{Issuer: as.Issuer, Resource: resource, Scopes: []string{"mcp:tools"}, ClockSkew: oauth.DefaultClockSkew}
	if mod != nil {
		mod(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	v, err := oauth.NewVerifier(ctx, cfg, opts)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	t.Cleanup(v.Close)
	return v
}

// refused asserts that err is an invalid-token refusal with reason.
func refused(t *testing.T, err error, reason string) *oauth.InvalidTokenError {
	t.Helper()
	var it *oauth.InvalidTokenError
	if !errors.As(err, &it) || !errors.Is(err, oauth.ErrInvalidToken) {
		t.Fatalf("error %v, want an invalid token (%s)", err, reason)
	}
	if it.Reason != reason {
		t.Fatalf("reason %q (%v), want %q", it.Reason, err, reason)
	}
	return it
}

func TestVerifyValid(t *testing.T) {
	as := oauthtest.NewServer(t)
	v := newVerifier(t, as, func(c *oauth.Config) { c.GroupsClaim = "app_metadata.roles" }, oauth.Options{})
	c := as.Claims(resource)
	c["email"] = "alice@example.com"
	c["app_metadata"] = map[string]any{"roles": []any{"ops", "dev"}}
	id, err := v.Verify(context.Background(), as.Sign(t, c))
	if err != nil {
		t.Fatal(err)
	}
	if id.Issuer != as.Issuer || id.Subject != "alice" || id.ClientID != "test-client" || id.Name != "alice@example.com" ||
		strings.Join(id.Scopes, " ") != "mcp:tools" || strings.Join(id.Groups, ",") != "ops,dev" {
		t.Fatalf("identity %+v", id)
	}
	if d := time.Until(id.Expiry); d < 4*time.Minute || d > 5*time.Minute {
		t.Fatalf("expiry %v", id.Expiry)
	}
	if !v.Ready() || v.Metadata().JWKSURI != as.URL+"/jwks" {
		t.Fatalf("metadata %+v", v.Metadata())
	}
}

func TestVerifyClaimShapes(t *testing.T) {
	as := oauthtest.NewServer(t)
	ec := oauthtest.NewECKey(t, "ec-1")
	as.AddKey(ec)
	v := newVerifier(t, as, func(c *oauth.Config) { c.GroupsClaim = "https://fleet.example/groups" }, oauth.Options{})
	c := as.Claims(resource)
	delete(c, "scope")
	delete(c, "client_id")
	c["scp"] = []any{"mcp:tools", "extra"}
	c["azp"] = "okta-client"
	c["preferred_username"] = "alice"
	c["https://fleet.example/groups"] = "charter-ops"
	c["aud"] = []any{"https://other.example", resource}
	id, err := v.Verify(context.Background(), oauthtest.SignWith(t, ec, c))
	if err != nil {
		t.Fatal(err)
	}
	if id.ClientID != "okta-client" || id.Name != "alice" || strings.Join(id.Scopes, " ") != "mcp:tools extra" ||
		strings.Join(id.Groups, ",") != "charter-ops" {
		t.Fatalf("identity %+v", id)
	}
}

func TestVerifyRefusals(t *testing.T) {
	as := oauthtest.NewServer(t)
	v := newVerifier(t, as, func(c *oauth.Config) { c.Audiences = []string{"authenticated"} }, oauth.Options{})
	ctx := context.Background()
	now := time.Now()
	with := func(mod func(jwt.MapClaims)) string {
		c := as.Claims(resource)
		mod(c)
		return as.Sign(t, c)
	}
	t.Run("extra audience accepted", func(t *testing.T) {
		if _, err := v.Verify(ctx, with(func(c jwt.MapClaims) { c["aud"] = "authenticated" })); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("uppercase resource in config still matches", func(t *testing.T) {
		v2 := newVerifier(t, as, func(c *oauth.Config) { c.Resource = "HTTPS://MCP.Example.com/mcp" }, oauth.Options{})
		if _, err := v2.Verify(ctx, with(func(jwt.MapClaims) {})); err != nil {
			t.Fatal(err)
		}
	})
	cases := []struct {
		name, reason string
		token        string
		subject      bool
	}{
		{"wrong aud", "aud", with(func(c jwt.MapClaims) { c["aud"] = "https://other.example/mcp" }), true},
		{"aud array without the resource", "aud", with(func(c jwt.MapClaims) { c["aud"] = []any{"a", "b"} }), true},
		{"no aud", "claims", with(func(c jwt.MapClaims) { delete(c, "aud") }), true},
		{"expired beyond the skew", "exp", with(func(c jwt.MapClaims) { c["exp"] = now.Add(-31 * time.Second).Unix() }), true},
		{"no exp", "claims", with(func(c jwt.MapClaims) { delete(c, "exp") }), true},
		{"nbf in the future", "nbf", with(func(c jwt.MapClaims) { c["nbf"] = now.Add(2 * time.Minute).Unix() }), true},
		{"iat in the future", "iat", with(func(c jwt.MapClaims) { c["iat"] = now.Add(2 * time.Minute).Unix() }), true},
		{"wrong iss", "iss", with(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" }), true},
		{"no iss", "claims", with(func(c jwt.MapClaims) { delete(c, "iss") }), true},
		{"no sub", "sub", with(func(c jwt.MapClaims) { delete(c, "sub") }), false},
		{"an ID token (nonce)", "nonce", with(func(c jwt.MapClaims) { c["nonce"] = "n-0S6_WzA2Mj" }), true},
		{"malformed", "format", "not-a-jwt", false},
		{"three garbage parts", "format", "a.b.c", false},
		{"too long", "format", strings.Repeat("a", 20000) + ".b.c", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, err := v.Verify(ctx, tc.token)
			it := refused(t, err, tc.reason)
			if id.Subject != "" {
				t.Fatalf("a refused token returned identity %+v", id)
			}
			if tc.subject != (it.Subject == "alice") {
				t.Fatalf("subject %q in the refusal (want it only after a valid signature)", it.Subject)
			}
			if strings.Contains(it.Error(), tc.token) && len(tc.token) > 12 {
				t.Fatal("the error carries the token")
			}
		})
	}
	t.Run("expired within the skew", func(t *testing.T) {
		if _, err := v.Verify(ctx, with(func(c jwt.MapClaims) { c["exp"] = now.Add(-10 * time.Second).Unix() })); err != nil {
			t.Fatalf("a token expired 10s ago was refused with a 30s skew: %v", err)
		}
	})
	t.Run("no token", func(t *testing.T) {
		if _, err := v.Verify(ctx, ""); !errors.Is(err, oauth.ErrNoToken) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("id token typ refused", func(t *testing.T) {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, as.Claims(resource))
		tok.Header["kid"], tok.Header["typ"] = as.Key().ID, "dpop+jwt"
		raw, err := tok.SignedString(as.Key().Private)
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.Verify(ctx, raw)
		refused(t, err, "typ")
	})
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestVerifyAlgorithmAttacks(t *testing.T) {
	as := oauthtest.NewServer(t)
	v := newVerifier(t, as, nil, oauth.Options{})
	ctx := context.Background()
	claims, _ := json.Marshal(as.Claims(resource))

	t.Run("alg none", func(t *testing.T) {
		for _, h := range []string{`{"alg":"none"}`, `{"alg":"none","typ":"JWT","kid":"rsa-1"}`, `{"alg":"NONE"}`} {
			_, err := v.Verify(ctx, b64(h)+"."+b64(string(claims))+".")
			refused(t, err, "alg")
		}
	})
	t.Run("HS256 keyed with the RSA public key", func(t *testing.T) {
		der, err := x509.MarshalPKIXPublicKey(as.Key().Private.Public())
		if err != nil {
			t.Fatal(err)
		}
		pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
		for _, secret := range [][]byte{pemKey, der} {
			tok := jwt.NewWithClaims(jwt.SigningMethodHS256, as.Claims(resource))
			tok.Header["kid"] = as.Key().ID
			raw, err := tok.SignedString(secret)
			if err != nil {
				t.Fatal(err)
			}
			_, err = v.Verify(ctx, raw)
			refused(t, err, "alg")
		}
	})
	t.Run("right kid, wrong key", func(t *testing.T) {
		forged := oauthtest.NewRSAKey(t, as.Key().ID)
		_, err := v.Verify(ctx, oauthtest.SignWith(t, forged, as.Claims(resource)))
		refused(t, err, "sig")
	})
	t.Run("kid of an RSA key, ES256 header", func(t *testing.T) {
		ec := oauthtest.NewECKey(t, as.Key().ID)
		_, err := v.Verify(ctx, oauthtest.SignWith(t, ec, as.Claims(resource)))
		refused(t, err, "kid")
	})
	t.Run("tampered claims", func(t *testing.T) {
		parts := strings.Split(as.Sign(t, as.Claims(resource)), ".")
		c := as.Claims(resource)
		c["sub"] = "mallory"
		body, _ := json.Marshal(c)
		_, err := v.Verify(ctx, parts[0]+"."+b64(string(body))+"."+parts[2])
		refused(t, err, "sig")
	})
}

func TestKeyRotationAndUnknownKidFlood(t *testing.T) {
	as := oauthtest.NewServer(t)
	v := newVerifier(t, as, nil, oauth.Options{RefetchEvery: time.Hour})
	ctx := context.Background()
	if _, err := v.Verify(ctx, as.Sign(t, as.Claims(resource))); err != nil {
		t.Fatal(err)
	}
	base := as.JWKSFetches.Load()
	old := as.Key()

	// The authorization server rotates to a new key: the first token
	// naming it causes one refetch and is accepted.
	next := oauthtest.NewECKey(t, "ec-2")
	as.SetKeys(next)
	if _, err := v.Verify(ctx, oauthtest.SignWith(t, next, as.Claims(resource))); err != nil {
		t.Fatalf("token signed with the rotated key: %v", err)
	}
	if n := as.JWKSFetches.Load() - base; n != 1 {
		t.Fatalf("rotation caused %d key set fetches, want 1", n)
	}
	// The old key is gone from the set, so its tokens no longer pass.
	_, err := v.Verify(ctx, oauthtest.SignWith(t, old, as.Claims(resource)))
	if err == nil {
		t.Fatal("a token of the retired key was accepted")
	}

	// A flood of made-up kids costs no more fetches within the period,
	// and each is refused at once.
	start := time.Now()
	for i := range 50 {
		k := oauthtest.Key{ID: fmt.Sprintf("made-up-%d", i), Alg: "ES256", Private: next.Private}
		_, err := v.Verify(ctx, oauthtest.SignWith(t, k, as.Claims(resource)))
		refused(t, err, "kid")
	}
	if n := as.JWKSFetches.Load() - base; n > 1 {
		t.Fatalf("50 unknown kids caused %d more key set fetches", n-1)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("refusing unknown kids took %s: requests wait for the limiter", d)
	}
}

func TestRequiredScopes(t *testing.T) {
	as := oauthtest.NewServer(t)
	v := newVerifier(t, as, func(c *oauth.Config) { c.RequiredScopes = []string{"mcp:tools", "mcp:write"} }, oauth.Options{})
	id, err := v.Verify(context.Background(), as.Sign(t, as.Claims(resource)))
	var is *oauth.InsufficientScopeError
	if !errors.As(err, &is) || !errors.Is(err, oauth.ErrInsufficientScope) {
		t.Fatalf("err %v, want insufficient scope", err)
	}
	if id.Subject != "alice" || strings.Join(is.Wanted(), " ") != "mcp:tools mcp:write" {
		t.Fatalf("identity %+v, wanted %v", id, is.Wanted())
	}
	c := as.Claims(resource)
	c["scope"] = "mcp:write mcp:tools"
	if _, err := v.Verify(context.Background(), as.Sign(t, c)); err != nil {
		t.Fatal(err)
	}
}

func TestDiscovery(t *testing.T) {
	t.Run("issuer mismatch is refused at start", func(t *testing.T) {
		as := oauthtest.NewServer(t)
		as.Issuer = "https://idp.example.com"
		_, err := oauth.NewVerifier(context.Background(), oauth.Config{Issuer: as.URL, Resource: resource}, oauth.Options{})
		if !errors.Is(err, oauth.ErrIssuerMismatch) {
			t.Fatalf("err %v, want ErrIssuerMismatch", err)
		}
	})
	t.Run("RFC 8414 with a path first, then OpenID", func(t *testing.T) {
		var seen []string
		var srv *httptest.Server
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = append(seen, r.URL.Path)
			if r.URL.Path == "/realms/fleet/.well-known/openid-configuration" {
				_ = json.NewEncoder(w).Encode(map[string]string{"issuer": srv.URL + "/realms/fleet", "jwks_uri": srv.URL + "/certs"})
				return
			}
			http.NotFound(w, r)
		}))
		defer srv.Close()
		m, err := oauth.Discover(context.Background(), nil, srv.URL+"/realms/fleet")
		if err != nil {
			t.Fatal(err)
		}
		want := "/.well-known/oauth-authorization-server/realms/fleet,/.well-known/openid-configuration/realms/fleet,/realms/fleet/.well-known/openid-configuration"
		if strings.Join(seen, ",") != want || m.JWKSURI != srv.URL+"/certs" {
			t.Fatalf("tried %v, got %+v", seen, m)
		}
	})
	t.Run("no document anywhere", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		defer srv.Close()
		if _, err := oauth.Discover(context.Background(), nil, srv.URL); err == nil || !strings.Contains(err.Error(), "none of") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("documents without usable jwks_uri", func(t *testing.T) {
		for _, doc := range []string{`{"issuer":"ISS"}`, `{"issuer":"ISS","jwks_uri":"http://keys.example.com/jwks"}`, `not json`} {
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(strings.ReplaceAll(doc, "ISS", srv.URL)))
			}))
			if _, err := oauth.Discover(context.Background(), nil, srv.URL); err == nil {
				t.Errorf("document %s accepted", doc)
			}
			srv.Close()
		}
	})
	t.Run("JWKS URL override skips discovery", func(t *testing.T) {
		as := oauthtest.NewServer(t)
		as.Issuer = "https://never-fetched.example"
		v := newVerifier(t, as, func(c *oauth.Config) { c.JWKSURL = as.URL + "/jwks" }, oauth.Options{})
		c := as.Claims(resource)
		if _, err := v.Verify(context.Background(), as.Sign(t, c)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("unreachable at start: unavailable, then retried", func(t *testing.T) {
		as := oauthtest.NewServer(t)
		var up atomic.Bool
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !up.Load() {
				http.Error(w, "down", http.StatusBadGateway)
				return
			}
			as.Config.Handler.ServeHTTP(w, r)
		}))
		defer proxy.Close()
		as.Issuer = proxy.URL
		var errs atomic.Int64
		v := newVerifier(t, as, func(c *oauth.Config) { c.Issuer = proxy.URL },
			oauth.Options{RetryEvery: 20 * time.Millisecond, OnError: func(error) { errs.Add(1) }})
		tok := as.Sign(t, as.Claims(resource))
		if _, err := v.Verify(context.Background(), tok); !errors.Is(err, oauth.ErrUnavailable) {
			t.Fatalf("err %v, want ErrUnavailable", err)
		}
		up.Store(true)
		deadline := time.Now().Add(5 * time.Second)
		for !v.Ready() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Fatalf("after the retry: %v", err)
		}
		if errs.Load() == 0 {
			t.Fatal("the failed discovery was not reported")
		}
	})
	t.Run("key set unreachable: unavailable", func(t *testing.T) {
		as := oauthtest.NewServer(t)
		down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", 500) }))
		defer down.Close()
		v := newVerifier(t, as, func(c *oauth.Config) { c.JWKSURL = down.URL }, oauth.Options{})
		if _, err := v.Verify(context.Background(), as.Sign(t, as.Claims(resource))); !errors.Is(err, oauth.ErrUnavailable) {
			t.Fatalf("err %v, want ErrUnavailable", err)
		}
	})
}

func TestCloseStopsBackgroundRefresh(t *testing.T) {
	as := oauthtest.NewServer(t)
	v, err := oauth.NewVerifier(context.Background(), oauth.Config{Issuer: as.Issuer, Resource: resource},
		oauth.Options{RefreshEvery: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for as.JWKSFetches.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if as.JWKSFetches.Load() < 3 {
		t.Fatal("the key set is not refreshed in the background")
	}
	v.Close()
	time.Sleep(30 * time.Millisecond)
	n := as.JWKSFetches.Load()
	time.Sleep(100 * time.Millisecond)
	if m := as.JWKSFetches.Load(); m != n {
		t.Fatalf("%d key set fetches after Close", m-n)
	}
}
