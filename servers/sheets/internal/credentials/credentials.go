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
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/mcp-fleet/mcp-fleet/shared/upstream"
)

// maxKeyFile bounds the key file read: a service account key is about 2 KB.
const maxKeyFile = 64 << 10

// ServiceAccount is a loaded service account key.
type ServiceAccount struct {
	// Email is the account's address; the spreadsheet must be shared with
	// it.
	Email string
	// TokenSource gives access tokens for the scopes asked, refreshed
	// before they expire.
	TokenSource oauth2.TokenSource
	// LooseMode is set when the key file can be read by other users.
	LooseMode bool
	secrets   []string
}

// Secrets are the values of the key file that logs must mask.
func (s *ServiceAccount) Secrets() []string { return s.secrets }

// LoadServiceAccount reads the JSON key file at path and returns a token
// source for scopes. Token requests go through hc (the caller's upstream
// client for Google's token endpoint) and may be repeated: asking for a
// token twice is harmless.
func LoadServiceAccount(path string, hc *http.Client, scopes ...string) (*ServiceAccount, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("service account key %s: no such file", path)
		}
		return nil, fmt.Errorf("service account key %s: cannot open it (%v)", path, errors.Unwrap(err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return nil, fmt.Errorf("service account key %s: not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("service account key %s: cannot read it", path)
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("service account key %s: over %d bytes, not a key file", path, maxKeyFile)
	}
	var key struct {
		Type         string `json:"type"`
		ClientEmail  string `json:"client_email"`
		PrivateKey   string `json:"private_key"`
		PrivateKeyID string `json:"private_key_id"`
		TokenURI     string `json:"token_uri"`
	}
	if err := json.Unmarshal(b, &key); err != nil {
		// The JSON error could quote part of the file: say where, not what.
		return nil, fmt.Errorf("service account key %s: not a JSON key file", path)
	}
	switch {
	case key.Type == "authorized_user":
		return nil, fmt.Errorf("service account key %s holds OAuth user credentials, not a service account key; create a key for a service account (docs/sheets.md)", path)
	case key.Type != "service_account":
		return nil, fmt.Errorf("service account key %s: type is %q, want \"service_account\"", path, key.Type)
	case key.ClientEmail == "" || key.PrivateKey == "":
		return nil, fmt.Errorf("service account key %s lacks client_email or private_key", path)
	}
	conf, err := google.JWTConfigFromJSON(b, scopes...)
	if err != nil || !usableKey(key.PrivateKey) {
		return nil, fmt.Errorf("service account key %s: the private key cannot be used", path)
	}
	ctx := context.WithValue(upstream.MarkIdempotent(context.Background()), oauth2.HTTPClient, hc)
	sa := &ServiceAccount{Email: key.ClientEmail, TokenSource: conf.TokenSource(ctx), LooseMode: info.Mode().Perm()&0o077 != 0}
	for _, s := range []string{key.PrivateKey, key.PrivateKeyID} {
		if s = strings.TrimSpace(s); s != "" {
			sa.secrets = append(sa.secrets, s)
		}
	}
	return sa, nil
}

// usableKey reports whether the PEM private key parses, so that a broken
// key is a start-up error rather than a failure of the first call.
func usableKey(pemKey string) bool {
	block, _ := pem.Decode([]byte(pemKey))
	if block == nil {
		return false
	}
	if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		return true
	}
	_, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	return err == nil
}
