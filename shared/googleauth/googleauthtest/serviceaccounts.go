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
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// ServiceAccounts are the service accounts a fake token endpoint knows,
// and the check of the JWT bearer assertions (RFC 7523) they sign. The
// zero value is ready to use; it is safe for concurrent use.
type ServiceAccounts struct {
	mu       sync.Mutex
	accounts map[string]*serviceAccount
}

type serviceAccount struct {
	keyID string
	pub   *rsa.PublicKey
}

// Key creates a service account and returns its JSON key file, as the
// Google Cloud console downloads it, with token_uri tokenURI.
func (a *ServiceAccounts) Key(t testing.TB, email, tokenURI string) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	if a.accounts == nil {
		a.accounts = map[string]*serviceAccount{}
	}
	keyID := fmt.Sprintf("fake-key-%d", len(a.accounts)+1)
	a.accounts[email] = &serviceAccount{keyID: keyID, pub: &key.PublicKey}
	a.mu.Unlock()
	out, err := json.MarshalIndent(map[string]string{
		"type":                        "service_account",
		"project_id":                  "mcp-fleet-test",
		"private_key_id":              keyID,
		"private_key":                 string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":                email,
		"client_id":                   "100000000000000000001",
		"auth_uri":                    "https://accounts.google.com/o/oauth2/auth",
		"token_uri":                   tokenURI,
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Assertion is what a JWT bearer assertion claims.
type Assertion struct {
	// Issuer is the service account; Subject, when set, the user it asks
	// to act for (domain-wide delegation).
	Issuer, Subject string
	// Scope is the scopes asked for, separated by spaces.
	Scope string
}

// TokenError is a token endpoint's refusal: its OAuth error code and
// description.
type TokenError struct {
	Code, Description string
}

// Verify checks a JWT bearer assertion as Google's token endpoint does:
// signed (RS256) with the key of a known account, for audience, asking
// for a scope, and short-lived around now.
func (a *ServiceAccounts) Verify(assertion, audience string, now time.Time) (Assertion, *TokenError) {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return Assertion{}, &TokenError{"invalid_grant", "the assertion is not a JWT"}
	}
	var head struct{ Alg, Kid string }
	var claims struct {
		Iss   string `json:"iss"`
		Sub   string `json:"sub"`
		Scope string `json:"scope"`
		Aud   string `json:"aud"`
		Exp   int64  `json:"exp"`
		Iat   int64  `json:"iat"`
	}
	if decodeSegment(parts[0], &head) != nil || decodeSegment(parts[1], &claims) != nil {
		return Assertion{}, &TokenError{"invalid_grant", "undecodable assertion"}
	}
	a.mu.Lock()
	acct := a.accounts[claims.Iss]
	a.mu.Unlock()
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if acct == nil || head.Alg != "RS256" || head.Kid != acct.keyID || err != nil || rsa.VerifyPKCS1v15(acct.pub, crypto.SHA256, sum[:], sig) != nil {
		return Assertion{}, &TokenError{"invalid_grant", "Invalid JWT Signature."}
	}
	at := now.Unix()
	switch {
	case claims.Aud != audience:
		return Assertion{}, &TokenError{"invalid_grant", "Invalid JWT: audience"}
	case claims.Scope == "":
		return Assertion{}, &TokenError{"invalid_scope", "Invalid OAuth scope or ID token audience provided."}
	case claims.Exp < at || claims.Iat > at+300 || claims.Exp-claims.Iat > 3600:
		return Assertion{}, &TokenError{"invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe."}
	}
	return Assertion{Issuer: claims.Iss, Subject: claims.Sub, Scope: claims.Scope}, nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
