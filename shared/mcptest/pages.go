package mcptest

import (
	"maps"
	"testing"
)

// Pages reads a paged tool to the end: it calls tool with args, then
// again with args[key] set to the continuation the last page gave — next
// returns it, and false on the last page — and returns every page in
// order. Every result must fit budget (see Sized). A tool still giving
// pages after limit calls fails the test: its continuation does not move
// on.
func Pages[P any](t testing.TB, c *Client, budget int, tool string, args map[string]any, key string, next func(P) (any, bool), limit int) []P {
	t.Helper()
	var pages []P
	call := args
	for {
		if len(pages) == limit {
			t.Fatalf("%s: still more pages after %d calls", tool, limit)
		}
		var p P
		Sized(t, c, budget, tool, call, &p)
		pages = append(pages, p)
		v, more := next(p)
		if !more {
			return pages
		}
		call = make(map[string]any, len(args)+1)
		maps.Copy(call, args)
		call[key] = v
	}
}

// Offset is the continuation of a page that gives a next offset (nil on
// the last page), for Pages.
func Offset(next *int) (any, bool) {
	if next == nil {
		return nil, false
	}
	return *next, true
}

// Token is the continuation of a page that gives a next cursor or page
// token ("" on the last page), for Pages.
func Token(next string) (any, bool) { return next, next != "" }
