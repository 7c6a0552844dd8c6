package tools_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"golang.org/x/oauth2"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/clientdb"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/sample"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/sheetsfake"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
)

const sid = "client-db"

var ctx = context.Background()

// server is the sheets tools and resource on one backend.
type server struct {
	deps     tools.Deps
	notifier *kit.Notifier
	fake     *sheetsfake.Server
	// maxResult, when set, is the result budget (--max-result-bytes).
	maxResult int
}

func localServer(t testing.TB) *server {
	t.Helper()
	wb, err := workbook.OpenLocal(workbook.LocalConfig{Dir: filepath.Join(t.TempDir(), "workbook"), Seed: sample.Files()})
	if err != nil {
		t.Fatal(err)
	}
	return newServer(wb, false, nil)
}

func googleServer(t testing.TB) *server {
	t.Helper()
	f := sheetsfake.New(t)
	f.AddToken("tok")
	f.AddSpreadsheet(sid, "Clients", "Flight_History")
	for _, tab := range []string{"Clients", "Flight_History"} {
		l, err := workbook.OpenLocal(workbook.LocalConfig{Dir: t.TempDir(), Seed: sample.Files()})
		if err != nil {
			t.Fatal(err)
		}
		v, err := l.Read(ctx, []a1Range{a1Tab(tab)}, workbook.DatesSerial)
		if err != nil {
			t.Fatal(err)
		}
		f.SetRows(sid, tab, v[0])
	}
	wb, err := workbook.NewGoogle(ctx, workbook.GoogleConfig{SpreadsheetID: sid, Endpoint: f.URL,
		TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok"}),
		Retry:       retry.Policy{MaxAttempts: 2, BaseDelay: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return newServer(wb, true, f)
}

func newServer(wb workbook.Workbook, open bool, f *sheetsfake.Server) *server {
	s := &server{notifier: kit.NewNotifier(), fake: f}
	db := clientdb.New(wb, clientdb.Options{Changed: func(id string) { s.notifier.Updated(tools.ClientURI(id)) }})
	s.deps = tools.Deps{DB: db, OpenWorld: open}
	return s
}

func backends() map[string]func(testing.TB) *server {
	return map[string]func(testing.TB) *server{"local": localServer, "google": googleServer}
}

// onEveryBackend runs test once per backend, each in a subtest with a
// fresh server.
func onEveryBackend(t *testing.T, test func(t *testing.T, s *server)) {
	t.Helper()
	for name, open := range backends() {
		t.Run(name, func(t *testing.T) { test(t, open(t)) })
	}
}

// connect serves the tools as agent (no policy when p is nil) to a client
// with the given options.
func (s *server) connect(t testing.TB, p *acl.Policy, agent string, opts ...client.ClientOption) *mcptest.Client {
	t.Helper()
	o := kit.Options{Policy: p, Notifier: s.notifier, Templates: []kit.ResourceTemplate{tools.ClientTemplate(s.deps)},
		Limits: kit.Limits{MaxCalls: 64, MaxSessionCalls: 64, MaxResultBytes: s.maxResult},
		// A subscriptions/listen stream the client closed is still open on
		// the server when the test ends; do not wait the default 10 s for it.
		Grace: 200 * time.Millisecond}
	srv, err := kit.New(kit.Info{Name: "sheets"}, tools.All(s.deps), o)
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.NewInProcess(t, srv, agent, opts...)
}
