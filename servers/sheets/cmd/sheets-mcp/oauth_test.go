package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/sheetsfake"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth/googleauthtest"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// oauthSetup is a fake authorization server whose access tokens the fake
// Sheets API accepts, and the environment of a server using them.
func oauthSetup(t *testing.T) (*googleauthtest.Server, *sheetsfake.Server, map[string]string) {
	t.Helper()
	a := googleauthtest.New(t)
	f := sheetsfake.New(t)
	f.AddSpreadsheet(sid, "Sheet1")
	a.OnIssue(func(tok string, g googleauthtest.Grant) {
		if g.HasScope(sheetsfake.SpreadsheetsScope) {
			f.AddToken(tok)
		}
	})
	return a, f, map[string]string{"GOOGLE_SHEETS_CLIENT_DATABASE_ID": sid, "GOOGLE_SHEETS_CLIENT_ID": a.ClientID,
		"GOOGLE_SHEETS_CLIENT_SECRET": a.ClientSecret, "GOOGLE_OAUTH_AUTH_URL": a.AuthURL, "GOOGLE_OAUTH_TOKEN_URL": a.TokenURL,
		"SHEETS_API_ENDPOINT": f.URL, "MCP_DATA_DIR": t.TempDir()}
}

func mainWith(env map[string]string, stdout io.Writer, args ...string) (int, string) {
	var stderr bytes.Buffer
	code := kit.Main(spec(), args, func(k string) string { return env[k] }, strings.NewReader(""), stdout, &stderr)
	return code, stderr.String()
}

// TestOAuthSignIn: `sheets-mcp auth` against the fake (PKCE, offline,
// consent, the spreadsheets scope), the token stored 0600 in the data
// directory; then the server reaches the spreadsheet as that person, its
// refreshed tokens persisted, and a revoked sign-in says what to run.
func TestOAuthSignIn(t *testing.T) {
	a, _, env := oauthSetup(t)
	a.SetAccessTTL(time.Second) // every use refreshes
	a.SetRotate(true)
	pr, pw := io.Pipe()
	var out bytes.Buffer
	browsed := a.BrowsePrinted(io.TeeReader(pr, &out), nil)
	code, stderr := mainWith(env, pw, "auth")
	pw.Close()
	if err := <-browsed; err != nil || code != 0 {
		t.Fatalf("auth: %d %v\n%s\n%s", code, err, out.String(), stderr)
	}
	if q := a.LastAuthRequest(); q.Get("scope") != sheetsfake.SpreadsheetsScope || q.Get("access_type") != "offline" || q.Get("prompt") != "consent" ||
		q.Get("code_challenge_method") != "S256" {
		t.Errorf("authorization request %v", q)
	}
	path := filepath.Join(env["MCP_DATA_DIR"], "sheets", googleauth.TokenFileName)
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 || !strings.Contains(out.String(), path) {
		t.Fatalf("token file %v %v\n%s", info, err, out.String())
	}
	before, _, _ := googleauth.TokenFile{Path: path}.Load()

	var initOut bytes.Buffer
	if code, stderr := mainWith(env, &initOut, "init"); code != 0 || !strings.Contains(initOut.String(), "added tab Clients") {
		t.Fatalf("init with the sign-in: %d %s %s", code, initOut.String(), stderr)
	}
	after, _, err := googleauth.TokenFile{Path: path}.Load()
	if err != nil || after.RefreshToken == before.RefreshToken || !a.RefreshTokenLive(after.RefreshToken) {
		t.Errorf("the rotated refresh token was not persisted: %v", err)
	}

	a.RevokeAll()
	code, stderr = mainWith(env, io.Discard, "init")
	if code != 1 || !strings.Contains(stderr, "sheets-mcp auth") {
		t.Errorf("revoked: %d %s", code, stderr)
	}
}

// TestOAuthFromEnvironment: a refresh token in GOOGLE_SHEETS_REFRESH_TOKEN
// works without `sheets-mcp auth`.
func TestOAuthFromEnvironment(t *testing.T) {
	a, _, env := oauthSetup(t)
	env["GOOGLE_SHEETS_REFRESH_TOKEN"] = a.IssueRefreshToken(sheetsfake.SpreadsheetsScope)
	var out bytes.Buffer
	if code, stderr := mainWith(env, &out, "init"); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	delete(env, "GOOGLE_SHEETS_REFRESH_TOKEN")
	env["MCP_DATA_DIR"] = t.TempDir()
	code, stderr := mainWith(env, io.Discard, "init")
	if code != 1 || !strings.Contains(stderr, "run `sheets-mcp auth`") {
		t.Errorf("no sign-in: %d %s", code, stderr)
	}
	// The server reports an unreachable grant as an authentication failure.
	env["GOOGLE_SHEETS_REFRESH_TOKEN"] = "1//not-issued"
	ts, _, err := setup(t, nil, env)
	if err != nil {
		t.Fatal(err)
	}
	c := serve(t, ts)
	mcptest.FailCode(t, c.Call("get_client", map[string]any{"identifier": "CL-001"}), mcperr.Authentication)
}
