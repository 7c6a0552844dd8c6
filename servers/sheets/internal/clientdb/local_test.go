package clientdb_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/clientdb"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
)

// movingWorkbook is the local workbook with someone else's program editing
// the file just before some of the server's writes reach it.
type movingWorkbook struct {
	workbook.Workbook
	writes atomic.Int64
	before func(n int64)
}

func (m *movingWorkbook) Write(ctx context.Context, tab string, cells []workbook.Cell) error {
	m.before(m.writes.Add(1))
	return m.Workbook.Write(ctx, tab, cells)
}

func (m *movingWorkbook) Lock(ctx context.Context) (func(), error) {
	return m.Workbook.(workbook.Locker).Lock(ctx)
}

// moving puts the env's database on a moving workbook.
func moving(e *env, before func(n int64)) {
	e.db = clientdb.New(&movingWorkbook{Workbook: e.wb, before: before}, clientdb.Options{Changed: e.changed.add})
}

func TestLocalSortBetweenReadAndWrite(t *testing.T) {
	defer catch(t)
	e := localEnv(t)
	before := byID(t, e.db)
	moving(e, func(n int64) {
		if n == 1 {
			e.sortBy(2, true) // CL-007's row 8 now holds CL-011
		}
	})
	res := must(e.db.Update(ctx, "CL-007", clientdb.Fields{Company: str("Whitaker Group")}, ""))
	if res.Client.Company != "Whitaker Group" || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "CL-011") {
		t.Errorf("result %+v", res)
	}
	after := byID(t, e.db)
	for id, r := range before {
		if id != "CL-007" && !sameExceptStamp(r, after[id]) {
			t.Errorf("client %s changed: %+v → %+v", id, r, after[id])
		}
	}
}

func TestLocalFileAsPeopleSeeIt(t *testing.T) {
	defer catch(t)
	e := localEnv(t)
	must(e.db.Update(ctx, "CL-003", clientdb.Fields{SpecialNeeds: str("=HYPERLINK(\"http://x\")")}, ""))
	b, err := os.ReadFile(filepath.Join(e.dir, "Clients.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"'=HYPERLINK(""http://x"")"`) {
		t.Errorf("the formula-like text is not neutralised in the file:\n%s", b)
	}
	if c := must(e.db.Get(ctx, "CL-003", "client_id")); c.Preferences.SpecialNeeds != "=HYPERLINK(\"http://x\")" {
		t.Errorf("read back %q", c.Preferences.SpecialNeeds)
	}
}
