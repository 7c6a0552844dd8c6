package credentials

import (
	"net/http"

	"github.com/rs/zerolog"
	"golang.org/x/oauth2"

	"github.com/mcp-fleet/mcp-fleet/shared/googleauth"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
)

// AuthCommand is what a person runs to sign in.
const AuthCommand = "sheets-mcp auth"

// User is a person's Google sign-in.
type User struct {
	// Account is the signed-in address, when known ("" otherwise).
	Account     string
	TokenSource oauth2.TokenSource
	// LooseMode: the token file could be read by other users.
	LooseMode bool
	// IgnoredEnv: a refresh token in the environment was passed over for
	// the token `sheets-mcp auth` stored.
	IgnoredEnv bool
}

// LoadUser returns the token source of the sign-in stored at tokenPath (or
// of the refresh token in settings), refreshing through hc and persisting
// every refreshed token there. Without either, the error says to run
// `sheets-mcp auth`.
func LoadUser(settings *googleauth.Settings, tokenPath string, hc *http.Client, log *zerolog.Logger, red *logging.Redactor) (*User, error) {
	settings.Redact(red)
	src, err := googleauth.NewUserSource(googleauth.UserConfig{Settings: settings, File: googleauth.TokenFile{Path: tokenPath},
		HTTPClient: hc, Command: AuthCommand, Logger: log, Redactor: red})
	if err != nil {
		return nil, err
	}
	return &User{Account: src.Account(), TokenSource: src, LooseMode: src.LooseMode, IgnoredEnv: src.IgnoredEnv}, nil
}
