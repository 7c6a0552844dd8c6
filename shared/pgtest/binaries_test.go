package pgtest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeProgs creates dir and an executable (or, with mode 0o644, a
// non-executable) file in it for each name.
func fakeProgs(t *testing.T, dir string, mode os.FileMode, names ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 1\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// installs is a temporary root holding fake PostgreSQL installations laid
// out as Debian's (lib/postgresql/VERSION/bin), and the glob that finds them.
type installs struct {
	t               *testing.T
	root, lib, glob string
}

func fakeInstalls(t *testing.T) *installs {
	root := t.TempDir()
	lib := filepath.Join(root, "lib", "postgresql")
	return &installs{t: t, root: root, lib: lib, glob: filepath.Join(lib, "*", "bin")}
}

// add installs version with the named programs and returns its bin directory.
func (in *installs) add(version string, names ...string) string {
	in.t.Helper()
	return fakeProgs(in.t, filepath.Join(in.lib, version, "bin"), 0o755, names...)
}

func TestFindServerBins(t *testing.T) {
	in := fakeInstalls(t)
	root, glob := in.root, in.glob
	// Installed versions; 16's initdb is missing, so 15 is the best usable one.
	for _, v := range []string{"9.6", "13"} {
		in.add(v, "initdb", "pg_ctl", "postgres", "psql")
	}
	v15 := in.add("15", "initdb", "pg_ctl", "postgres", "psql")
	in.add("16", "pg_ctl", "psql")
	in.add("notaversion", "initdb", "pg_ctl")

	onlyInitdb := fakeProgs(t, filepath.Join(root, "onlyinitdb"), 0o755, "initdb")
	notExec := fakeProgs(t, filepath.Join(root, "notexec"), 0o644, "initdb", "pg_ctl")
	local := fakeProgs(t, filepath.Join(root, "local"), 0o755, "initdb", "pg_ctl")
	local2 := fakeProgs(t, filepath.Join(root, "local2"), 0o755, "initdb", "pg_ctl")
	asDirs := filepath.Join(root, "dirs")
	for _, n := range []string{"initdb", "pg_ctl"} {
		if err := os.MkdirAll(filepath.Join(asDirs, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := func(dirs ...string) string { return strings.Join(dirs, string(os.PathListSeparator)) }

	tests := []struct {
		name, path, glob, want string
	}{
		{"PATH first", path(onlyInitdb, local, local2), glob, local},
		{"PATH order", path(local2, local), glob, local2},
		{"empty PATH: highest version", "", glob, v15},
		{"incomplete, non-executable, directories and relative entries skipped",
			path(onlyInitdb, notExec, asDirs, "", ".", "local"), glob, v15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findServerBins(tt.path, tt.glob)
			if err != nil {
				t.Fatal(err)
			}
			want := serverBins{initdb: filepath.Join(tt.want, "initdb"), pgctl: filepath.Join(tt.want, "pg_ctl")}
			if got != want {
				t.Errorf("findServerBins = %+v, want %+v", got, want)
			}
		})
	}

	t.Run("not found", func(t *testing.T) {
		_, err := findServerBins(path(onlyInitdb, notExec), filepath.Join(root, "nowhere", "*", "bin"))
		if err == nil {
			t.Fatal("found server binaries where there are none")
		}
		for _, want := range []string{"initdb", "pg_ctl", "apt-get install postgresql-15", "scripts/ensure-postgres.sh", "PGTEST_URL"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
	})
}

func TestFindPsql(t *testing.T) {
	in := fakeInstalls(t)
	root, glob := in.root, in.glob
	v15 := in.add("15", "initdb", "pg_ctl", "psql")
	v14 := in.add("14", "psql")
	usrBin := fakeProgs(t, filepath.Join(root, "usr", "bin"), 0o755, "psql")
	// A PATH directory of symlinks, like /usr/local/bin here.
	links := filepath.Join(root, "local", "bin")
	if err := os.MkdirAll(links, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"initdb", "pg_ctl"} {
		if err := os.Symlink(filepath.Join(v15, n), filepath.Join(links, n)); err != nil {
			t.Fatal(err)
		}
	}
	path := strings.Join([]string{links, usrBin}, string(os.PathListSeparator))

	t.Run("next to the server's real initdb", func(t *testing.T) {
		server, err := findServerBins(path, glob)
		if err != nil {
			t.Fatal(err)
		}
		if server.initdb != filepath.Join(links, "initdb") {
			t.Fatalf("initdb = %s, want the one on PATH", server.initdb)
		}
		got, err := findPsql(path, glob, server)
		if want := filepath.Join(v15, "psql"); err != nil || got != want {
			t.Errorf("findPsql = %q, %v; want %q", got, err, want)
		}
	})
	t.Run("PATH without a server", func(t *testing.T) {
		got, err := findPsql(path, glob, serverBins{})
		if want := filepath.Join(usrBin, "psql"); err != nil || got != want {
			t.Errorf("findPsql = %q, %v; want %q", got, err, want)
		}
	})
	t.Run("highest version without PATH", func(t *testing.T) {
		if err := os.Remove(filepath.Join(v15, "psql")); err != nil {
			t.Fatal(err)
		}
		got, err := findPsql("", glob, serverBins{})
		if want := filepath.Join(v14, "psql"); err != nil || got != want {
			t.Errorf("findPsql = %q, %v; want %q", got, err, want)
		}
	})
	t.Run("not found", func(t *testing.T) {
		_, err := findPsql(links, filepath.Join(root, "nowhere", "*", "bin"), serverBins{})
		if err == nil || !strings.Contains(err.Error(), "postgresql-client-15") {
			t.Errorf("err = %v, want a psql not found error naming postgresql-client-15", err)
		}
	})
}

func TestFindProgram(t *testing.T) {
	in := fakeInstalls(t)
	root, glob := in.root, in.glob
	v15 := in.add("15", "initdb", "pg_ctl", "pgbench")
	v16 := in.add("16", "pgbench")
	usrBin := fakeProgs(t, filepath.Join(root, "usr", "bin"), 0o755, "pgbench")
	server := serverBins{initdb: filepath.Join(v15, "initdb"), pgctl: filepath.Join(v15, "pg_ctl")}
	if got, ok := findProgram("pgbench", usrBin, glob, server); !ok || got != filepath.Join(v15, "pgbench") {
		t.Errorf("with a server: %q, %v; want the one beside its initdb", got, ok)
	}
	if got, ok := findProgram("pgbench", usrBin, glob, serverBins{}); !ok || got != filepath.Join(usrBin, "pgbench") {
		t.Errorf("without a server: %q, %v; want the one on PATH", got, ok)
	}
	if got, ok := findProgram("pgbench", "", glob, serverBins{}); !ok || got != filepath.Join(v16, "pgbench") {
		t.Errorf("without PATH: %q, %v; want the highest version's", got, ok)
	}
	if got, ok := findProgram("pg_dump", usrBin, glob, server); ok {
		t.Errorf("a program nowhere: found %q", got)
	}
}

func TestVersionDirsOrder(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"9.6", "10", "15", "9.5", "16", "beta"} {
		fakeProgs(t, filepath.Join(root, v, "bin"), 0o755)
	}
	var got []string
	for _, d := range versionDirs(filepath.Join(root, "*", "bin")) {
		got = append(got, filepath.Base(filepath.Dir(d)))
	}
	if want := []string{"16", "15", "10", "9.6", "9.5", "beta"}; !slices.Equal(got, want) {
		t.Errorf("versionDirs order = %v, want %v", got, want)
	}
}

func TestDatabaseName(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range []struct{ test, prefix string }{
		{"TestFoo", "pgtest_testfoo_"},
		{"TestFoo/sub test#01", "pgtest_testfoo_sub_test_01_"},
		{"Test/__Ünïcode__/x", "pgtest_test_n_code_x_"},
		{strings.Repeat("TestLong", 40), "pgtest_" + strings.Repeat("testlong", 4) + "_"},
		{"", "pgtest_"},
	} {
		for range 3 {
			got := databaseName(tc.test)
			if !strings.HasPrefix(got, tc.prefix) || len(got) != len(tc.prefix)+12 {
				t.Errorf("databaseName(%q) = %q, want %q and 12 hex digits", tc.test, got, tc.prefix)
			}
			if len(got) > 63 {
				t.Errorf("databaseName(%q) = %q is longer than 63 bytes", tc.test, got)
			}
			if seen[got] {
				t.Errorf("databaseName(%q) = %q twice", tc.test, got)
			}
			seen[got] = true
		}
	}
}
