// Package oauthtest is an authorization server for tests: an httptest
// server that publishes OpenID Connect discovery and a JSON Web Key Set
// with keys generated for the test, and signs access tokens with them
// (real RSA and ECDSA signatures, through golang-jwt).
package oauthtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Key is a signing key and the kid it is published under.
type Key struct {
	ID      string
	Alg     string
	Private crypto.Signer
}

// Server is a test authorization server.
type Server struct {
	*httptest.Server
	// Issuer is the issuer identifier (the server's URL) that discovery
	// documents state; set it before the first request to lie about it.
	Issuer string

	mu     sync.Mutex
	keys   []Key
	opaque map[string]map[string]any
	// JWKSFetches counts requests for the key set, Introspections the
	// introspection requests.
	JWKSFetches      atomic.Int64
	Introspections   atomic.Int64
	beforeIntrospect func()
}

// The introspection endpoint (RFC 7662) accepts this client only.
const (
	IntrospectionClient = "resource-server"
	IntrospectionSecret = "resource-server-secret"
)

// NewServer starts an authorization server with one RSA key ("rsa-1").
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"issuer": s.Issuer, "jwks_uri": s.URL + "/jwks",
			"authorization_endpoint": s.URL + "/authorize", "token_endpoint": s.URL + "/token",
			"introspection_endpoint": s.URL + "/introspect"})
	})
	mux.HandleFunc("/introspect", func(w http.ResponseWriter, r *http.Request) {
		s.Introspections.Add(1)
		s.mu.Lock()
		hold := s.beforeIntrospect
		s.mu.Unlock()
		if hold != nil {
			hold()
		}
		id, secret, ok := r.BasicAuth()
		if !ok || id != IntrospectionClient || secret != IntrospectionSecret || r.Method != http.MethodPost {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		s.mu.Lock()
		resp, known := s.opaque[r.PostFormValue("token")]
		s.mu.Unlock()
		if !known {
			resp = map[string]any{"active": false}
		}
		writeJSON(w, resp)
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		s.JWKSFetches.Add(1)
		writeJSON(w, s.JWKS())
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	s.Issuer = s.URL
	s.AddKey(NewRSAKey(t, "rsa-1"))
	return s
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// SetOpaque makes the introspection endpoint answer resp for token.
func (s *Server) SetOpaque(token string, resp map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opaque == nil {
		s.opaque = map[string]map[string]any{}
	}
	s.opaque[token] = resp
}

// BeforeIntrospect makes each introspection request run f before it is
// answered (to hold it); nil removes it.
func (s *Server) BeforeIntrospect(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beforeIntrospect = f
}

// NewRSAKey generates an RS256 key.
func NewRSAKey(t testing.TB, kid string) Key {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return Key{ID: kid, Alg: "RS256", Private: k}
}

// NewECKey generates an ES256 key.
func NewECKey(t testing.TB, kid string) Key {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return Key{ID: kid, Alg: "ES256", Private: k}
}

// AddKey publishes k in the key set.
func (s *Server) AddKey(k Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, k)
}

// SetKeys replaces the published keys (a rotation).
func (s *Server) SetKeys(keys ...Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append([]Key(nil), keys...)
}

// Key returns the first published key.
func (s *Server) Key() Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[0]
}

// JWKS is the published key set.
func (s *Server) JWKS() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := []any{}
	for _, k := range s.keys {
		keys = append(keys, PublicJWK(k))
	}
	return map[string]any{"keys": keys}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// PublicJWK is the public half of k as a JWK.
func PublicJWK(k Key) map[string]any {
	switch p := k.Private.Public().(type) {
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "kid": k.ID, "use": "sig", "alg": k.Alg,
			"n": b64(p.N.Bytes()), "e": b64(big.NewInt(int64(p.E)).Bytes())}
	case *ecdsa.PublicKey:
		// Uncompressed point: 0x04, then X and Y, 32 bytes each on P-256.
		b, err := p.Bytes()
		if err != nil || len(b) != 65 {
			panic("oauthtest: not a P-256 key")
		}
		return map[string]any{"kty": "EC", "kid": k.ID, "use": "sig", "alg": k.Alg, "crv": "P-256",
			"x": b64(b[1:33]), "y": b64(b[33:])}
	}
	panic("oauthtest: unsupported key type")
}

// Claims are the usual claims of an access token for resource, valid for
// five minutes, with sub "alice" and scope "mcp:tools".
func (s *Server) Claims(resource string) jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{"iss": s.Issuer, "sub": "alice", "aud": resource, "client_id": "test-client",
		"scope": "mcp:tools", "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": "t-1"}
}

// Sign signs claims with the first published key.
func (s *Server) Sign(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	return SignWith(t, s.Key(), claims)
}

// SignWith signs claims with k, naming k.ID as the kid and at+jwt as typ.
func SignWith(t testing.TB, k Key, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.GetSigningMethod(k.Alg), claims)
	tok.Header["kid"] = k.ID
	tok.Header["typ"] = "at+jwt"
	raw, err := tok.SignedString(k.Private)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
