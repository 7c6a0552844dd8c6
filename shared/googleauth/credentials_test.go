package googleauth_test

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth/googleauthtest"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/rs/zerolog"
)

func credEnv() (*kit.Env, *bytes.Buffer) {
	var logs bytes.Buffer
	l := zerolog.New(&logs)
	return &kit.Env{Logger: &l, Redactor: logging.NewRedactor()}, &logs
}

func TestSelectCredentialsKey(t *testing.T) {
	f := googleauthtest.New(t)
	path := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(path, f.ServiceAccountKey(t, "reader@proj.iam.gserviceaccount.com"), 0o644); err != nil {
		t.Fatal(err)
	}
	env, logs := credEnv()
	s := settingsFor(t, f, nil)
	c, err := googleauth.SelectCredentials(env, googleauth.CredentialsConfig{KeyPath: path, KeySetting: "--key or KEY_PATH",
		Scopes: []string{scopeRead}, Settings: s, Command: "x auth", HTTPClient: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	if c.Key == nil || c.User != nil || c.Key.Email != "reader@proj.iam.gserviceaccount.com" || c.TokenSource != c.Key.TokenSource {
		t.Fatalf("credentials %+v", c)
	}
	if tok, err := c.TokenSource.Token(); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %v", err)
	}
	if !strings.Contains(logs.String(), "chmod 600") {
		t.Errorf("a key other users can read was not warned about: %s", logs.String())
	}
	// The key's and the client's secrets are masked in logs.
	for _, secret := range append(c.Key.Secrets(), f.ClientSecret) {
		if got := env.Redactor.String("x " + secret + " y"); strings.Contains(got, secret) {
			t.Errorf("a secret is not masked: %q", got)
		}
	}

	_ = os.WriteFile(path, []byte(`{"type":"authorized_user"}`), 0o600)
	_, err = googleauth.SelectCredentials(env, googleauth.CredentialsConfig{KeyPath: path, KeySetting: "--key or KEY_PATH", Settings: s})
	var ue *cli.UsageError
	if !errors.As(err, &ue) || !strings.Contains(ue.Msg, "(--key or KEY_PATH)") {
		t.Errorf("a bad key: %v, want a usage error naming the setting", err)
	}
}

func TestSelectCredentialsSignIn(t *testing.T) {
	f := googleauthtest.New(t)
	file := googleauth.TokenFile{Path: filepath.Join(t.TempDir(), googleauth.TokenFileName)}
	if err := file.Save(&googleauth.Stored{RefreshToken: f.IssueRefreshToken(scopeRead), ClientID: f.ClientID, Origin: googleauth.OriginAuth}); err != nil {
		t.Fatal(err)
	}
	env, logs := credEnv()
	s := settingsFor(t, f, map[string]string{"GMAIL_REFRESH_TOKEN": f.IssueRefreshToken(scopeSend)})
	c, err := googleauth.SelectCredentials(env, googleauth.CredentialsConfig{Settings: s, TokenPath: file.Path, Command: "x auth", HTTPClient: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	if c.User == nil || c.Key != nil || c.TokenSource != c.User {
		t.Fatalf("credentials %+v", c)
	}
	if _, err := c.TokenSource.Token(); err != nil || c.User.Scopes()[0] != scopeRead {
		t.Fatalf("the stored sign-in was not used: %v %v", err, c.User.Scopes())
	}
	if !strings.Contains(logs.String(), "sign-in stored by `x auth` is used") {
		t.Errorf("the passed-over refresh token was not logged: %s", logs.String())
	}

	// Neither a stored sign-in nor a refresh token: the error says what to run.
	_, err = googleauth.SelectCredentials(env, googleauth.CredentialsConfig{Settings: settingsFor(t, f, nil),
		TokenPath: filepath.Join(t.TempDir(), "none.json"), Command: "x auth"})
	if err == nil || !strings.Contains(err.Error(), "x auth") {
		t.Errorf("no credentials: %v", err)
	}
}
