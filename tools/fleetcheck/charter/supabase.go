package charter

import (
	"encoding/json"
	"sort"
)

// The Supabase tools take rows, filters and function arguments as lists of
// typed items (every LLM host accepts that schema; an object open to any
// column is refused). These build them from maps, keys in name order.

// cells is one row for supabase_insert or supabase_update: {column, value}
// per key, and {column, json} with JSON text for a map or slice (a json or
// jsonb column).
func cells(m map[string]any) []any { return named("column", m) }

// params is a function's arguments for supabase_rpc.
func params(m map[string]any) []any { return named("name", m) }

// rowsData is the data of supabase_insert: one cells list per row.
func rowsData(ms ...map[string]any) []any {
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = cells(m)
	}
	return out
}

// whereEq is filters of one equality.
func whereEq(column string, v any) []any {
	return []any{map[string]any{"column": column, "op": "eq", "value": v}}
}

func named(key string, m map[string]any) []any {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]any, 0, len(m))
	for _, k := range keys {
		item := map[string]any{key: k}
		switch v := m[k].(type) {
		case map[string]any, []any, []map[string]any:
			b, _ := json.Marshal(v)
			item["json"] = string(b)
		default:
			item["value"] = v
		}
		out = append(out, item)
	}
	return out
}
