package state

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"
)

// Beginner starts a transaction: a *pgx.Conn, a *pgxpool.Pool or a
// *pgxpool.Conn.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// migrationLock is the advisory lock key every migration transaction takes
// (transaction-level: released at commit or rollback, even if the process
// dies). Derived from "mcp-fleet/state/schema_migrations".
const migrationLock int64 = 0x6d63_7066_7374_6174

const pgMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  checksum text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`

// MigratePostgres brings the schema of the database db reaches (its
// search_path's first schema, for schema_migrations and unqualified names)
// up to date with the migrations in fsys, and returns the schema version.
// Each migration runs in its own transaction that first takes an advisory
// lock, so processes starting at once apply each migration exactly once;
// the others wait, then see it applied. A database at a newer version than
// fsys knows, or whose applied migration changed, is refused.
func MigratePostgres(ctx context.Context, db Beginner, fsys fs.FS) (int, error) {
	known, err := LoadMigrations(fsys)
	if err != nil {
		return 0, err
	}
	for {
		version, err := pgStep(ctx, db, known)
		if err != nil || version >= len(known) {
			return version, err
		}
	}
}

// pgStep applies the next pending migration, if any, in one transaction
// under the advisory lock, and returns the version the database is then at.
func pgStep(ctx context.Context, db Beginner, known []Migration) (version int, err error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("starting a migration: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
		return 0, fmt.Errorf("waiting for the migration lock: %w", err)
	}
	// Under the lock: concurrent CREATE TABLE IF NOT EXISTS can otherwise
	// collide in the catalogs.
	if _, err := tx.Exec(ctx, pgMigrationsTable); err != nil {
		return 0, fmt.Errorf("creating schema_migrations: %w", err)
	}
	rows, err := tx.Query(ctx, "SELECT version, name, checksum FROM schema_migrations ORDER BY version")
	if err != nil {
		return 0, fmt.Errorf("reading schema_migrations: %w", err)
	}
	var done []applied
	var a applied
	if _, err := pgx.ForEachRow(rows, []any{&a.version, &a.name, &a.checksum}, func() error {
		done = append(done, a)
		return nil
	}); err != nil {
		return 0, fmt.Errorf("reading schema_migrations: %w", err)
	}
	if err := check(known, done); err != nil {
		return 0, err
	}
	version = len(done)
	if version < len(known) {
		m := known[version]
		// The simple protocol: a migration may hold several statements.
		if _, err := tx.Conn().PgConn().Exec(ctx, m.SQL).ReadAll(); err != nil {
			return 0, fmt.Errorf("migration %s: %w", m.Name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
			m.Version, m.Name, m.Checksum); err != nil {
			return 0, fmt.Errorf("recording migration %s: %w", m.Name, err)
		}
		version++
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("committing migration %d: %w", version, err)
	}
	return version, nil
}
