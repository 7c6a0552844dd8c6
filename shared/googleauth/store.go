package googleauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcp-fleet/mcp-fleet/shared/atomicfile"
)

// TokenFileName is the file, in a server's data directory, that holds the
// token the auth command obtained.
const TokenFileName = "oauth-token.json"

// maxTokenFile bounds what is read of a token file: a token is about 2 KB.
const maxTokenFile = 64 << 10

// Token origins.
const (
	// OriginAuth: obtained by the auth command.
	OriginAuth = "auth"
	// OriginEnv: refreshed from a refresh token given in the environment.
	OriginEnv = "env"
)

// Stored is a token file's content.
type Stored struct {
	AccessToken  string    `json:"access_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// Scopes are the scopes granted.
	Scopes []string `json:"scopes,omitempty"`
	// Account is the Google account's address, when it was learnt.
	Account string `json:"account,omitempty"`
	// ClientID is the OAuth client the grant belongs to: a refresh token
	// works only with its own client.
	ClientID string `json:"client_id"`
	// Origin is OriginAuth or OriginEnv; EnvSeed, for OriginEnv, is the
	// SHA-256 of the environment's refresh token the file started from, so
	// a changed variable is noticed.
	Origin  string    `json:"origin"`
	EnvSeed string    `json:"env_seed,omitempty"`
	SavedAt time.Time `json:"saved_at"`
}

// OAuth2 returns the stored token as an oauth2.Token.
func (s *Stored) OAuth2() *oauth2.Token {
	return &oauth2.Token{AccessToken: s.AccessToken, TokenType: s.TokenType, RefreshToken: s.RefreshToken, Expiry: s.Expiry}
}

// Secrets are the values logs must mask.
func (s *Stored) Secrets() []string {
	var out []string
	for _, v := range []string{s.AccessToken, s.RefreshToken} {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

func seedOf(refreshToken string) string {
	sum := sha256.Sum256([]byte(refreshToken))
	return hex.EncodeToString(sum[:])
}

// TokenFile is a token stored on disk with mode 0600.
type TokenFile struct {
	Path string
}

// ErrNoToken is returned by Load when no token is stored.
var ErrNoToken = errors.New("no stored token")

// Load reads the token. A missing file is ErrNoToken. loose reports a file
// that other users may read (the caller warns; Save always writes 0600).
func (f TokenFile) Load() (st *Stored, loose bool, err error) {
	file, err := os.Open(f.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, ErrNoToken
		}
		return nil, false, fmt.Errorf("token file %s: cannot open it (%v)", f.Path, errors.Unwrap(err))
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return nil, false, fmt.Errorf("token file %s: not a regular file", f.Path)
	}
	b, err := io.ReadAll(io.LimitReader(file, maxTokenFile+1))
	if err != nil || len(b) > maxTokenFile {
		return nil, false, fmt.Errorf("token file %s: cannot read it, or it is too large to be a token", f.Path)
	}
	var s Stored
	if err := json.Unmarshal(b, &s); err != nil {
		// The JSON error could quote part of the file: say where, not what.
		return nil, false, fmt.Errorf("token file %s: not a token file (delete it and run the auth command again)", f.Path)
	}
	if s.RefreshToken == "" {
		return nil, false, fmt.Errorf("token file %s holds no refresh token (run the auth command again)", f.Path)
	}
	return &s, info.Mode().Perm()&0o077 != 0, nil
}

// Save writes the token atomically: a temporary file in the same
// directory, mode 0600, synced, then renamed over the old one, so a crash
// leaves the old token or the new one, never half of either.
func (f TokenFile) Save(s *Stored) error {
	dir := filepath.Dir(f.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("token file: creating %s: %w", dir, err)
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	if err := atomicfile.Write(f.Path, append(b, '\n')); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	return nil
}
