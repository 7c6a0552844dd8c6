// Package googleauthtest is a fake Google authorization server for tests:
// the OAuth 2.0 authorization endpoint a browser visits, and the token
// endpoint with the authorization_code (PKCE), refresh_token and JWT bearer
// (service account, domain-wide delegation) grants. It checks what Google
// checks — the client, the redirect URI, the PKCE verifier against the
// challenge, single-use codes, revoked refresh tokens, JWT signatures,
// audiences and delegation — and answers in Google's error shape, so the
// real golang.org/x/oauth2 client can be driven against it.
package googleauthtest

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Grant is what an access token stands for.
type Grant struct {
	// Email is the account the token acts as: the signed-in person, the
	// delegated user, or the service account itself.
	Email  string
	Scopes []string
	// ServiceAccount is set for tokens obtained with a service account key.
	ServiceAccount string
}

// HasScope reports whether the grant includes scope.
func (g Grant) HasScope(scope string) bool { return slices.Contains(g.Scopes, scope) }

// Server is the fake. Fields may be changed between requests of a test.
type Server struct {
	URL          string
	AuthURL      string
	TokenURL     string
	ClientID     string
	ClientSecret string

	mu sync.Mutex
	// email is the person who consents in the browser.
	email string
	// accessTTL is the expires_in of issued access tokens.
	accessTTL time.Duration
	// rotate: every refresh issues a new refresh token and revokes the
	// old one.
	rotate bool
	deny   bool
	untick []string

	codes     map[string]*authCode
	refresh   map[string]Grant // live refresh tokens
	access    map[string]Grant
	accounts  ServiceAccounts
	delegates map[string]map[string]bool // service account → users it may act for
	faults    []fault
	lastAuth  url.Values

	exchanges, refreshes, issued int
	onIssue                      func(accessToken string, g Grant)
}

type authCode struct {
	clientID, redirect, challenge string
	scopes                        []string
	offline                       bool
	used                          bool
}

type fault struct {
	status int
	code   string
}

// New starts a fake whose consenting user is jane@example.com.
func New(t testing.TB) *Server {
	s := &Server{ClientID: "1234567890-fake.apps.googleusercontent.com", ClientSecret: "GOCSPX-fake-client-secret",
		email: "jane@example.com", accessTTL: time.Hour,
		codes: map[string]*authCode{}, refresh: map[string]Grant{}, access: map[string]Grant{},
		delegates: map[string]map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/o/oauth2/v2/auth", s.serveAuth)
	mux.HandleFunc("/token", s.serveToken)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	s.AuthURL = hs.URL + "/o/oauth2/v2/auth"
	s.TokenURL = hs.URL + "/token"
	return s
}

// SetUser sets the address of the person who signs in.
func (s *Server) SetUser(email string) { s.mu.Lock(); s.email = email; s.mu.Unlock() }

// SetAccessTTL sets the lifetime of access tokens issued from now on. One
// under ten seconds makes golang.org/x/oauth2 refresh on every use.
func (s *Server) SetAccessTTL(d time.Duration) { s.mu.Lock(); s.accessTTL = d; s.mu.Unlock() }

// OnIssue calls fn with every access token issued from now on (for an API
// fake that keeps its own list of valid tokens). fn runs with the fake's
// lock held: it must not call the fake.
func (s *Server) OnIssue(fn func(accessToken string, g Grant)) {
	s.mu.Lock()
	s.onIssue = fn
	s.mu.Unlock()
}

// SetRotate makes every refresh issue a new refresh token and revoke the
// one used.
func (s *Server) SetRotate(on bool) { s.mu.Lock(); s.rotate = on; s.mu.Unlock() }

// SetDeny makes the person decline the consent screen.
func (s *Server) SetDeny(on bool) { s.mu.Lock(); s.deny = on; s.mu.Unlock() }

// Untick makes the person untick scopes on the consent screen.
func (s *Server) Untick(scopes ...string) { s.mu.Lock(); s.untick = scopes; s.mu.Unlock() }

// FailNextToken makes the next token request fail with status and OAuth
// error code (e.g. 500 "internal_failure", 400 "invalid_grant").
func (s *Server) FailNextToken(status int, code string) {
	s.mu.Lock()
	s.faults = append(s.faults, fault{status, code})
	s.mu.Unlock()
}

// RevokeAll revokes every refresh and access token, as a person removing
// the app's access in their Google account does.
func (s *Server) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh = map[string]Grant{}
	s.access = map[string]Grant{}
}

// IssueRefreshToken returns a live refresh token for the consenting user
// with scopes, as if they had signed in before.
func (s *Server) IssueRefreshToken(scopes ...string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt := "1//fake-refresh-" + token()
	s.refresh[rt] = Grant{Email: s.email, Scopes: scopes}
	return rt
}

// RefreshTokenLive reports whether rt is a refresh token the fake accepts.
func (s *Server) RefreshTokenLive(rt string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.refresh[rt]
	return ok
}

// LastAuthRequest returns the query of the last authorization request.
func (s *Server) LastAuthRequest() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastAuth
}

// Counts returns the code exchanges, refreshes and access tokens issued.
func (s *Server) Counts() (exchanges, refreshes, issued int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exchanges, s.refreshes, s.issued
}

// Check returns the grant of the request's bearer token.
func (s *Server) Check(r *http.Request) (Grant, bool) {
	v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return Grant{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.access[v]
	return g, ok
}

// Browse plays the person: it opens the authorization URL and follows the
// redirect back to the loopback listener, returning that final response.
func (s *Server) Browse(authURL string) (*http.Response, error) {
	c := &http.Client{Timeout: 30 * time.Second}
	return c.Get(authURL)
}

// BrowsePrinted plays the person at the terminal and in the browser: it
// reads what a sign-in prints from r to the end (the caller closes the
// writer, and may then read what was printed), opens the first line that
// is an authorization URL of this server with Browse (calling before with
// it first, when not nil), and reports to the channel what happened: an
// error when no URL was printed or the loopback did not answer 200.
func (s *Server) BrowsePrinted(r io.Reader, before func(authURL string)) <-chan error {
	errs := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sent := false
		var err error
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if sent || !strings.HasPrefix(line, s.AuthURL) {
				continue
			}
			sent = true
			if before != nil {
				before(line)
			}
			var resp *http.Response
			if resp, err = s.Browse(line); err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = errors.New("the loopback answered " + resp.Status)
				}
			}
		}
		if !sent {
			err = errors.New("no URL printed")
		}
		errs <- err
	}()
	return errs
}

// ServiceAccountKey creates a service account and returns its JSON key file
// (token_uri pointing at the fake).
func (s *Server) ServiceAccountKey(t testing.TB, email string) []byte {
	t.Helper()
	return s.accounts.Key(t, email, s.TokenURL)
}

// AllowDelegation lets the service account act for user (a Workspace
// admin's domain-wide delegation).
func (s *Server) AllowDelegation(serviceAccount, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.delegates[serviceAccount] == nil {
		s.delegates[serviceAccount] = map[string]bool{}
	}
	s.delegates[serviceAccount][strings.ToLower(user)] = true
}

func (s *Server) serveAuth(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	s.lastAuth = q
	deny, email, untick := s.deny, s.email, s.untick
	s.mu.Unlock()
	bad := func(msg string) { http.Error(w, "Error 400: invalid_request — "+msg, http.StatusBadRequest) }
	redirect := q.Get("redirect_uri")
	ru, err := url.Parse(redirect)
	switch {
	case q.Get("client_id") != s.ClientID:
		http.Error(w, "Error 401: invalid_client — The OAuth client was not found.", http.StatusUnauthorized)
		return
	case err != nil || ru.Scheme != "http" || (ru.Hostname() != "127.0.0.1" && ru.Hostname() != "[::1]") || ru.Port() == "":
		bad("redirect_uri must be a loopback address with a port")
		return
	case q.Get("response_type") != "code":
		bad("response_type must be code")
		return
	case q.Get("scope") == "":
		bad("Missing required parameter: scope")
		return
	case q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) < 43:
		bad("PKCE with code_challenge_method=S256 is required")
		return
	case q.Get("state") == "":
		bad("state is required")
		return
	}
	back := url.Values{"state": {q.Get("state")}}
	if deny {
		back.Set("error", "access_denied")
		http.Redirect(w, r, redirect+"?"+back.Encode(), http.StatusFound)
		return
	}
	var scopes []string
	for _, sc := range strings.Fields(q.Get("scope")) {
		if !slices.Contains(untick, sc) {
			scopes = append(scopes, sc)
		}
	}
	code := "4/fake-code-" + token()
	s.mu.Lock()
	s.codes[code] = &authCode{clientID: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"),
		scopes: scopes, offline: q.Get("access_type") == "offline" && strings.Contains(" "+q.Get("prompt")+" ", " consent ")}
	s.mu.Unlock()
	_ = email
	back.Set("code", code)
	back.Set("scope", strings.Join(scopes, " "))
	http.Redirect(w, r, redirect+"?"+back.Encode(), http.StatusFound)
}

func tokenError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		tokenError(w, 400, "invalid_request", "POST a form")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) > 0 {
		f := s.faults[0]
		s.faults = s.faults[1:]
		tokenError(w, f.status, f.code, "injected failure")
		return
	}
	f := r.PostForm
	clientID, secret := f.Get("client_id"), f.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok {
		clientID, secret = u, p
	}
	switch f.Get("grant_type") {
	case "authorization_code":
		if clientID != s.ClientID || secret != s.ClientSecret {
			tokenError(w, 401, "invalid_client", "Unauthorized")
			return
		}
		c := s.codes[f.Get("code")]
		if c == nil || c.used {
			tokenError(w, 400, "invalid_grant", "Malformed auth code.")
			return
		}
		c.used = true
		if c.redirect != f.Get("redirect_uri") {
			tokenError(w, 400, "redirect_uri_mismatch", "Bad Request")
			return
		}
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if f.Get("code_verifier") == "" || base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
			tokenError(w, 400, "invalid_grant", "Invalid code verifier.")
			return
		}
		s.exchanges++
		g := Grant{Email: s.email, Scopes: c.scopes}
		rt := ""
		if c.offline {
			rt = "1//fake-refresh-" + token()
			s.refresh[rt] = g
		}
		s.issue(w, g, rt)
	case "refresh_token":
		if clientID != s.ClientID || secret != s.ClientSecret {
			tokenError(w, 401, "invalid_client", "Unauthorized")
			return
		}
		old := f.Get("refresh_token")
		g, ok := s.refresh[old]
		if !ok {
			tokenError(w, 400, "invalid_grant", "Token has been expired or revoked.")
			return
		}
		s.refreshes++
		rt := ""
		if s.rotate {
			delete(s.refresh, old)
			rt = "1//fake-refresh-" + token()
			s.refresh[rt] = g
		}
		s.issue(w, g, rt)
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		s.serveJWT(w, f.Get("assertion"))
	default:
		tokenError(w, 400, "unsupported_grant_type", "Invalid grant_type: "+f.Get("grant_type"))
	}
}

// issue answers with a new access token for g (and rt, when not empty).
// Called with s.mu held.
func (s *Server) issue(w http.ResponseWriter, g Grant, rt string) {
	s.issued++
	at := "ya29.fake-" + token()
	s.access[at] = g
	if s.onIssue != nil {
		s.onIssue(at, g)
	}
	out := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(s.accessTTL / time.Second),
		"scope": strings.Join(g.Scopes, " ")}
	if rt != "" {
		out["refresh_token"] = rt
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// serveJWT is the JWT bearer grant (RFC 7523) of service accounts. Called
// with s.mu held.
func (s *Server) serveJWT(w http.ResponseWriter, assertion string) {
	a, fail := s.accounts.Verify(assertion, s.TokenURL, time.Now())
	if fail != nil {
		tokenError(w, 400, fail.Code, fail.Description)
		return
	}
	g := Grant{Email: a.Issuer, Scopes: strings.Fields(a.Scope), ServiceAccount: a.Issuer}
	if a.Subject != "" {
		if !s.delegates[a.Issuer][strings.ToLower(a.Subject)] {
			tokenError(w, 401, "unauthorized_client", "Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.")
			return
		}
		g.Email = a.Subject
	}
	s.issue(w, g, "")
}

func token() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
