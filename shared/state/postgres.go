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
	return step(ctx, pgMigration{tx}, known)
}

// pgMigration is a migration's transaction on PostgreSQL.
type pgMigration struct{ tx pgx.Tx }

func (p pgMigration) applied(ctx context.Context) ([]applied, error) {
	rows, err := p.tx.Query(ctx, "SELECT version, name, checksum FROM schema_migrations ORDER BY version")
	if err != nil {
		return nil, err
	}
	var done []applied
	var a applied
	_, err = pgx.ForEachRow(rows, []any{&a.version, &a.name, &a.checksum}, func() error {
		done = append(done, a)
		return nil
	})
	return done, err
}

// run uses the simple protocol, which takes several statements.
func (p pgMigration) run(ctx context.Context, sql string) error {
	_, err := p.tx.Conn().PgConn().Exec(ctx, sql).ReadAll()
	return err
}

func (p pgMigration) record(ctx context.Context, m Migration) error {
	_, err := p.tx.Exec(ctx, "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
		m.Version, m.Name, m.Checksum)
	return err
}

func (p pgMigration) commit(ctx context.Context) error { return p.tx.Commit(ctx) }
