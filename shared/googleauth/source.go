package googleauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/oauth2"

	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/upstream"
)

// UserConfig configures a user-credentials token source.
type UserConfig struct {
	Settings *Settings
	File     TokenFile
	// HTTPClient sends the token requests (the server's upstream client for
	// Google's token endpoint). Refreshing twice is harmless, so its
	// requests are marked safe to retry.
	HTTPClient *http.Client
	// Command is what a person runs to sign in, e.g. "gmail-mcp auth"; error
	// messages name it.
	Command  string
	Logger   *zerolog.Logger
	Redactor *logging.Redactor
	// Now replaces the clock that stamps saved tokens (tests).
	Now func() time.Time
}

// UserSource is the oauth2.TokenSource of a person's Google credentials.
// Access tokens are refreshed before they expire and every refreshed token
// is written back to the token file, refresh token included, so that a
// refresh token Google rotates is never lost. Safe for concurrent use.
type UserSource struct {
	cfg    UserConfig
	base   oauth2.TokenSource
	mu     sync.Mutex
	stored Stored
	// IgnoredEnv: a refresh token in the environment was passed over for
	// the token the auth command stored.
	IgnoredEnv bool
	// LooseMode: the token file could be read by other users.
	LooseMode bool
}

// NewUserSource picks the grant to use and returns its token source; it
// sends no request. A token the auth command stored wins over a refresh
// token in the environment (the person signed in on purpose); otherwise the
// environment's refresh token is used, continuing from the file it was
// persisted to when it is the same one. With neither, the error says to run
// cfg.Command.
func NewUserSource(cfg UserConfig) (*UserSource, error) {
	s := cfg.Settings
	if s == nil {
		return nil, errors.New("googleauth: UserConfig.Settings is required")
	}
	if err := s.CheckClient(); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	st, loose, err := cfg.File.Load()
	if err != nil && !errors.Is(err, ErrNoToken) {
		return nil, err
	}
	env := s.RefreshToken
	switch {
	case st != nil && st.Origin != OriginEnv:
	case st != nil && env != "" && st.EnvSeed == seedOf(env):
	case env != "":
		st, loose = &Stored{RefreshToken: env, ClientID: s.ClientID, Origin: OriginEnv, EnvSeed: seedOf(env)}, false
	case st != nil:
	default:
		return nil, fmt.Errorf("no Google sign-in: run `%s` to sign in with your Google account (it stores a token in %s), or set %s_REFRESH_TOKEN", cfg.Command, cfg.File.Path, s.prefix)
	}
	if st.ClientID != "" && st.ClientID != s.ClientID {
		return nil, fmt.Errorf("the stored Google token (%s) belongs to OAuth client %s, not the configured %s: set that client id again, or run `%s` with this one",
			cfg.File.Path, st.ClientID, s.ClientID, cfg.Command)
	}
	st.ClientID = s.ClientID
	u := &UserSource{cfg: cfg, stored: *st, IgnoredEnv: env != "" && st.Origin != OriginEnv, LooseMode: loose}
	if cfg.Redactor != nil {
		cfg.Redactor.Add(st.Secrets()...)
	}
	conf := &oauth2.Config{ClientID: s.ClientID, ClientSecret: s.ClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: s.TokenURL, AuthStyle: oauth2.AuthStyleInParams}, Scopes: st.Scopes}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	ctx := context.WithValue(upstream.MarkIdempotent(context.Background()), oauth2.HTTPClient, hc)
	u.base = conf.TokenSource(ctx, st.OAuth2())
	return u, nil
}

// Account is the Google account's address, when known.
func (u *UserSource) Account() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.stored.Account
}

// Scopes are the scopes granted, when known.
func (u *UserSource) Scopes() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.stored.Scopes...)
}

// Origin says where the grant came from: OriginAuth or OriginEnv.
func (u *UserSource) Origin() string { return u.stored.Origin }

// Token returns a valid access token, refreshing it when it is about to
// expire and persisting what the refresh returned.
func (u *UserSource) Token() (*oauth2.Token, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	tok, err := u.base.Token()
	if err != nil {
		return nil, u.refreshError(err)
	}
	if tok.AccessToken == u.stored.AccessToken && tok.RefreshToken == u.stored.RefreshToken {
		return tok, nil
	}
	if u.cfg.Redactor != nil {
		u.cfg.Redactor.Add(tok.AccessToken, tok.RefreshToken)
	}
	u.stored.AccessToken, u.stored.TokenType, u.stored.Expiry = tok.AccessToken, tok.TokenType, tok.Expiry
	if tok.RefreshToken != "" {
		u.stored.RefreshToken = tok.RefreshToken
	}
	if sc, ok := tok.Extra("scope").(string); ok && sc != "" {
		u.stored.Scopes = strings.Fields(sc)
	}
	u.stored.SavedAt = u.cfg.Now().UTC()
	if err := u.cfg.File.Save(&u.stored); err != nil && u.cfg.Logger != nil {
		// The token works for this process; only a restart would miss it.
		u.cfg.Logger.Error().Err(err).Msg("the refreshed Google token could not be saved; after a restart the old one is used")
	}
	return tok, nil
}

// refreshError turns a failed refresh into what the caller should see.
func (u *UserSource) refreshError(err error) error {
	cmd := u.cfg.Command
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		switch errorCode(re) {
		case "invalid_grant":
			return mcperr.New(mcperr.Authentication,
				"Google no longer accepts the stored sign-in (invalid_grant: revoked, expired or replaced); run `%s` again to sign in", cmd).WithCause(err)
		case "invalid_client", "unauthorized_client":
			return mcperr.New(mcperr.Authentication,
				"Google rejected the OAuth client (%s): check %s_CLIENT_ID and %s_CLIENT_SECRET (or GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET)",
				re.ErrorCode, u.cfg.Settings.prefix, u.cfg.Settings.prefix).WithCause(err)
		}
		if re.Response != nil {
			hint := "refreshing the access token"
			if re.ErrorCode != "" {
				hint += " (" + re.ErrorCode + ")"
			}
			e := upstream.FromStatus("google-oauth", re.Response.StatusCode, re.Response.Header, upstream.Detail(hint))
			if e.Code == mcperr.Validation || e.Code == mcperr.PermissionDeny {
				e = mcperr.New(mcperr.Authentication, "%s; run `%s` again if it persists", e.Message, cmd)
			}
			return e.WithCause(err)
		}
	}
	return upstream.FromError("google-oauth", err, upstream.Detail("refreshing the access token"))
}

// AuthHook returns an upstream.Config.Auth function that sets the bearer
// token of ts on each attempt. A token failure that is already an
// *mcperr.Error (as UserSource's are) reaches the client as it is; any other
// becomes AUTHENTICATION_ERROR saying what to check.
func AuthHook(ts oauth2.TokenSource, check string) func(*http.Request) error {
	return func(r *http.Request) error {
		tok, err := ts.Token()
		if err != nil {
			var me *mcperr.Error
			if errors.As(err, &me) {
				return me
			}
			if e := mapRetrieve(err); e != nil {
				return e
			}
			return mcperr.New(mcperr.Authentication, "could not obtain a Google access token; %s", check).WithCause(err)
		}
		tok.SetAuthHeader(r)
		return nil
	}
}

// mapRetrieve explains a token endpoint's refusal of a service account.
func mapRetrieve(err error) *mcperr.Error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return nil
	}
	switch errorCode(re) {
	case "unauthorized_client":
		return mcperr.New(mcperr.Authentication,
			"Google refused the service account for these scopes or this user (unauthorized_client): a Workspace admin must grant its client id domain-wide delegation for the scopes").WithCause(err)
	case "invalid_grant":
		return mcperr.New(mcperr.Authentication,
			"Google refused the service account's assertion (invalid_grant): the key may be deleted or disabled, the delegated user may not exist, or the clock is off").WithCause(err)
	}
	if re.Response != nil && re.Response.StatusCode >= 500 {
		return upstream.FromStatus("google-oauth", re.Response.StatusCode, re.Response.Header, upstream.Detail("obtaining an access token"))
	}
	return nil
}

// errorCode is the OAuth error code of a token endpoint's refusal. The JWT
// grant's client leaves RetrieveError.ErrorCode empty, so the body's
// "error" member is read too (never shown: it may echo the request).
func errorCode(re *oauth2.RetrieveError) string {
	if re.ErrorCode != "" {
		return re.ErrorCode
	}
	var doc struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(re.Body, &doc) == nil {
		return doc.Error
	}
	return ""
}
