// Package state is how a server opens its own local state: an SQLite
// database in its data directory (mailbox index, webhook event store, mock
// marketplace, embedded database), or a PostgreSQL database it owns, with
// the schema kept by versioned migrations embedded in the binary.
//
// Migrations are numbered .sql files at the root of an fs.FS, usually an
// embed.FS narrowed with fs.Sub:
//
//	//go:embed migrations/*.sql
//	var migrationFiles embed.FS
//
//	sub, _ := fs.Sub(migrationFiles, "migrations")
//	db, err := state.OpenSQLite(ctx, filepath.Join(dataDir, "mail.db"), state.Options{Migrations: sub})
//
// File names are NNNN_description.sql, numbered from 1 without gaps; a file
// may hold several statements but no transaction control. Each migration
// runs in its own transaction together with its row in the
// schema_migrations table (version, name, SHA-256 checksum, time), so it is
// applied whole or not at all. Opening refuses a database whose recorded
// version is newer than the binary knows (an older binary must not write a
// newer schema), and one whose applied migration no longer matches its file
// (a migration is never edited once released: add a new one). Several
// processes may open the same database at once: each migration is applied
// exactly once (SQLite: under the database's write lock; PostgreSQL: under a
// transaction-level advisory lock).
package state

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
)

// Migration is one numbered schema change.
type Migration struct {
	Version int
	// Name is the file name.
	Name string
	SQL  string
	// Checksum is the hex SHA-256 of the file.
	Checksum string
}

var migrationName = regexp.MustCompile(`^([0-9]+)_[A-Za-z0-9_.-]+\.sql$`)

// LoadMigrations reads the .sql files at the root of fsys (nil: none), in
// version order. A .sql file whose name is not NNNN_description.sql, two
// files of one version, a gap, or an empty file is an error; other files are
// ignored.
func LoadMigrations(fsys fs.FS) ([]Migration, error) {
	if fsys == nil {
		return nil, nil
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("reading the migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || len(name) < 4 || name[len(name)-4:] != ".sql" {
			continue
		}
		m := migrationName.FindStringSubmatch(name)
		if m == nil {
			return nil, fmt.Errorf("migration %s: the name must be NNNN_description.sql", name)
		}
		v, err := strconv.Atoi(m[1])
		if err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: the version must be a number from 1", name)
		}
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", name, err)
		}
		if len(raw) == 0 {
			return nil, fmt.Errorf("migration %s is empty", name)
		}
		sum := sha256.Sum256(raw)
		out = append(out, Migration{Version: v, Name: name, SQL: string(raw), Checksum: hex.EncodeToString(sum[:])})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range out {
		if i > 0 && m.Version == out[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s have the same version", out[i-1].Name, m.Name)
		}
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: versions must run 1, 2, 3… without gaps (expected %d)", m.Name, i+1)
		}
	}
	return out, nil
}

// applied is a row of schema_migrations.
type applied struct {
	version  int
	name     string
	checksum string
}

// check compares what a database recorded with what the binary knows.
func check(known []Migration, done []applied) error {
	for _, a := range done {
		if a.version < 1 {
			return fmt.Errorf("schema_migrations records version %d, which no migration has", a.version)
		}
		if a.version > len(known) {
			return fmt.Errorf("the database is at schema version %d (%s), newer than this program knows (%d): "+
				"it was written by a newer version; upgrade this program", a.version, a.name, len(known))
		}
		if m := known[a.version-1]; m.Checksum != a.checksum {
			return fmt.Errorf("migration %s was changed after it was applied (recorded checksum %.12s…, file %.12s…): "+
				"restore it and add a new migration instead", m.Name, a.checksum, m.Checksum)
		}
	}
	return nil
}

// migrationTx is one migration's transaction, as a driver runs it.
type migrationTx interface {
	// applied reads schema_migrations.
	applied(ctx context.Context) ([]applied, error)
	// run executes a migration's statements (there may be several).
	run(ctx context.Context, sql string) error
	// record adds m's row to schema_migrations.
	record(ctx context.Context, m Migration) error
	commit(ctx context.Context) error
}

// step applies, in tx, the first of known the database has not applied, if
// any, and returns the version the database is then at. The caller rolls tx
// back when step fails.
func step(ctx context.Context, tx migrationTx, known []Migration) (int, error) {
	done, err := tx.applied(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading schema_migrations: %w", err)
	}
	if err := check(known, done); err != nil {
		return 0, err
	}
	version := len(done)
	if version < len(known) {
		m := known[version]
		if err := tx.run(ctx, m.SQL); err != nil {
			return 0, fmt.Errorf("migration %s: %w", m.Name, err)
		}
		if err := tx.record(ctx, m); err != nil {
			return 0, fmt.Errorf("recording migration %s: %w", m.Name, err)
		}
		version++
	}
	if err := tx.commit(ctx); err != nil {
		return 0, fmt.Errorf("committing migration %d: %w", version, err)
	}
	return version, nil
}
