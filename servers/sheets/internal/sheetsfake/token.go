package sheetsfake

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
	"net/http"
	"strings"
	"testing"
	"time"
)

// SpreadsheetsScope is the OAuth scope the token endpoint requires.
const SpreadsheetsScope = "https://www.googleapis.com/auth/spreadsheets"

type account struct {
	email string
	keyID string
	pub   *rsa.PublicKey
}

// ServiceAccountKey creates a service account known to the fake's token
// endpoint and returns its JSON key file, as the Google Cloud console
// downloads it, with token_uri pointing at the fake.
func (s *Server) ServiceAccountKey(t testing.TB, email string) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	keyID := fmt.Sprintf("fake-key-%d", len(s.accounts)+1)
	s.accounts[email] = &account{email: email, keyID: keyID, pub: &key.PublicKey}
	s.mu.Unlock()
	out, err := json.MarshalIndent(map[string]string{
		"type":                        "service_account",
		"project_id":                  "mcp-fleet-test",
		"private_key_id":              keyID,
		"private_key":                 string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":                email,
		"client_id":                   "100000000000000000001",
		"auth_uri":                    "https://accounts.google.com/o/oauth2/auth",
		"token_uri":                   s.URL + "/token",
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Issued counts the access tokens the token endpoint has issued.
func (s *Server) Issued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

// serveToken is the OAuth 2.0 token endpoint for the JWT bearer grant
// (RFC 7523) that service accounts use: it checks the assertion's signature
// against the account's public key, its issuer, audience, scope and expiry.
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	s.runHook(OpToken)
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.takeFault(OpToken, false); f != nil {
		fail(f.status, "temporarily_unavailable", "injected failure")
		return
	}
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		fail(400, "invalid_request", "POST a form")
		return
	}
	if g := r.PostForm.Get("grant_type"); g != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		fail(400, "unsupported_grant_type", "grant_type "+g)
		return
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if len(parts) != 3 {
		fail(400, "invalid_grant", "the assertion is not a JWT")
		return
	}
	var head struct {
		Alg, Typ, Kid string
	}
	var claims struct {
		Iss   string `json:"iss"`
		Scope string `json:"scope"`
		Aud   string `json:"aud"`
		Exp   int64  `json:"exp"`
		Iat   int64  `json:"iat"`
	}
	if decodeSegment(parts[0], &head) != nil || decodeSegment(parts[1], &claims) != nil {
		fail(400, "invalid_grant", "undecodable assertion")
		return
	}
	acct := s.accounts[claims.Iss]
	if acct == nil || head.Alg != "RS256" || head.Kid != acct.keyID {
		fail(400, "invalid_grant", "Invalid JWT Signature.")
		return
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err != nil || rsa.VerifyPKCS1v15(acct.pub, crypto.SHA256, sum[:], sig) != nil {
		fail(400, "invalid_grant", "Invalid JWT Signature.")
		return
	}
	now := s.now().Unix()
	switch {
	case claims.Aud != s.URL+"/token":
		fail(400, "invalid_grant", "Invalid JWT: audience")
	case !strings.Contains(" "+claims.Scope+" ", " "+SpreadsheetsScope+" "):
		fail(400, "invalid_scope", "the spreadsheets scope is missing")
	case claims.Exp < now || claims.Iat > now+300 || claims.Exp-claims.Iat > 3600:
		fail(400, "invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.")
	default:
		s.issued++
		tok := fmt.Sprintf("ya29.fake-%d-%d", s.issued, time.Now().UnixNano())
		s.tokens[tok] = true
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3599})
	}
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
