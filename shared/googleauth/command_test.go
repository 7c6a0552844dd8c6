package googleauth_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth/googleauthtest"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"golang.org/x/oauth2"
)

func authSpec(readOnly *bool) kit.Spec {
	return kit.Spec{Info: kit.Info{Name: "mail", Version: "1"}, Summary: "test",
		Setup: func(ctx context.Context, env *kit.Env) ([]kit.Tool, func(), error) { return nil, nil, nil },
		Commands: []kit.Command{googleauth.Command(googleauth.CommandConfig{Server: "mail", Prefix: "GMAIL",
			Flags: func(f *cli.Flags) {
				f.Bool(readOnly, "read-only", []string{"MCP_READ_ONLY"}, false, "read-only scopes")
			},
			Scopes: func() ([]string, error) {
				if *readOnly {
					return []string{scopeRead}, nil
				}
				return []string{scopeRead, scopeSend}, nil
			},
			Identify: func(ctx context.Context, hc *http.Client, ts oauth2.TokenSource) (string, error) {
				return "jane@example.com", nil
			}})}}
}

// TestAuthCommand runs `mail-mcp auth` through kit.Main against the fake:
// the URL printed, the browser's answer, the token stored 0600 in the data
// directory, and then used by a UserSource.
func TestAuthCommand(t *testing.T) {
	f := googleauthtest.New(t)
	data := t.TempDir()
	env := map[string]string{"MCP_DATA_DIR": data, "GMAIL_CLIENT_ID": f.ClientID, "GMAIL_CLIENT_SECRET": f.ClientSecret,
		"GOOGLE_OAUTH_AUTH_URL": f.AuthURL, "GOOGLE_OAUTH_TOKEN_URL": f.TokenURL, "MCP_READ_ONLY": "true", "GOOGLE_REFRESH_TOKEN": "old-env-token"}
	pr, pw := io.Pipe()
	var out bytes.Buffer
	errs := f.BrowsePrinted(io.TeeReader(pr, &out), nil)
	var ro bool
	var stderr bytes.Buffer
	code := kit.Main(authSpec(&ro), []string{"auth"}, func(k string) string { return env[k] }, strings.NewReader(""), pw, &stderr)
	pw.Close()
	if err := <-errs; err != nil || code != 0 {
		t.Fatalf("code %d, browse %v\n%s\n%s", code, err, out.String(), stderr.String())
	}
	if q := f.LastAuthRequest(); q.Get("scope") != scopeRead {
		t.Errorf("read-only asked for %q", q.Get("scope"))
	}
	path := filepath.Join(data, "mail", googleauth.TokenFileName)
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", info, err)
	}
	st, _, err := googleauth.TokenFile{Path: path}.Load()
	if err != nil || st.Origin != googleauth.OriginAuth || st.Account != "jane@example.com" || st.ClientID != f.ClientID || !f.RefreshTokenLive(st.RefreshToken) {
		t.Fatalf("stored %+v %v", st, err)
	}
	for _, want := range []string{"Signed in as jane@example.com", path, "stored token is used instead"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String()+stderr.String(), st.RefreshToken) || strings.Contains(out.String(), f.ClientSecret) {
		t.Error("a secret was printed")
	}
}

func TestAuthCommandErrors(t *testing.T) {
	var ro bool
	var out, stderr bytes.Buffer
	code := kit.Main(authSpec(&ro), []string{"auth"}, func(k string) string { return map[string]string{"MCP_DATA_DIR": t.TempDir()}[k] },
		strings.NewReader(""), &out, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "GMAIL_CLIENT_ID or GOOGLE_CLIENT_ID") {
		t.Errorf("no client: %d %s", code, stderr.String())
	}
	stderr.Reset()
	out.Reset()
	if code := kit.Main(authSpec(&ro), []string{"auth", "--help"}, func(string) string { return "" }, strings.NewReader(""), &out, &stderr); code != 0 ||
		!strings.Contains(out.String(), "GOOGLE_CLIENT_SECRET") || !strings.Contains(out.String(), "--open-browser") {
		t.Errorf("help: %d %s", code, out.String())
	}
}
