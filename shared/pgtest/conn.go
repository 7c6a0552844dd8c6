package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Conn connects to dbURL, as its user, for a test's own statements (the
// fixture, checks of what the code under test wrote), and closes the
// connection when the test ends. It fails the test if it cannot connect.
func Conn(t testing.TB, dbURL string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatalf("pgtest: connecting: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}
