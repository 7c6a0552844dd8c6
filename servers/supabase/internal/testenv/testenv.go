// Package testenv gives tests the three backends on the same schema and
// sample rows: the embedded database, PostgreSQL (a throwaway database of
// shared/pgtest, migrated by its superuser and used through an ordinary
// role, as in production), and the PostgREST client talking to the
// postgrestfake HTTP fake of a Supabase project (itself on an embedded
// database). Packages using Postgres must run pgtest.Main in TestMain.
package testenv

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/backend"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/embedded"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/postgres"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/postgrestfake"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/rest"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/schemasql"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
	"github.com/mcp-fleet/mcp-fleet/shared/state"
)

// Key is a JWT-shaped API key, as Supabase's legacy keys are.
const Key = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.dGVzdC1zaWduYXR1cmU"

// Env is one backend under test.
type Env struct {
	Name    string
	Backend backend.Backend
	// Fake is the PostgREST fake (REST only).
	Fake *postgrestfake.Server
	// AdminURL reaches the PostgreSQL database as its owner (Postgres only).
	AdminURL string
}

// Embedded opens a fresh embedded database with the sample rows.
func Embedded(t testing.TB) *Env {
	t.Helper()
	db, err := embedded.Open(context.Background(), embedded.Config{Path: filepath.Join(t.TempDir(), "supabase.db"), Sample: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return &Env{Name: "embedded", Backend: db}
}

// PostgresURLs migrates a fresh database and returns its owner's URL and
// the URL of an ordinary role granted the application's privileges.
func PostgresURLs(t testing.TB) (admin, app string) {
	t.Helper()
	ctx := context.Background()
	admin = pgtest.URL(t)
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := state.MigratePostgres(ctx, conn, schemasql.Postgres()); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, schemasql.Sample()); err != nil {
		t.Fatal(err)
	}
	role, app := pgtest.Role(t, admin)
	for _, st := range []string{
		"GRANT USAGE ON SCHEMA public TO " + role,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + role,
		"GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO " + role,
	} {
		if _, err := conn.Exec(ctx, st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	return admin, app
}

// Postgres opens the PostgreSQL backend on a fresh migrated database.
func Postgres(t testing.TB) *Env {
	t.Helper()
	admin, app := PostgresURLs(t)
	db, err := postgres.Open(postgres.Config{URL: app, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return &Env{Name: "postgres", Backend: db, AdminURL: admin}
}

// REST opens the PostgREST client on the fake of a project whose data is a
// fresh embedded database.
func REST(t testing.TB) *Env {
	t.Helper()
	inner := Embedded(t)
	fake := postgrestfake.New(inner.Backend, Key, "", nil)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	c, err := rest.New(rest.Config{URL: srv.URL, Key: Key, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &Env{Name: "postgrest", Backend: c, Fake: fake}
}

// Opener opens one backend.
type Opener struct {
	Name string
	Open func(testing.TB) *Env
}

// Openers are the three backends, by name.
var Openers = []Opener{{"embedded", Embedded}, {"postgres", Postgres}, {"postgrest", REST}}

// ForEach runs fn once per backend, each on its own fresh data.
func ForEach(t *testing.T, fn func(t *testing.T, e *Env)) {
	for _, o := range Openers {
		t.Run(o.Name, func(t *testing.T) {
			fn(t, o.Open(t))
		})
	}
}
