package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

// ListedTools returns each tool's definition exactly as tools/list sends it
// on the wire, by tool name.
func ListedTools(t testing.TB, name string, tools []kit.Tool) map[string]json.RawMessage {
	t.Helper()
	s, err := kit.New(kit.Info{Name: name}, tools, kit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw := s.Handle(context.Background(), "", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	var msg struct {
		Result struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.Fatalf("tools/list response %s: %v", raw, err)
	}
	if msg.Result.NextCursor != "" || len(msg.Result.Tools) != len(tools) {
		t.Fatalf("tools/list gave %d tools, want all %d: %s", len(msg.Result.Tools), len(tools), raw)
	}
	out := map[string]json.RawMessage{}
	for _, tool := range msg.Result.Tools {
		var head struct{ Name string }
		if err := json.Unmarshal(tool, &head); err != nil || head.Name == "" {
			t.Fatalf("tool without a name: %s", tool)
		}
		out[head.Name] = tool
	}
	return out
}

// Canonical pretty-prints JSON with sorted keys and numbers as written, so
// snapshots are stable and their diffs readable.
func Canonical(t testing.TB, raw json.RawMessage) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// CheckSchemas compares every tool's definition as clients see it (name,
// title, description, input schema, annotations) with its snapshot
// dir/<tool>.json, so a change to what clients see is always deliberate.
// With update it rewrites the snapshots (and removes those of tools that
// are gone) instead; review the diff.
func CheckSchemas(t *testing.T, listed map[string]json.RawMessage, dir string, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, raw := range listed {
		t.Run(name, func(t *testing.T) {
			got := Canonical(t, raw)
			file := filepath.Join(dir, name+".json")
			if update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("no snapshot for %s (run with -update to create it): %v", name, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s changed from its snapshot %s (rerun with -update if intended):\n%s", name, file, firstDiff(string(want), string(got)))
			}
		})
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if _, ok := listed[name]; ok {
			continue
		}
		if update {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("snapshot %s has no tool (removed or renamed? rerun with -update if intended)", f)
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  snapshot: " + w + "\n  now:      " + g
		}
	}
	return "(no line differs)"
}
