package googleauth

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/urlrule"
)

// Google's OAuth 2.0 endpoints.
const (
	DefaultAuthURL     = "https://accounts.google.com/o/oauth2/v2/auth"
	DefaultTokenURL    = "https://oauth2.googleapis.com/token"
	DefaultUserInfoURL = "https://openidconnect.googleapis.com/v1/userinfo"
)

// Settings are a server's OAuth client configuration: the OAuth client
// (id and secret, from the Google Cloud console), an optional refresh token
// given through the environment, and the endpoints.
type Settings struct {
	ClientID     string
	ClientSecret string
	RefreshToken string
	AuthURL      string
	TokenURL     string

	// The secrets as read from each variable; the server-specific one wins.
	secrets, refresh [2]string
	prefix           string
}

// Register adds the flags to f. prefix names the server's own variables
// (GMAIL gives GMAIL_CLIENT_ID, GMAIL_CLIENT_SECRET, GMAIL_REFRESH_TOKEN),
// which win over the GOOGLE_* ones every Google server reads. withAuthURL
// adds --oauth-auth-url, which only the auth command needs.
func (s *Settings) Register(f *cli.Flags, prefix string, withAuthURL bool) {
	s.prefix = prefix
	f.String(&s.ClientID, "client-id", []string{prefix + "_CLIENT_ID", "GOOGLE_CLIENT_ID"}, "",
		"OAuth client id (a Desktop app client from the Google Cloud console)")
	f.Secret(&s.secrets[0], prefix+"_CLIENT_SECRET", "OAuth client secret")
	f.Secret(&s.secrets[1], "GOOGLE_CLIENT_SECRET", "OAuth client secret (when "+prefix+"_CLIENT_SECRET is unset)")
	f.Secret(&s.refresh[0], prefix+"_REFRESH_TOKEN", "OAuth refresh token, instead of the token stored by the auth command")
	f.Secret(&s.refresh[1], "GOOGLE_REFRESH_TOKEN", "OAuth refresh token (when "+prefix+"_REFRESH_TOKEN is unset)")
	if withAuthURL {
		f.String(&s.AuthURL, "oauth-auth-url", []string{"GOOGLE_OAUTH_AUTH_URL"}, DefaultAuthURL, "Google's OAuth authorization endpoint")
		f.Check("oauth-auth-url", func() error { return checkURL(s.AuthURL) })
	}
	f.String(&s.TokenURL, "oauth-token-url", []string{"GOOGLE_OAUTH_TOKEN_URL"}, DefaultTokenURL, "Google's OAuth token endpoint")
	f.Check("oauth-token-url", func() error {
		s.ClientSecret = firstSet(s.secrets[:]...)
		s.RefreshToken = strings.TrimSpace(firstSet(s.refresh[:]...))
		s.ClientID = strings.TrimSpace(s.ClientID)
		return checkURL(s.TokenURL)
	})
}

// Configured reports whether any user-credential setting is present.
func (s *Settings) Configured() bool {
	return s.ClientID != "" || s.ClientSecret != "" || s.RefreshToken != ""
}

// Redact hands the secrets to r so that no log line shows them.
func (s *Settings) Redact(r *logging.Redactor) {
	if r == nil {
		return
	}
	for _, v := range []string{s.ClientSecret, s.RefreshToken} {
		if v != "" {
			r.Add(v)
		}
	}
}

// CheckClient says what is missing for user credentials.
func (s *Settings) CheckClient() error {
	var missing []string
	if s.ClientID == "" {
		missing = append(missing, s.prefix+"_CLIENT_ID or GOOGLE_CLIENT_ID")
	}
	if s.ClientSecret == "" {
		missing = append(missing, s.prefix+"_CLIENT_SECRET or GOOGLE_CLIENT_SECRET")
	}
	if len(missing) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("signing in with a Google account needs the OAuth client: set %s", strings.Join(missing, " and "))}
	}
	return nil
}

func firstSet(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// checkURL: the OAuth endpoints receive the client secret and tokens, so
// they take the fleet's rule for credentialed URLs.
func checkURL(raw string) error {
	if err := urlrule.Check(raw); err != nil {
		if errors.Is(err, urlrule.ErrInsecure) {
			return fmt.Errorf("want https (plain http only to a loopback address), got %q", raw)
		}
		return errors.New("want an http(s) URL such as " + DefaultTokenURL)
	}
	return nil
}
