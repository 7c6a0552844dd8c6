package schemasql

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "copy configs/supabase/ into this package")

const source = "../../../../configs/supabase"

// TestCopies: the embedded files are exactly configs/supabase/, file for file.
func TestCopies(t *testing.T) {
	var n int
	for _, pattern := range []string{"postgres/*.sql", "sqlite/*.sql", "sample_data.sql"} {
		srcs, err := filepath.Glob(filepath.Join(source, pattern))
		if err != nil || len(srcs) == 0 {
			t.Fatalf("no %s under %s: %v", pattern, source, err)
		}
		for _, src := range srcs {
			rel, _ := filepath.Rel(source, src)
			want, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(rel, want, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := files.ReadFile(filepath.ToSlash(rel))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s: run go test -run TestCopies -update in this package (then rebuild)", rel, src)
			}
			n++
		}
	}
	embedded, _ := files.ReadDir("postgres")
	lite, _ := files.ReadDir("sqlite")
	if len(embedded)+len(lite)+1 != n {
		t.Errorf("the package embeds %d files, configs/supabase has %d: remove the stale copies", len(embedded)+len(lite)+1, n)
	}
	if Sample() == "" || Postgres() == nil || SQLite() == nil {
		t.Error("empty embedded schema")
	}
}
