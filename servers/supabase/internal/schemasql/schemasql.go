// Package schemasql embeds the workflow-state schema the server ships: the
// PostgreSQL migrations (applied by `supabase-mcp migrate` and by the local
// stack), the SQLite migrations of the embedded database, and the sample
// rows. These files are the schema's one source: the compose stack mounts
// the PostgreSQL ones into the database's first start, and operators apply
// them by hand the same way (docs/supabase.md).
package schemasql

import (
	"embed"
	"io/fs"
)

//go:embed postgres/*.sql sqlite/*.sql sample_data.sql
var files embed.FS

// Postgres returns the PostgreSQL migrations.
func Postgres() fs.FS { return sub("postgres") }

// SQLite returns the SQLite migrations.
func SQLite() fs.FS { return sub("sqlite") }

// Sample returns the sample rows, valid SQL in both dialects.
func Sample() string {
	b, _ := files.ReadFile("sample_data.sql")
	return string(b)
}

func sub(dir string) fs.FS {
	f, err := fs.Sub(files, dir)
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return f
}
