package googleauth

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
	// Email is the service account's own address.
	Email string
	// ClientID is its numeric OAuth client id, the one a Workspace admin
	// grants domain-wide delegation to.
	ClientID string
	// Subject is the user it acts for (domain-wide delegation), or "".
	Subject string
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
// source for scopes, acting for subject when it is not empty (domain-wide
// delegation: the token is the user's, not the service account's). Token
// requests go through hc and may be repeated: asking twice is harmless. The
// key's private key never appears in an error.
func LoadServiceAccount(path string, hc *http.Client, subject string, scopes ...string) (*ServiceAccount, error) {
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
		ClientID     string `json:"client_id"`
		PrivateKey   string `json:"private_key"`
		PrivateKeyID string `json:"private_key_id"`
	}
	if err := json.Unmarshal(b, &key); err != nil {
		return nil, fmt.Errorf("service account key %s: not a JSON key file", path)
	}
	switch {
	case key.Type == "authorized_user":
		return nil, fmt.Errorf("service account key %s holds OAuth user credentials, not a service account key", path)
	case key.Type != "service_account":
		return nil, fmt.Errorf("service account key %s: type is %q, want \"service_account\"", path, key.Type)
	case key.ClientEmail == "" || key.PrivateKey == "":
		return nil, fmt.Errorf("service account key %s lacks client_email or private_key", path)
	}
	conf, err := google.JWTConfigFromJSON(b, scopes...)
	if err != nil || !usableKey(key.PrivateKey) {
		return nil, fmt.Errorf("service account key %s: the private key cannot be used", path)
	}
	conf.Subject = subject
	ctx := context.WithValue(upstream.MarkIdempotent(context.Background()), oauth2.HTTPClient, hc)
	sa := &ServiceAccount{Email: key.ClientEmail, ClientID: key.ClientID, Subject: subject,
		TokenSource: conf.TokenSource(ctx), LooseMode: info.Mode().Perm()&0o077 != 0}
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
