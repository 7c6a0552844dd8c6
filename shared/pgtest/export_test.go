package pgtest

import "testing"

// PsqlPath returns the psql program pgtest uses, starting the cluster if
// need be.
func PsqlPath(t testing.TB) string {
	t.Helper()
	return get(t).psql
}
