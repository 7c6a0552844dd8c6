package sheetsfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// SpreadsheetsScope is the OAuth scope the token endpoint requires.
const SpreadsheetsScope = "https://www.googleapis.com/auth/spreadsheets"

// ServiceAccountKey creates a service account known to the fake's token
// endpoint and returns its JSON key file, as the Google Cloud console
// downloads it, with token_uri pointing at the fake.
func (s *Server) ServiceAccountKey(t testing.TB, email string) []byte {
	t.Helper()
	return s.accounts.Key(t, email, s.URL+"/token")
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
	a, failed := s.accounts.Verify(r.PostForm.Get("assertion"), s.URL+"/token", s.now())
	switch {
	case failed != nil:
		fail(400, failed.Code, failed.Description)
	case !strings.Contains(" "+a.Scope+" ", " "+SpreadsheetsScope+" "):
		fail(400, "invalid_scope", "the spreadsheets scope is missing")
	default:
		s.issued++
		tok := fmt.Sprintf("ya29.fake-%d-%d", s.issued, time.Now().UnixNano())
		s.tokens[tok] = true
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3599})
	}
}
