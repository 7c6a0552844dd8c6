package googleauth

import (
	"net/http"

	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"golang.org/x/oauth2"
)

// CredentialsConfig says where a server's Google credentials come from: a
// service account key when KeyPath is set, else the person's sign-in.
type CredentialsConfig struct {
	// KeyPath is the service account key file; empty selects the person's
	// sign-in.
	KeyPath string
	// KeySetting names the flag and variable that set KeyPath, for errors
	// about the key ("--service-account-key or GOOGLE_SERVICE_ACCOUNT_KEY_PATH").
	KeySetting string
	// Subject is the user a key acts for (domain-wide delegation), or "".
	Subject string
	// Scopes are what a key's tokens are asked for; a sign-in carries the
	// scopes it was granted.
	Scopes []string
	// Settings is the OAuth client of the person's sign-in.
	Settings *Settings
	// TokenPath is the file the auth command stored the sign-in in.
	TokenPath string
	// Command is what a person runs to sign in, e.g. "sheets-mcp auth".
	Command string
	// HTTPClient sends the token requests.
	HTTPClient *http.Client
}

// Credentials are the selected credentials: exactly one of Key and User is
// set, and TokenSource is its token source.
type Credentials struct {
	TokenSource oauth2.TokenSource
	Key         *ServiceAccount
	User        *UserSource
}

// SelectCredentials loads the credentials cfg selects, the same way on every
// server: the client's and the key's secrets are masked in env's logs, a
// file other users can read is warned about, and a key that cannot be
// loaded is a usage error naming its setting. It sends no request.
func SelectCredentials(env *kit.Env, cfg CredentialsConfig) (Credentials, error) {
	if cfg.Settings != nil && env.Redactor != nil {
		cfg.Settings.Redact(env.Redactor)
	}
	if cfg.KeyPath != "" {
		sa, err := LoadServiceAccount(cfg.KeyPath, cfg.HTTPClient, cfg.Subject, cfg.Scopes...)
		if err != nil {
			return Credentials{}, &cli.UsageError{Msg: err.Error() + " (" + cfg.KeySetting + ")"}
		}
		if env.Redactor != nil {
			env.Redactor.Add(sa.Secrets()...)
		}
		if sa.LooseMode && env.Logger != nil {
			env.Logger.Warn().Str("path", cfg.KeyPath).Msg("the service account key file can be read by other users; chmod 600 it")
		}
		return Credentials{TokenSource: sa.TokenSource, Key: sa}, nil
	}
	u, err := NewUserSource(UserConfig{Settings: cfg.Settings, File: TokenFile{Path: cfg.TokenPath},
		HTTPClient: cfg.HTTPClient, Command: cfg.Command, Logger: env.Logger, Redactor: env.Redactor})
	if err != nil {
		return Credentials{}, err
	}
	if env.Logger != nil {
		if u.LooseMode {
			env.Logger.Warn().Str("path", cfg.TokenPath).Msg("the stored token can be read by other users; chmod 600 it")
		}
		if u.IgnoredEnv {
			env.Logger.Info().Msg("a refresh token is set in the environment but the sign-in stored by `" + cfg.Command + "` is used")
		}
	}
	return Credentials{TokenSource: u, User: u}, nil
}
