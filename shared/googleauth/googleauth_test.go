package googleauth_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth/googleauthtest"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"golang.org/x/oauth2"
)

const scopeRead = "https://www.googleapis.com/auth/gmail.readonly"
const scopeSend = "https://www.googleapis.com/auth/gmail.send"

func flow(f *googleauthtest.Server, out io.Writer, scopes ...string) googleauth.FlowConfig {
	return googleauth.FlowConfig{ClientID: f.ClientID, ClientSecret: f.ClientSecret, AuthURL: f.AuthURL, TokenURL: f.TokenURL,
		Scopes: scopes, Out: out, Timeout: time.Minute, Program: "test-mcp"}
}

// authorizeInBrowser runs the flow for scopes with a browser that opens the
// printed link, as the user would, and answers as f is set to; what the
// browser met is left unchecked.
func authorizeInBrowser(f *googleauthtest.Server, scopes ...string) (*googleauth.Result, error) {
	pr, pw := io.Pipe()
	errs := f.BrowsePrinted(pr, nil)
	res, err := googleauth.Authorize(context.Background(), flow(f, pw, scopes...))
	pw.Close()
	<-errs
	return res, err
}

func TestAuthorize(t *testing.T) {
	f := googleauthtest.New(t)
	pr, pw := io.Pipe()
	errs := f.BrowsePrinted(pr, nil)
	cfg := flow(f, pw, scopeRead, scopeSend)
	var identified string
	cfg.Identify = func(ctx context.Context, ts oauth2.TokenSource) (string, error) {
		tok, err := ts.Token()
		identified = tok.AccessToken
		return "jane@example.com", err
	}
	res, err := googleauth.Authorize(context.Background(), cfg)
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if res.Token.RefreshToken == "" || !f.RefreshTokenLive(res.Token.RefreshToken) || res.Email != "jane@example.com" ||
		identified != res.Token.AccessToken || len(res.Missing) != 0 || len(res.Scopes) != 2 {
		t.Fatalf("result %+v", res)
	}
	q := f.LastAuthRequest()
	for k, want := range map[string]string{"access_type": "offline", "prompt": "consent", "code_challenge_method": "S256",
		"response_type": "code", "scope": scopeRead + " " + scopeSend} {
		if q.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, q.Get(k), want)
		}
	}
	if len(q.Get("state")) < 32 || !strings.HasPrefix(q.Get("redirect_uri"), "http://127.0.0.1:") {
		t.Errorf("state %q redirect %q", q.Get("state"), q.Get("redirect_uri"))
	}
	if ex, _, _ := f.Counts(); ex != 1 {
		t.Errorf("%d exchanges", ex)
	}
}

func TestAuthorizeRefusals(t *testing.T) {
	t.Run("denied", func(t *testing.T) {
		f := googleauthtest.New(t)
		f.SetDeny(true)
		_, err := authorizeInBrowser(f, scopeRead)
		if err == nil || !strings.Contains(err.Error(), "access_denied") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("a forged answer is refused, the real one accepted", func(t *testing.T) {
		f := googleauthtest.New(t)
		pr, pw := io.Pipe()
		var forged int
		errs := f.BrowsePrinted(pr, func(authURL string) {
			q := strings.SplitN(authURL, "redirect_uri=", 2)[1]
			redirect, _ := urlUnescape(strings.SplitN(q, "&", 2)[0])
			resp, err := http.Get(redirect + "?code=attacker&state=wrong")
			if err == nil {
				forged = resp.StatusCode
				resp.Body.Close()
			}
			resp, err = http.Get(redirect + "favicon.ico")
			if err == nil {
				resp.Body.Close()
			}
		})
		res, err := googleauth.Authorize(context.Background(), flow(f, pw, scopeRead))
		pw.Close()
		if err != nil || <-errs != nil || forged != http.StatusBadRequest || res.Token.RefreshToken == "" {
			t.Fatalf("res %+v err %v forged %d", res, err, forged)
		}
	})
	t.Run("unticked scope", func(t *testing.T) {
		f := googleauthtest.New(t)
		f.Untick(scopeSend)
		res, err := authorizeInBrowser(f, scopeRead, scopeSend)
		if err != nil || len(res.Missing) != 1 || res.Missing[0] != scopeSend {
			t.Fatalf("res %+v err %v", res, err)
		}
	})
	t.Run("no answer in time", func(t *testing.T) {
		f := googleauthtest.New(t)
		cfg := flow(f, io.Discard, scopeRead)
		cfg.Timeout = 20 * time.Millisecond
		if _, err := googleauth.Authorize(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "no answer") {
			t.Fatalf("error %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := googleauth.Authorize(ctx, flow(f, io.Discard, scopeRead)); err == nil || !strings.Contains(err.Error(), "stopped") {
			t.Fatalf("cancelled: %v", err)
		}
	})
	t.Run("code exchange refused", func(t *testing.T) {
		f := googleauthtest.New(t)
		f.FailNextToken(400, "invalid_grant")
		_, err := authorizeInBrowser(f, scopeRead)
		if err == nil || !strings.Contains(err.Error(), "invalid_grant") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("configuration", func(t *testing.T) {
		if _, err := googleauth.Authorize(context.Background(), googleauth.FlowConfig{}); err == nil {
			t.Error("no client accepted")
		}
		if _, err := googleauth.Authorize(context.Background(), googleauth.FlowConfig{ClientID: "a", ClientSecret: "b"}); err == nil {
			t.Error("no scopes accepted")
		}
	})
	t.Run("browser opener", func(t *testing.T) {
		f := googleauthtest.New(t)
		cfg := flow(f, io.Discard, scopeRead)
		cfg.OpenBrowser = true
		opened := make(chan string, 1)
		cfg.Browser = func(u string) error { opened <- u; return nil }
		go func() {
			u := <-opened
			if resp, err := f.Browse(u); err == nil {
				resp.Body.Close()
			}
		}()
		if res, err := googleauth.Authorize(context.Background(), cfg); err != nil || res.Token == nil {
			t.Fatalf("%v %v", res, err)
		}
	})
}

func urlUnescape(s string) (string, error) {
	r := strings.NewReplacer("%3A", ":", "%2F", "/")
	return r.Replace(s), nil
}

func settingsFor(t *testing.T, f *googleauthtest.Server, env map[string]string) *googleauth.Settings {
	t.Helper()
	var s googleauth.Settings
	fl := cli.NewFlags("test")
	s.Register(fl, "GMAIL", false)
	all := map[string]string{"GOOGLE_CLIENT_ID": f.ClientID, "GOOGLE_CLIENT_SECRET": f.ClientSecret, "GOOGLE_OAUTH_TOKEN_URL": f.TokenURL}
	for k, v := range env {
		all[k] = v
	}
	if err := fl.Parse(nil, func(k string) string { return all[k] }); err != nil {
		t.Fatal(err)
	}
	return &s
}

func TestUserSourceRefreshesAndPersists(t *testing.T) {
	f := googleauthtest.New(t)
	f.SetAccessTTL(time.Second) // under oauth2's 10 s margin: every Token() refreshes
	f.SetRotate(true)
	rt := f.IssueRefreshToken(scopeRead)
	path := filepath.Join(t.TempDir(), "data", googleauth.TokenFileName)
	file := googleauth.TokenFile{Path: path}
	if err := file.Save(&googleauth.Stored{RefreshToken: rt, ClientID: f.ClientID, Origin: googleauth.OriginAuth, Account: "jane@example.com"}); err != nil {
		t.Fatal(err)
	}
	red := logging.NewRedactor()
	src, err := googleauth.NewUserSource(googleauth.UserConfig{Settings: settingsFor(t, f, nil), File: file, Command: "test-mcp auth", Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	if src.Account() != "jane@example.com" || src.Origin() != googleauth.OriginAuth {
		t.Errorf("account %q origin %q", src.Account(), src.Origin())
	}
	tok, err := src.Token()
	if err != nil {
		t.Fatal(err)
	}
	st, loose, err := file.Load()
	if err != nil || loose {
		t.Fatal(err, loose)
	}
	if f.RefreshTokenLive(rt) || st.RefreshToken == rt || !f.RefreshTokenLive(st.RefreshToken) || st.AccessToken != tok.AccessToken ||
		len(st.Scopes) != 1 || src.Scopes()[0] != scopeRead {
		t.Fatalf("the rotated token was not persisted: %+v", st)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", info.Mode())
	}
	if got := red.String(st.RefreshToken); strings.Contains(got, st.RefreshToken) {
		t.Errorf("the redactor does not know the new refresh token")
	}
	// A restart reads the rotated token and carries on without a sign-in.
	again, err := googleauth.NewUserSource(googleauth.UserConfig{Settings: settingsFor(t, f, nil), File: file, Command: "test-mcp auth"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.Token(); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
	// Concurrent users share the source safely.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := again.Token(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// Access revoked in the Google account: a clear instruction.
	f.RevokeAll()
	_, err = again.Token()
	var me *mcperr.Error
	if !errors.As(err, &me) || me.Code != mcperr.Authentication || !strings.Contains(me.Message, "run `test-mcp auth` again") {
		t.Fatalf("revoked: %v", err)
	}
}

func TestUserSourceFromEnvironment(t *testing.T) {
	f := googleauthtest.New(t)
	f.SetAccessTTL(time.Second)
	f.SetRotate(true)
	rt := f.IssueRefreshToken(scopeRead)
	file := googleauth.TokenFile{Path: filepath.Join(t.TempDir(), googleauth.TokenFileName)}
	src, err := googleauth.NewUserSource(googleauth.UserConfig{Settings: settingsFor(t, f, map[string]string{"GMAIL_REFRESH_TOKEN": rt}), File: file, Command: "x auth"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Token(); err != nil {
		t.Fatal(err)
	}
	st, _, err := file.Load()
	if err != nil || st.Origin != googleauth.OriginEnv || st.RefreshToken == rt {
		t.Fatalf("stored %+v %v", st, err)
	}
	// Same variable, next start: the persisted (rotated) token is used —
	// the variable's own token is dead by now.
	src, err = googleauth.NewUserSource(googleauth.UserConfig{Settings: settingsFor(t, f, map[string]string{"GOOGLE_REFRESH_TOKEN": rt}), File: file, Command: "x auth"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Token(); err != nil {
		t.Fatalf("restart with the same variable: %v", err)
	}
	// A new token in the variable wins over the file it no longer matches.
	rt2 := f.IssueRefreshToken(scopeSend)
	src, err = googleauth.NewUserSource(googleauth.UserConfig{Settings: settingsFor(t, f, map[string]string{"GMAIL_REFRESH_TOKEN": rt2}), File: file, Command: "x auth"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Token(); err != nil || src.Scopes()[0] != scopeSend {
		t.Fatalf("new variable: %v %v", err, src.Scopes())
	}
	// A token stored by the auth command wins over the variable.
	if err := file.Save(&googleauth.Stored{RefreshToken: f.IssueRefreshToken(scopeRead), ClientID: f.ClientID, Origin: googleauth.OriginAuth}); err != nil {
		t.Fatal(err)
	}
	src, err = googleauth.NewUserSource(googleauth.UserConfig{Settings: settingsFor(t, f, map[string]string{"GMAIL_REFRESH_TOKEN": rt2}), File: file, Command: "x auth"})
	if err != nil || !src.IgnoredEnv {
		t.Fatalf("auth token over env: %v %v", src, err)
	}
}

func TestUserSourceErrors(t *testing.T) {
	f := googleauthtest.New(t)
	dir := t.TempDir()
	file := googleauth.TokenFile{Path: filepath.Join(dir, googleauth.TokenFileName)}
	_, err := googleauth.NewUserSource(googleauth.UserConfig{Settings: settingsFor(t, f, nil), File: file, Command: "gmail-mcp auth"})
	if err == nil || !strings.Contains(err.Error(), "run `gmail-mcp auth`") || !strings.Contains(err.Error(), "GMAIL_REFRESH_TOKEN") {
		t.Errorf("no token: %v", err)
	}
	_, err = googleauth.NewUserSource(googleauth.UserConfig{Settings: settingsFor(t, f, map[string]string{"GOOGLE_CLIENT_ID": "", "GOOGLE_CLIENT_SECRET": ""}), File: file})
	if err == nil || !strings.Contains(err.Error(), "GMAIL_CLIENT_ID or GOOGLE_CLIENT_ID") || !strings.Contains(err.Error(), "CLIENT_SECRET") {
		t.Errorf("no client: %v", err)
	}
	if _, err := googleauth.NewUserSource(googleauth.UserConfig{}); err == nil {
		t.Error("no settings accepted")
	}
	_ = file.Save(&googleauth.Stored{RefreshToken: "r", ClientID: "other-client", Origin: googleauth.OriginAuth})
	_, err = googleauth.NewUserSource(googleauth.UserConfig{Settings: settingsFor(t, f, nil), File: file, Command: "gmail-mcp auth"})
	if err == nil || !strings.Contains(err.Error(), "other-client") {
		t.Errorf("client mismatch: %v", err)
	}
	// Token endpoint failures.
	rt := f.IssueRefreshToken(scopeRead)
	_ = file.Save(&googleauth.Stored{RefreshToken: rt, ClientID: f.ClientID, Origin: googleauth.OriginAuth})
	for _, tc := range []struct {
		status int
		code   string
		want   mcperr.Code
		text   string
	}{
		{500, "internal_failure", mcperr.Upstream, "refreshing"},
		{401, "invalid_client", mcperr.Authentication, "GMAIL_CLIENT_SECRET"},
		{400, "invalid_request", mcperr.Authentication, "run `gmail-mcp auth` again if it persists"},
		{400, "invalid_grant", mcperr.Authentication, "invalid_grant"},
	} {
		src, err := googleauth.NewUserSource(googleauth.UserConfig{Settings: settingsFor(t, f, nil), File: file, Command: "gmail-mcp auth"})
		if err != nil {
			t.Fatal(err)
		}
		f.FailNextToken(tc.status, tc.code)
		_, err = src.Token()
		var me *mcperr.Error
		if !errors.As(err, &me) || me.Code != tc.want || !strings.Contains(me.Message, tc.text) || strings.Contains(me.Message, rt) {
			t.Errorf("%d %s: %v", tc.status, tc.code, err)
		}
		// The hook passes it on unchanged.
		req, _ := http.NewRequest("GET", "http://x", nil)
		f.FailNextToken(tc.status, tc.code)
		src, _ = googleauth.NewUserSource(googleauth.UserConfig{Settings: settingsFor(t, f, nil), File: file, Command: "gmail-mcp auth"})
		if herr := googleauth.AuthHook(src, "check it")(req); !errors.As(herr, &me) || me.Code != tc.want {
			t.Errorf("hook: %v", herr)
		}
	}
	// An unreachable token endpoint.
	s := settingsFor(t, f, map[string]string{"GOOGLE_OAUTH_TOKEN_URL": "http://127.0.0.1:1/token"})
	src, _ := googleauth.NewUserSource(googleauth.UserConfig{Settings: s, File: file, Command: "gmail-mcp auth"})
	if _, err := src.Token(); err == nil {
		t.Error("unreachable endpoint: no error")
	}
}

func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	file := googleauth.TokenFile{Path: filepath.Join(dir, "sub", "t.json")}
	if _, _, err := file.Load(); !errors.Is(err, googleauth.ErrNoToken) {
		t.Fatal(err)
	}
	in := &googleauth.Stored{AccessToken: "a", RefreshToken: "r", Scopes: []string{"s"}, ClientID: "c", Origin: "auth", Expiry: time.Now().Add(time.Hour).Round(0)}
	if err := file.Save(in); err != nil {
		t.Fatal(err)
	}
	out, loose, err := file.Load()
	if err != nil || loose || out.RefreshToken != "r" || out.OAuth2().AccessToken != "a" || len(out.Secrets()) != 2 {
		t.Fatalf("%+v %v %v", out, loose, err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "sub"))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	_ = os.Chmod(file.Path, 0o644)
	if _, loose, _ := file.Load(); !loose {
		t.Error("a world-readable file is not reported")
	}
	for name, content := range map[string]string{"garbage": "{not json refresh_token=secret", "no refresh token": `{"access_token":"a"}`} {
		_ = os.WriteFile(file.Path, []byte(content), 0o600)
		if _, _, err := file.Load(); err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, _, err := (googleauth.TokenFile{Path: dir}).Load(); err == nil {
		t.Error("a directory loaded")
	}
	if err := (googleauth.TokenFile{Path: filepath.Join(file.Path, "x")}).Save(in); err == nil {
		t.Error("saved under a file")
	}
}

func TestSettings(t *testing.T) {
	var s googleauth.Settings
	fl := cli.NewFlags("x")
	s.Register(fl, "GMAIL", true)
	env := map[string]string{"GOOGLE_CLIENT_ID": "generic", "GMAIL_CLIENT_ID": "specific", "GOOGLE_CLIENT_SECRET": "gsecret",
		"GMAIL_CLIENT_SECRET": "ssecret", "GOOGLE_REFRESH_TOKEN": "grt"}
	if err := fl.Parse(nil, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if s.ClientID != "specific" || s.ClientSecret != "ssecret" || s.RefreshToken != "grt" || !s.Configured() ||
		s.AuthURL != googleauth.DefaultAuthURL || s.TokenURL != googleauth.DefaultTokenURL {
		t.Errorf("%+v", s)
	}
	red := logging.NewRedactor()
	s.Redact(red)
	if strings.Contains(red.String("x ssecret grt"), "ssecret") {
		t.Error("not redacted")
	}
	// Plain http only to this machine, decided on the parsed host: a name
	// that starts like a loopback address is someone else's machine.
	for _, bad := range []string{"http://evil.example.com/token", "ftp://x", "::", "http://127.example.com/token",
		"http://127.0.0.1@evil.com/token", "http://localhost.evil.com/token"} {
		var s2 googleauth.Settings
		fl := cli.NewFlags("x")
		s2.Register(fl, "GMAIL", false)
		if err := fl.Parse([]string{"--oauth-token-url", bad}, func(string) string { return "" }); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestServiceAccountDelegation(t *testing.T) {
	f := googleauthtest.New(t)
	key := f.ServiceAccountKey(t, "mailer@proj.iam.gserviceaccount.com")
	path := filepath.Join(t.TempDir(), "key.json")
	_ = os.WriteFile(path, key, 0o600)
	sa, err := googleauth.LoadServiceAccount(path, http.DefaultClient, "ops@example.com", scopeSend)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "http://x", nil)
	err = googleauth.AuthHook(sa.TokenSource, "check the key")(req)
	var me *mcperr.Error
	if !errors.As(err, &me) || me.Code != mcperr.Authentication || !strings.Contains(me.Message, "domain-wide delegation") {
		t.Fatalf("without delegation: %v", err)
	}
	f.AllowDelegation("mailer@proj.iam.gserviceaccount.com", "ops@example.com")
	sa, _ = googleauth.LoadServiceAccount(path, http.DefaultClient, "ops@example.com", scopeSend)
	if err := googleauth.AuthHook(sa.TokenSource, "check the key")(req); err != nil {
		t.Fatal(err)
	}
	g, ok := f.Check(req)
	if !ok || g.Email != "ops@example.com" || g.ServiceAccount != "mailer@proj.iam.gserviceaccount.com" || !g.HasScope(scopeSend) ||
		sa.Subject != "ops@example.com" || sa.ClientID == "" || len(sa.Secrets()) != 2 || sa.LooseMode {
		t.Fatalf("grant %+v %v; sa %+v", g, ok, sa)
	}
	// Key file problems never echo the key.
	for name, content := range map[string]string{"user creds": `{"type":"authorized_user"}`, "other": `{"type":"x"}`,
		"no key": `{"type":"service_account"}`, "bad key": `{"type":"service_account","client_email":"a@b","private_key":"MIIsecret"}`, "not json": "MIIsecret"} {
		_ = os.WriteFile(path, []byte(content), 0o600)
		if _, err := googleauth.LoadServiceAccount(path, http.DefaultClient, "", scopeSend); err == nil || strings.Contains(err.Error(), "MIIsecret") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := googleauth.LoadServiceAccount(filepath.Join(t.TempDir(), "none"), http.DefaultClient, ""); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing: %v", err)
	}
}
