package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mcp-fleet/mcp-fleet/shared/oauth"
	"github.com/mcp-fleet/mcp-fleet/shared/oauth/oauthtest"
)

// TestEncryptionKeysDoNotVerify: a key the authorization server publishes
// for encryption (use "enc") verifies no token, whether the token names
// its kid or names none; a key with no use verifies as a signing key.
func TestEncryptionKeysDoNotVerify(t *testing.T) {
	as := oauthtest.NewServer(t)
	enc := oauthtest.NewRSAKey(t, "enc-1")
	plain := oauthtest.NewRSAKey(t, "plain-1")
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e, p := oauthtest.PublicJWK(enc), oauthtest.PublicJWK(plain)
		e["use"] = "enc"
		delete(p, "use")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []any{e, p, oauthtest.PublicJWK(as.Key())}})
	}))
	defer jwks.Close()
	v := newVerifier(t, as, func(c *oauth.Config) { c.JWKSURL = jwks.URL }, oauth.Options{})
	ctx := context.Background()

	_, err := v.Verify(ctx, oauthtest.SignWith(t, enc, as.Claims(resource)))
	refused(t, err, "use")

	noKid := jwt.NewWithClaims(jwt.SigningMethodRS256, as.Claims(resource))
	raw, err := noKid.SignedString(enc.Private)
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(ctx, raw)
	refused(t, err, "sig")

	if _, err := v.Verify(ctx, oauthtest.SignWith(t, plain, as.Claims(resource))); err != nil {
		t.Fatalf("a key without use: %v", err)
	}
	if _, err := v.Verify(ctx, as.Sign(t, as.Claims(resource))); err != nil {
		t.Fatalf("a sig key: %v", err)
	}
}
