package pgtest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// debianBinGlob is where Debian and Ubuntu install the PostgreSQL binaries of
// each major version; only psql and a few client tools get wrappers in
// /usr/bin, the server binaries are not on PATH.
const debianBinGlob = "/usr/lib/postgresql/*/bin"

// installHint says how to get PostgreSQL; it ends every "not found" error.
const installHint = "install PostgreSQL with `apt-get install postgresql-15` " +
	"(Debian/Ubuntu; any version >= 13 works), or run scripts/ensure-postgres.sh " +
	"from the repository root as root; or set " + envURL +
	" to the admin URL of an existing PostgreSQL server"

// serverBins are the server programs of one PostgreSQL installation.
type serverBins struct {
	initdb string
	pgctl  string
}

// searchDirs lists the directories to look for PostgreSQL programs in: the
// entries of pathEnv in order, then the directories matching glob (one per
// installed major version), highest version first.
func searchDirs(pathEnv, glob string) []string {
	var dirs []string
	for _, d := range filepath.SplitList(pathEnv) {
		// An empty PATH entry means the current directory; never look there.
		if d != "" && filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	return append(dirs, versionDirs(glob)...)
}

// versionDirs returns the directories matching glob, ordered by the version
// number in their parent's name (".../15/bin"), highest first.
func versionDirs(glob string) []string {
	dirs, _ := filepath.Glob(glob) // the only error is a malformed pattern
	slices.SortStableFunc(dirs, func(a, b string) int {
		return compareVersions(filepath.Base(filepath.Dir(b)), filepath.Base(filepath.Dir(a)))
	})
	return dirs
}

// compareVersions orders dotted numeric versions ("9.6" < "13" < "15.2").
// Names that are not versions sort before all versions.
func compareVersions(a, b string) int {
	pa, okA := parseVersion(a)
	pb, okB := parseVersion(b)
	switch {
	case !okA && !okB:
		return strings.Compare(a, b)
	case !okA:
		return -1
	case !okB:
		return 1
	}
	return slices.Compare(pa, pb)
}

func parseVersion(s string) ([]int, bool) {
	var v []int
	for f := range strings.SplitSeq(s, ".") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, false
		}
		v = append(v, n)
	}
	return v, true
}

// isExecutable reports whether path is a regular file (after following
// symlinks) with an execute bit set.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// findServerBins finds initdb and pg_ctl: the first directory of
// searchDirs(pathEnv, glob) that holds both, so the two always come from the
// same installation (pg_ctl then finds the matching postgres next to itself).
func findServerBins(pathEnv, glob string) (serverBins, error) {
	for _, d := range searchDirs(pathEnv, glob) {
		b := serverBins{initdb: filepath.Join(d, "initdb"), pgctl: filepath.Join(d, "pg_ctl")}
		if isExecutable(b.initdb) && isExecutable(b.pgctl) {
			return b, nil
		}
	}
	return serverBins{}, fmt.Errorf("PostgreSQL server binaries not found: no directory on PATH (%s) "+
		"or matching %s holds both initdb and pg_ctl; %s", pathEnv, glob, installHint)
}

// findPsql finds psql. It prefers the psql of the server installation in use
// (initdb's real directory, when serverBins is non-zero): same version, and
// no /usr/bin/psql wrapper script to start for every call. Otherwise it
// searches like findServerBins.
func findPsql(pathEnv, glob string, server serverBins) (string, error) {
	if p, ok := findProgram("psql", pathEnv, glob, server); ok {
		return p, nil
	}
	return "", fmt.Errorf("psql not found on PATH (%s) or in %s; pgtest uses it to create "+
		"and drop the per-test databases; %s (psql alone: apt-get install postgresql-client-15)",
		pathEnv, glob, installHint)
}

// findProgram finds the PostgreSQL program name as findPsql finds psql:
// beside the server's real initdb first, then on PATH and under glob.
func findProgram(name, pathEnv, glob string, server serverBins) (string, bool) {
	var dirs []string
	if server.initdb != "" {
		if real, err := filepath.EvalSymlinks(server.initdb); err == nil {
			dirs = append(dirs, filepath.Dir(real))
		}
		dirs = append(dirs, filepath.Dir(server.initdb))
	}
	for _, d := range append(dirs, searchDirs(pathEnv, glob)...) {
		if p := filepath.Join(d, name); isExecutable(p) {
			return p, true
		}
	}
	return "", false
}
