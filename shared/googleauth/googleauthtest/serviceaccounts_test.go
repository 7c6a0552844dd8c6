package googleauthtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"testing"
	"time"
)

// claims are the claims of a JWT bearer assertion.
type claims struct {
	Iss   string `json:"iss"`
	Sub   string `json:"sub,omitempty"`
	Scope string `json:"scope"`
	Aud   string `json:"aud"`
	Exp   int64  `json:"exp"`
	Iat   int64  `json:"iat"`
}

// sign makes a JWT bearer assertion (RS256) with the private key of a key
// file, as a service account's client does.
func sign(t *testing.T, keyFile []byte, c *claims) string {
	t.Helper()
	var k struct {
		PrivateKey   string `json:"private_key"`
		PrivateKeyID string `json:"private_key_id"`
	}
	if err := json.Unmarshal(keyFile, &k); err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode([]byte(k.PrivateKey))
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	segment := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signed := segment(map[string]string{"alg": "RS256", "typ": "JWT", "kid": k.PrivateKeyID}) + "." + segment(c)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, parsed.(*rsa.PrivateKey), crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func TestServiceAccounts(t *testing.T) {
	const aud = "https://oauth2.example/token"
	var accounts, others ServiceAccounts
	key := accounts.Key(t, "agent@project.iam.gserviceaccount.com", aud)
	stranger := others.Key(t, "stranger@project.iam.gserviceaccount.com", aud)
	var file map[string]string
	if err := json.Unmarshal(key, &file); err != nil || file["type"] != "service_account" || file["token_uri"] != aud ||
		file["client_email"] != "agent@project.iam.gserviceaccount.com" {
		t.Fatalf("key file %s: %v", key, err)
	}
	now := time.Now()
	assertion := func(edit func(c *claims)) *claims {
		c := &claims{Iss: "agent@project.iam.gserviceaccount.com", Sub: "jane@example.com", Scope: "a b", Aud: aud,
			Iat: now.Unix(), Exp: now.Add(time.Hour).Unix()}
		if edit != nil {
			edit(c)
		}
		return c
	}
	got, fail := accounts.Verify(sign(t, key, assertion(nil)), aud, now)
	if fail != nil || got != (Assertion{Issuer: "agent@project.iam.gserviceaccount.com", Subject: "jane@example.com", Scope: "a b"}) {
		t.Fatalf("a good assertion: %+v, %+v", got, fail)
	}
	valid := sign(t, key, assertion(nil))
	for _, tc := range []struct {
		name, assertion, audience string
		at                        time.Time
		want                      TokenError
	}{
		{"not a JWT", "abc", aud, now, TokenError{"invalid_grant", "the assertion is not a JWT"}},
		{"undecodable", "a.b.c", aud, now, TokenError{"invalid_grant", "undecodable assertion"}},
		{"another account's key", sign(t, stranger, assertion(func(c *claims) { c.Iss = "stranger@project.iam.gserviceaccount.com" })), aud, now,
			TokenError{"invalid_grant", "Invalid JWT Signature."}},
		{"signed by another key", sign(t, stranger, assertion(nil)), aud, now, TokenError{"invalid_grant", "Invalid JWT Signature."}},
		{"tampered", valid[:len(valid)-4] + "AAAA", aud, now, TokenError{"invalid_grant", "Invalid JWT Signature."}},
		{"audience", valid, "https://elsewhere.example/token", now, TokenError{"invalid_grant", "Invalid JWT: audience"}},
		{"no scope", sign(t, key, assertion(func(c *claims) { c.Scope = "" })), aud, now,
			TokenError{"invalid_scope", "Invalid OAuth scope or ID token audience provided."}},
		{"expired", valid, aud, now.Add(2 * time.Hour), TokenError{"invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe."}},
		{"too long", sign(t, key, assertion(func(c *claims) { c.Exp = now.Add(2 * time.Hour).Unix() })), aud, now,
			TokenError{"invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe."}},
	} {
		if _, fail := accounts.Verify(tc.assertion, tc.audience, tc.at); fail == nil || *fail != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, fail, tc.want)
		}
	}
}
