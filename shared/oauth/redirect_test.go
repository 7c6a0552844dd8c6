package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/oauth"
	"github.com/mcp-fleet/mcp-fleet/shared/oauth/oauthtest"
)

// TestIntrospectionDoesNotFollowRedirects: an introspection endpoint that
// redirects gets no second request carrying the token anywhere: the answer
// is "unavailable", not a verdict from wherever the redirect pointed.
func TestIntrospectionDoesNotFollowRedirects(t *testing.T) {
	as := oauthtest.NewServer(t)
	var leaked atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"active": true, "sub": "mallory", "aud": resource,
			"exp": time.Now().Add(time.Hour).Unix()})
	}))
	defer elsewhere.Close()
	var idp *httptest.Server
	idp = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/introspect" {
			http.Redirect(w, r, elsewhere.URL+"/introspect", http.StatusTemporaryRedirect)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": idp.URL, "jwks_uri": as.URL + "/jwks",
			"introspection_endpoint": idp.URL + "/introspect"})
	}))
	defer idp.Close()
	v, err := oauth.NewVerifier(context.Background(), oauth.Config{Issuer: idp.URL, Resource: resource,
		IntrospectionClientID: "a", IntrospectionSecret: "b"}, oauth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Verify(context.Background(), "opaque-token"); !errors.Is(err, oauth.ErrUnavailable) {
		t.Fatalf("err %v, want ErrUnavailable", err)
	}
	if n := leaked.Load(); n != 0 {
		t.Fatalf("the redirect was followed: the token was sent %d times to its target", n)
	}
}

// TestNoRedirectToPlainHTTP: a metadata or key fetch over https is not
// redirected to plain http, even on a loopback host where http is allowed
// as a configured URL.
func TestNoRedirectToPlainHTTP(t *testing.T) {
	var plainHits atomic.Int64
	var secure *httptest.Server
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainHits.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": secure.URL, "jwks_uri": secure.URL + "/jwks"})
	}))
	defer plain.Close()
	secure = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.Path, http.StatusFound)
	}))
	defer secure.Close()
	client := oauth.NewHTTPClient(5 * time.Second)
	client.Transport = secure.Client().Transport // trust the test certificate
	_, err := oauth.Discover(context.Background(), client, secure.URL)
	if err == nil || !strings.Contains(err.Error(), "https to http") {
		t.Fatalf("err %v, want the downgrade refused", err)
	}
	if n := plainHits.Load(); n != 0 {
		t.Fatalf("%d requests reached the plain http server", n)
	}
}
