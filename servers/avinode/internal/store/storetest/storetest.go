// Package storetest gives tests of the avinode server stores to work on —
// an SQLite file or a fresh PostgreSQL database, opened as often as the test
// has processes — and a way to wait for the webhook processor's outcome.
package storetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

// kinds are the databases the store supports, as Each runs them.
var kinds = []string{"sqlite", "postgres"}

// DB is one database that several stores (or avinode-mcp processes) can
// open at once, as processes sharing it would.
type DB struct {
	// Path is the SQLite file, URL the PostgreSQL database; one is empty.
	Path, URL string
}

// NewDB makes a database of the kind ("sqlite" or "postgres") for t. A
// PostgreSQL one needs pgtest.Main in the package's TestMain.
func NewDB(t testing.TB, kind string) DB {
	t.Helper()
	if kind == "postgres" {
		return DB{URL: pgtest.URL(t)}
	}
	return DB{Path: filepath.Join(t.TempDir(), "avinode.db")}
}

// Env points an avinode-mcp process at the database.
func (db DB) Env() []string {
	if db.URL != "" {
		return []string{"DATABASE_URL=" + db.URL}
	}
	return []string{"AVINODE_DB_PATH=" + db.Path}
}

// Connect opens a store on the database; the caller closes it.
func (db DB) Connect(ctx context.Context, opts store.Options) (*store.Store, error) {
	if db.URL != "" {
		return store.OpenPostgres(ctx, db.URL, opts)
	}
	return store.OpenSQLite(ctx, db.Path, opts)
}

// Open opens a store on the database, closed when t ends.
func (db DB) Open(t testing.TB, opts store.Options) *store.Store {
	t.Helper()
	st, err := db.Connect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// SQLite opens a store in a new SQLite file, closed when t ends.
func SQLite(t testing.TB, opts store.Options) *store.Store {
	t.Helper()
	return NewDB(t, "sqlite").Open(t, opts)
}

// Each runs fn on a new database of every kind, in parallel subtests named
// after the kind.
func Each(t *testing.T, fn func(t *testing.T, db DB)) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			fn(t, NewDB(t, kind))
		})
	}
}

// WaitEvent polls st until the webhook event of Avinode id avinodeID reaches
// status, and fails t if it has not within the given time.
func WaitEvent(t testing.TB, st *store.Store, avinodeID, status string, within time.Duration) store.WebhookEvent {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		evs, err := st.WebhookEvents(context.Background(), store.EventFilter{Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.AvinodeEventID == avinodeID && e.Status == status {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("event %s never reached %s: %+v", avinodeID, status, evs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
