package credentials_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/credentials"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth/googleauthtest"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
)

func TestUser(t *testing.T) {
	a := googleauthtest.New(t)
	settings := &googleauth.Settings{ClientID: a.ClientID, ClientSecret: a.ClientSecret, TokenURL: a.TokenURL}
	path := filepath.Join(t.TempDir(), googleauth.TokenFileName)
	if _, err := credentials.LoadUser(settings, path, http.DefaultClient, nil, logging.NewRedactor()); err == nil ||
		!strings.Contains(err.Error(), "sheets-mcp auth") {
		t.Fatalf("no sign-in: %v", err)
	}
	rt := a.IssueRefreshToken(workbook.Scope)
	if err := (googleauth.TokenFile{Path: path}).Save(&googleauth.Stored{RefreshToken: rt, ClientID: a.ClientID, Origin: googleauth.OriginAuth,
		Account: "jane@example.com"}); err != nil {
		t.Fatal(err)
	}
	settings.RefreshToken = "1//from-env"
	u, err := credentials.LoadUser(settings, path, http.DefaultClient, nil, logging.NewRedactor())
	if err != nil || u.Account != "jane@example.com" || !u.IgnoredEnv || u.LooseMode {
		t.Fatalf("%+v %v", u, err)
	}
	tok, err := u.TokenSource.Token()
	if err != nil || !strings.HasPrefix(tok.AccessToken, "ya29.fake-") {
		t.Fatalf("token %v %v", tok, err)
	}
}
