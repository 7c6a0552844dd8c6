// Package credentials turns the server's Google configuration into the
// oauth2.TokenSource whose access tokens the Sheets client sends: a service
// account's JSON key file (the JWT bearer grant, through
// golang.org/x/oauth2/google), or a person's Google sign-in — the token
// `sheets-mcp auth` stored, or a refresh token from the environment —
// refreshed and persisted by the fleet's googleauth package.
//
// The key file's private key and the user's tokens are secrets: they are
// never put in an error or a log line, and are handed to the log redactor.
package credentials

import (
	"net/http"

	"github.com/mcp-fleet/mcp-fleet/shared/googleauth"
)

// ServiceAccount is a loaded service account key (googleauth's).
type ServiceAccount = googleauth.ServiceAccount

// LoadServiceAccount reads the JSON key file at path and returns a token
// source for scopes; the spreadsheet must be shared with its Email. Token
// requests go through hc.
func LoadServiceAccount(path string, hc *http.Client, scopes ...string) (*ServiceAccount, error) {
	return googleauth.LoadServiceAccount(path, hc, "", scopes...)
}
