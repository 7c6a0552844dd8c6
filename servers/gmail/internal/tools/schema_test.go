package tools_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

var update = flag.Bool("update", false, "rewrite testdata/schemas/*.json from the current tool definitions")

const schemaDir = "testdata/schemas"

// listedTools returns each tool's definition exactly as tools/list sends it
// on the wire, by tool name, for the local backend (the defaults: no
// credentials, read_sheet's default cap).
func listedTools(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	all := tools.All(localServer(t).deps)
	s, err := kit.New(kit.Info{Name: "gmail"}, all, kit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw := s.Handle(ctx, "", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	var msg struct {
		Result struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.Fatalf("tools/list response %s: %v", raw, err)
	}
	if msg.Result.NextCursor != "" || len(msg.Result.Tools) != len(all) {
		t.Fatalf("tools/list gave %d tools, want all %d: %s", len(msg.Result.Tools), len(all), raw)
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

// canonical pretty-prints JSON with sorted keys and numbers as written.
func canonical(t *testing.T, raw json.RawMessage) []byte {
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

// TestToolSchemas compares every tool's definition (name, title,
// description, inputSchema, annotations) with its snapshot in
// testdata/schemas, so a change to what clients see is deliberate: rerun
// with -update and review the diff.
func TestToolSchemas(t *testing.T) {
	listed := listedTools(t)
	if *update {
		if err := os.MkdirAll(schemaDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, raw := range listed {
		t.Run(name, func(t *testing.T) {
			got := canonical(t, raw)
			file := filepath.Join(schemaDir, name+".json")
			if *update {
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
	files, err := filepath.Glob(filepath.Join(schemaDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if _, ok := listed[name]; ok {
			continue
		}
		if *update {
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

// TestToolAnnotations: every tool states all four hints, has a title and a
// closed object schema; the effects are what the tools do.
func TestToolAnnotations(t *testing.T) {
	effects := map[string][3]bool{ // readOnly, destructive, idempotent
		"send_email": {false, false, false}, "send_template_email": {false, false, false}, "create_draft": {false, false, false},
		"get_email": {true, false, true}, "get_thread_history": {true, false, true}, "search_emails": {true, false, true},
		"get_attachment": {false, false, true}, "list_templates": {true, false, true},
	}
	for name, raw := range listedTools(t) {
		t.Run(name, func(t *testing.T) {
			var def struct {
				Title       string                     `json:"title"`
				Description string                     `json:"description"`
				InputSchema map[string]any             `json:"inputSchema"`
				Annotations map[string]json.RawMessage `json:"annotations"`
			}
			if err := json.Unmarshal(raw, &def); err != nil {
				t.Fatal(err)
			}
			hints := map[string]bool{}
			for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
				var b bool
				if v, ok := def.Annotations[h]; !ok || json.Unmarshal(v, &b) != nil {
					t.Errorf("annotation %s is not set to a boolean", h)
				}
				hints[h] = b
			}
			want, ok := effects[name]
			if !ok {
				t.Fatalf("no expected effect for %s", name)
			}
			if hints["readOnlyHint"] != want[0] || hints["destructiveHint"] != want[1] || hints["idempotentHint"] != want[2] || hints["openWorldHint"] {
				t.Errorf("hints %v, want readOnly/destructive/idempotent %v and not open world (local mailbox)", hints, want)
			}
			if def.Title == "" || def.Description == "" || def.InputSchema["type"] != "object" || def.InputSchema["additionalProperties"] != false {
				t.Errorf("title %q, description %q, schema %v", def.Title, def.Description, def.InputSchema)
			}
		})
	}
	for _, tool := range tools.All(gmailServer(t).deps) {
		if a := tool.Annotations(); (a.OpenWorldHint == nil || !*a.OpenWorldHint) && tool.Name != "list_templates" {
			t.Errorf("%s: not open world on Gmail", tool.Name)
		}
	}
}
