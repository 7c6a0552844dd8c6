package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

func TestStmtCacheDropsTheLeastRecentlyUsed(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var c stmtCache
	defer c.close()
	use := func(text string) {
		t.Helper()
		if _, done, err := c.get(ctx, db, text); err != nil {
			t.Fatal(err)
		} else {
			done()
		}
	}
	for i := range maxStmts {
		use(fmt.Sprintf("SELECT %d", i))
	}
	use("SELECT 0") // the polling read comes again
	use("SELECT 'one more'")
	if len(c.m) != maxStmts {
		t.Fatalf("%d statements kept, want %d", len(c.m), maxStmts)
	}
	if c.m["SELECT 0"] == nil || c.m["SELECT 1"] != nil {
		t.Fatalf("the statement used again was dropped, or the least recently used one kept")
	}
}
