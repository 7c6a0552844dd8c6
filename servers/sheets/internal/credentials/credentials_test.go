package credentials_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/credentials"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/sheetsfake"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
)

func write(t *testing.T, data []byte, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServiceAccount(t *testing.T) {
	f := sheetsfake.New(t)
	key := f.ServiceAccountKey(t, "agent@project.iam.gserviceaccount.com")
	sa, err := credentials.LoadServiceAccount(write(t, key, 0o600), http.DefaultClient, workbook.Scope)
	if err != nil {
		t.Fatal(err)
	}
	if sa.Email != "agent@project.iam.gserviceaccount.com" || sa.LooseMode || len(sa.Secrets()) != 2 || !strings.Contains(sa.Secrets()[0], "PRIVATE KEY") {
		t.Errorf("loaded %+v", sa)
	}
	tok, err := sa.TokenSource.Token()
	if err != nil || !strings.HasPrefix(tok.AccessToken, "ya29.fake-") {
		t.Fatalf("token %v %v", tok, err)
	}
	again, _ := sa.TokenSource.Token()
	if again.AccessToken != tok.AccessToken || f.Issued() != 1 {
		t.Errorf("the token is not reused: %d issued", f.Issued())
	}
	loose, err := credentials.LoadServiceAccount(write(t, key, 0o644), http.DefaultClient, workbook.Scope)
	if err != nil || !loose.LooseMode {
		t.Errorf("a world-readable key: %+v %v", loose, err)
	}
}

func TestServiceAccountErrors(t *testing.T) {
	f := sheetsfake.New(t)
	key := string(f.ServiceAccountKey(t, "agent@project.iam.gserviceaccount.com"))
	secret := key[strings.Index(key, "MII"):][:40]
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"not JSON", "-----BEGIN PRIVATE KEY-----\n" + secret, "not a JSON key file"},
		{"user credentials", `{"type":"authorized_user","client_id":"x","refresh_token":"r"}`, "OAuth user credentials"},
		{"other type", `{"type":"external_account"}`, `type is "external_account"`},
		{"no key", `{"type":"service_account","client_email":"a@b"}`, "lacks client_email or private_key"},
		{"bad key", `{"type":"service_account","client_email":"a@b","private_key":"` + secret + `"}`, "cannot be used"},
		{"too big", `{"type":"service_account","x":"` + strings.Repeat("a", 70<<10) + `"}`, "not a key file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := credentials.LoadServiceAccount(write(t, []byte(tc.content), 0o600), http.DefaultClient, workbook.Scope)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), secret) {
				t.Errorf("error %v", err)
			}
		})
	}
	if _, err := credentials.LoadServiceAccount(filepath.Join(dir, "missing.json"), http.DefaultClient); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := credentials.LoadServiceAccount(dir, http.DefaultClient); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
}
