package googleauth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// DefaultFlowTimeout is how long Authorize waits for the browser's answer.
const DefaultFlowTimeout = 5 * time.Minute

// FlowConfig configures Authorize.
type FlowConfig struct {
	ClientID     string
	ClientSecret string
	// AuthURL and TokenURL default to Google's.
	AuthURL  string
	TokenURL string
	// Scopes to ask for: as few as the enabled tools need.
	Scopes []string
	// HTTPClient sends the code exchange (default http.DefaultClient).
	HTTPClient *http.Client
	// Timeout bounds the wait for the browser (DefaultFlowTimeout).
	Timeout time.Duration
	// Out receives the instructions and the URL to open.
	Out io.Writer
	// OpenBrowser: also try to open the URL in the default browser.
	OpenBrowser bool
	// Browser opens a URL (default: xdg-open, open or rundll32).
	Browser func(url string) error
	// Program names the server in the instructions ("gmail-mcp").
	Program string
	// Identify learns the account's address with the new token (for
	// example through the API's profile call); nil or a failure leaves the
	// address unknown.
	Identify func(ctx context.Context, ts oauth2.TokenSource) (string, error)
}

// Result is what a completed sign-in gives.
type Result struct {
	Token *oauth2.Token
	// Email is the account's address, when it could be learnt.
	Email string
	// Scopes are the scopes Google granted; Missing those asked for but
	// not granted (a person may untick some on the consent screen).
	Scopes  []string
	Missing []string
}

// Authorize runs the OAuth 2.0 authorization code flow for installed
// applications with a loopback redirect: it listens on 127.0.0.1 on a port
// the system picks, prints the authorization URL (PKCE S256 challenge,
// random state, offline access, consent prompt so that a refresh token is
// issued), waits for the browser to come back with the code, and exchanges
// it together with the PKCE verifier. An answer whose state does not match
// is refused and the wait goes on; a denial in the browser ends it.
func Authorize(ctx context.Context, cfg FlowConfig) (*Result, error) {
	if cfg.ClientID == "" || cfg.ClientSecret == "" {
		return nil, errors.New("googleauth: the OAuth client id and secret are required")
	}
	if len(cfg.Scopes) == 0 {
		return nil, errors.New("googleauth: no scopes to ask for")
	}
	if cfg.AuthURL == "" {
		cfg.AuthURL = DefaultAuthURL
	}
	if cfg.TokenURL == "" {
		cfg.TokenURL = DefaultTokenURL
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultFlowTimeout
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	if cfg.Program == "" {
		cfg.Program = "this server"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on 127.0.0.1 for Google's answer: %w", err)
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/", ln.Addr().(*net.TCPAddr).Port)
	state := randomHex(24)
	verifier := oauth2.GenerateVerifier()
	conf := &oauth2.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: redirect, Scopes: cfg.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: cfg.AuthURL, TokenURL: cfg.TokenURL, AuthStyle: oauth2.AuthStyleInParams}}
	authURL := conf.AuthCodeURL(state, oauth2.AccessTypeOffline, oauth2.ApprovalForce, oauth2.S256ChallengeOption(verifier))

	type answer struct {
		code string
		err  error
	}
	answers := make(chan answer, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		if q.Get("state") != state {
			// Not the answer to this sign-in (a stale tab, or a forged
			// request): refuse it and keep waiting for the real one.
			page(w, http.StatusBadRequest, "This answer does not belong to the sign-in in progress. Use the address the terminal shows.")
			return
		}
		var a answer
		switch e := q.Get("error"); {
		case e != "":
			a.err = fmt.Errorf("access not granted in the browser: %s", describeDenial(e))
			page(w, http.StatusOK, "Access was not granted ("+e+"). You can close this tab.")
		case q.Get("code") == "":
			page(w, http.StatusBadRequest, "The answer carries no authorization code.")
			return
		default:
			a.code = q.Get("code")
			page(w, http.StatusOK, "Signed in. You can close this tab and go back to the terminal.")
		}
		select {
		case answers <- a:
		default:
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	fmt.Fprintf(cfg.Out, "To let %s use your Google account, open this address in a browser on this computer:\n\n  %s\n\n", cfg.Program, authURL)
	fmt.Fprintf(cfg.Out, "It asks for: %s\n", strings.Join(cfg.Scopes, " "))
	if cfg.OpenBrowser {
		open := cfg.Browser
		if open == nil {
			open = openBrowser
		}
		if err := open(authURL); err != nil {
			fmt.Fprintf(cfg.Out, "Could not open a browser (%v); open the address yourself.\n", err)
		}
	}
	fmt.Fprintf(cfg.Out, "Waiting up to %s for Google's answer on %s (Ctrl-C to stop)…\n", cfg.Timeout, redirect)

	wait, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	var a answer
	select {
	case a = <-answers:
	case <-wait.Done():
		if ctx.Err() != nil {
			return nil, fmt.Errorf("sign-in stopped: %w", ctx.Err())
		}
		return nil, fmt.Errorf("no answer from the browser within %s; run the command again (--timeout sets the wait)", cfg.Timeout)
	}
	if a.err != nil {
		return nil, a.err
	}
	xctx, xcancel := context.WithTimeout(context.WithValue(ctx, oauth2.HTTPClient, cfg.HTTPClient), time.Minute)
	defer xcancel()
	tok, err := conf.Exchange(xctx, a.code, oauth2.VerifierOption(verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode != "" {
			return nil, fmt.Errorf("the token endpoint refused the authorization code (%s); run the command again", re.ErrorCode)
		}
		return nil, fmt.Errorf("exchanging the authorization code: %w", err)
	}
	if tok.RefreshToken == "" {
		return nil, errors.New("no refresh token was issued, so the server could not stay signed in; " +
			"remove the app's access at https://myaccount.google.com/permissions and run the command again")
	}
	res := &Result{Token: tok, Scopes: cfg.Scopes}
	if sc, ok := tok.Extra("scope").(string); ok && sc != "" {
		res.Scopes = strings.Fields(sc)
		for _, want := range cfg.Scopes {
			if !slices.Contains(res.Scopes, want) {
				res.Missing = append(res.Missing, want)
			}
		}
	}
	if cfg.Identify != nil {
		ictx, icancel := context.WithTimeout(ctx, 30*time.Second)
		defer icancel()
		if email, err := cfg.Identify(ictx, oauth2.StaticTokenSource(tok)); err == nil {
			res.Email = email
		}
	}
	return res, nil
}

func describeDenial(code string) string {
	if code == "access_denied" {
		return "access_denied (the consent screen was declined)"
	}
	return code
}

func page(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>Sign-in</title><p style=\"font:16px sans-serif;margin:3em\">%s</p>\n", html.EscapeString(msg))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
