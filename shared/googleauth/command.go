package googleauth

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/upstream"
	"golang.org/x/oauth2"
)

// CommandConfig describes a server's auth subcommand.
type CommandConfig struct {
	// Server is the server's name ("gmail"); the command is `<Server>-mcp
	// auth` and the token goes to that server's data directory.
	Server string
	// Prefix names the server's own environment variables ("GMAIL").
	Prefix string
	// Flags registers the flags that decide which tools will be served
	// (--read-only, --tools…), if the scopes depend on them.
	Flags func(f *cli.Flags)
	// Scopes returns the scopes to ask for, once flags are parsed.
	Scopes func() ([]string, error)
	// Identify learns the account's address with the new token, through
	// hc (the command's HTTP client); nil leaves it unknown.
	Identify func(ctx context.Context, hc *http.Client, ts oauth2.TokenSource) (string, error)
}

// TokenPath is where a server keeps the token the auth command stores.
func TokenPath(env *kit.Env) (string, error) {
	dir, err := env.DataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, TokenFileName), nil
}

// Command returns the `auth` subcommand: the loopback sign-in, the token
// stored 0600 in the server's data directory.
func Command(cc CommandConfig) kit.Command {
	var (
		s       Settings
		timeout time.Duration
		open    bool
	)
	program := cc.Server + "-mcp"
	return kit.Command{
		Name: "auth",
		Summary: "sign in with a Google account (OAuth loopback flow with PKCE) and store the token, refreshed from then on, " +
			"in the data directory (mode 0600)",
		Flags: func(f *cli.Flags) {
			s.Register(f, cc.Prefix, true)
			f.Duration(&timeout, "timeout", nil, DefaultFlowTimeout, "how long to wait for the browser's answer")
			f.Bool(&open, "open-browser", nil, false, "also open the address in the default browser")
			if cc.Flags != nil {
				cc.Flags(f)
			}
		},
		Run: func(ctx context.Context, env *kit.Env) error {
			if err := s.CheckClient(); err != nil {
				return err
			}
			s.Redact(env.Redactor)
			scopes, err := cc.Scopes()
			if err != nil {
				return err
			}
			path, err := TokenPath(env)
			if err != nil {
				return err
			}
			up, err := upstream.New(upstream.Config{Name: "google-oauth", Server: program, Version: env.Info.Version,
				Logger: env.Logger, Redactor: env.Redactor})
			if err != nil {
				return err
			}
			defer up.CloseIdleConnections()
			fc := FlowConfig{ClientID: s.ClientID, ClientSecret: s.ClientSecret, AuthURL: s.AuthURL, TokenURL: s.TokenURL,
				Scopes: scopes, HTTPClient: up.HTTPClient(), Timeout: timeout, Out: env.Stdout, OpenBrowser: open, Program: program}
			if cc.Identify != nil {
				fc.Identify = func(ctx context.Context, ts oauth2.TokenSource) (string, error) {
					return cc.Identify(ctx, up.HTTPClient(), ts)
				}
			}
			res, err := Authorize(ctx, fc)
			if err != nil {
				return err
			}
			env.Redactor.Add(res.Token.AccessToken, res.Token.RefreshToken)
			st := &Stored{AccessToken: res.Token.AccessToken, TokenType: res.Token.TokenType, RefreshToken: res.Token.RefreshToken,
				Expiry: res.Token.Expiry, Scopes: res.Scopes, Account: res.Email, ClientID: s.ClientID, Origin: OriginAuth,
				SavedAt: time.Now().UTC()}
			if err := (TokenFile{Path: path}).Save(st); err != nil {
				return err
			}
			who := "your Google account"
			if res.Email != "" {
				who = res.Email
			}
			fmt.Fprintf(env.Stdout, "\nSigned in as %s. The token is stored in %s (readable by you only); %s refreshes it as needed.\n", who, path, program)
			if len(res.Missing) > 0 {
				fmt.Fprintf(env.Stdout, "Google did not grant: %s. The tools that need it will fail; run `%s auth` again and allow every box on the consent screen.\n",
					strings.Join(res.Missing, " "), program)
			}
			if s.RefreshToken != "" {
				fmt.Fprintf(env.Stdout, "Note: a refresh token is also set in the environment (%s_REFRESH_TOKEN or GOOGLE_REFRESH_TOKEN); the stored token is used instead while it exists.\n", cc.Prefix)
			}
			return nil
		},
	}
}
