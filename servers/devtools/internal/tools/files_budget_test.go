package tools_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/fsroot"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// budget is the smallest result budget the kit allows: files of a few
// hundred KB are then many pages.
const budget = mcptest.MinBudget

// readPage is one file_read page, which must fit the budget.
func readPage(t *testing.T, e *filesEnv, args map[string]any) readOut {
	t.Helper()
	res := e.c.Call("file_read", args)
	var out readOut
	ok(t, res, &out)
	if n := mcptest.ResultSize(t, res); n > budget {
		t.Fatalf("file_read %v: the page is %d bytes, over the %d budget", args, n, budget)
	}
	return out
}

// TestFileReadPagesWithinBudget: a file far larger than the result budget
// is read page by page, each page within the budget, and the pages join to
// the file, whichever way the agent goes on.
func TestFileReadPagesWithinBudget(t *testing.T) {
	t.Parallel()
	e := newFilesEnvOpts(t, fsroot.DefaultLimits(), kit.Options{Limits: kit.Limits{MaxResultBytes: budget}})
	var b strings.Builder
	for i := 1; b.Len() < 200<<10; i++ {
		// Quotes and tabs cost more than one byte each once escaped twice.
		fmt.Fprintf(&b, "line %d\t\"quoted\" <tag> & more text\n", i)
	}
	body := b.String()
	must(t, os.WriteFile(e.path("big.txt"), []byte(body), 0o644))
	long := strings.Repeat("ä\"", 30<<10) // one line, far over the budget
	must(t, os.WriteFile(e.path("long.txt"), []byte(long), 0o644))

	t.Run("lines", func(t *testing.T) {
		var got strings.Builder
		args := map[string]any{"path": "big.txt"}
		for pages := 0; ; pages++ {
			out := readPage(t, e, args)
			if int64(got.Len()) != out.ByteStart {
				t.Fatalf("page %d starts at byte %d, want %d", pages, out.ByteStart, got.Len())
			}
			got.WriteString(out.Content)
			if !out.Truncated {
				if pages < 10 {
					t.Errorf("only %d pages", pages+1)
				}
				break
			}
			if out.NextOffset == nil || *out.NextOffset != out.Lines.End+1 || !strings.Contains(out.Rest, fmt.Sprintf("offset %d", *out.NextOffset)) {
				t.Fatalf("truncated page without a next offset: %+v", out)
			}
			args = map[string]any{"path": "big.txt", "offset": *out.NextOffset}
		}
		if got.String() != body {
			t.Error("the pages do not join to the file")
		}
	})
	t.Run("one long line goes on by bytes", func(t *testing.T) {
		var got strings.Builder
		args := map[string]any{"path": "long.txt"}
		for {
			out := readPage(t, e, args)
			got.WriteString(out.Content)
			if !out.Truncated {
				break
			}
			if out.NextOffset != nil || out.NextByteOffset == nil || !strings.Contains(out.Rest, "byte_offset") {
				t.Fatalf("a cut line must go on by byte offset: %+v", out)
			}
			args = map[string]any{"path": "long.txt", "byte_offset": *out.NextByteOffset}
		}
		if got.String() != long {
			t.Error("the pages do not join to the file")
		}
	})
	t.Run("base64 by bytes", func(t *testing.T) {
		var got []byte
		args := map[string]any{"path": "big.txt", "encoding": "base64"}
		for {
			out := readPage(t, e, args)
			chunk, err := base64.StdEncoding.DecodeString(out.Content)
			must(t, err)
			got = append(got, chunk...)
			if !out.Truncated {
				break
			}
			args = map[string]any{"path": "big.txt", "encoding": "base64", "byte_offset": *out.NextByteOffset}
		}
		if string(got) != body {
			t.Error("the pages do not join to the file")
		}
	})
	t.Run("a tail keeps its end", func(t *testing.T) {
		res := e.c.Call("file_read", map[string]any{"path": "big.txt", "tail": 5000})
		var out readOut
		ok(t, res, &out)
		if n := mcptest.ResultSize(t, res); n > budget || !out.Truncated || !strings.HasSuffix(body, out.Content) ||
			out.Lines.End != out.Lines.Total || out.Lines.Start <= out.Lines.Total-5000 || !strings.Contains(out.Rest, "before line") {
			t.Errorf("%d bytes, %+v, truncated=%v rest %q", n, out.Lines, out.Truncated, out.Rest)
		}
		if !strings.HasPrefix(out.Content, "line ") {
			t.Errorf("the tail starts inside a line: %.40q", out.Content)
		}
		res = e.c.Call("file_read", map[string]any{"path": "long.txt", "tail": 1})
		ok(t, res, &out)
		if n := mcptest.ResultSize(t, res); n > budget || !out.Truncated || !strings.HasSuffix(long, out.Content) || out.Content == "" {
			t.Errorf("tail of one long line: %d bytes, truncated=%v", n, out.Truncated)
		}
	})
	t.Run("lists fit", func(t *testing.T) {
		must(t, os.Mkdir(e.path("many"), 0o755))
		for i := range 400 {
			must(t, os.WriteFile(e.path(fmt.Sprintf("many/file-with-a-long-name-%04d.txt", i)), nil, 0o644))
		}
		var list struct {
			Entries   []json.RawMessage `json:"entries"`
			Count     int               `json:"count"`
			Truncated bool              `json:"truncated"`
			Rest      string            `json:"rest"`
		}
		res := e.c.Call("file_list", map[string]any{"path": "many"})
		ok(t, res, &list)
		if n := mcptest.ResultSize(t, res); n > budget || !list.Truncated || list.Count != len(list.Entries) || list.Count == 0 || list.Count >= 400 || list.Rest == "" {
			t.Errorf("file_list: %d bytes, %d entries, truncated=%v, rest %q", n, list.Count, list.Truncated, list.Rest)
		}
		var found struct {
			Matches   []json.RawMessage `json:"matches"`
			Count     int               `json:"count"`
			Truncated bool              `json:"truncated"`
			Rest      string            `json:"rest"`
		}
		res = e.c.Call("file_search", map[string]any{"pattern": "*.txt", "path": "many"})
		ok(t, res, &found)
		if n := mcptest.ResultSize(t, res); n > budget || !found.Truncated || found.Count != len(found.Matches) || found.Count == 0 || found.Count >= 400 || found.Rest == "" {
			t.Errorf("file_search: %d bytes, %d matches, truncated=%v, rest %q", n, found.Count, found.Truncated, found.Rest)
		}
	})
}
