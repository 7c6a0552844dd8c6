package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/mock"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

var update = flag.Bool("update", false, "rewrite testdata/schemas/*.json from the current tool definitions")

const schemaDir = "testdata/schemas"

// schemaFamilies are the tool families whose definitions are snapshotted.
// Definitions do not depend on the backend; the simulated one is used. To
// snapshot a change, run
//
//	go test ./servers/avinode/internal/tools/ -run 'TestToolSchemas|TestToolAnnotations' -update
//
// and review the testdata/schemas/<tool>.json diff before committing.
var schemaFamilies = []struct {
	name  string
	tools func(d tools.Deps) []kit.Tool
}{
	{"trips", tools.TripTools},
	{"quotes", tools.QuoteTools},
	{"messages", tools.MessageTools},
	{"airports", tools.AirportTools},
	{"empty legs", tools.EmptyLegTools},
	{"webhooks", tools.WebhookTools},
}

func schemaDeps(t *testing.T) tools.Deps {
	st := openStore(t, filepath.Join(t.TempDir(), "avinode.db"), kit.NewNotifier())
	return tools.Deps{Store: st, Market: mock.New(st, mock.Config{})}
}

// listedTools returns each tool's definition exactly as tools/list sends it
// on the wire, by tool name.
func listedTools(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	var all []kit.Tool
	d := schemaDeps(t)
	for _, f := range schemaFamilies {
		all = append(all, f.tools(d)...)
	}
	if len(all) != len(tools.All(d)) {
		t.Fatalf("the families hold %d tools, All %d: add the new family here", len(all), len(tools.All(d)))
	}
	s, err := kit.New(kit.Info{Name: "avinode"}, all, kit.Options{})
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
	if msg.Result.NextCursor != "" || len(msg.Result.Tools) != len(all) {
		t.Fatalf("tools/list gave %d tools (next cursor %q), want all %d: %s", len(msg.Result.Tools), msg.Result.NextCursor, len(all), raw)
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

// canonical pretty-prints JSON with sorted keys and numbers as written, so
// snapshots are stable and diffs readable.
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

// TestToolSchemas compares every tool's definition (name, title, description,
// inputSchema, annotations) with its snapshot in testdata/schemas. A change
// to what clients see must be deliberate: rerun with -update and review the
// diff.
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
	// A snapshot without a tool is a renamed or removed tool: clients lost it.
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

// TestToolAnnotations: every tool states all four hints explicitly (mcp-go's
// defaults would call a tool destructive and open-world), has a title, and a
// read-only tool never claims to be destructive.
func TestToolAnnotations(t *testing.T) {
	for name, raw := range listedTools(t) {
		t.Run(name, func(t *testing.T) {
			var def struct {
				Name        string                     `json:"name"`
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
				v, ok := def.Annotations[h]
				var b bool
				if !ok || json.Unmarshal(v, &b) != nil {
					t.Errorf("annotation %s is not set to a boolean: %s", h, v)
				}
				hints[h] = b
			}
			if hints["readOnlyHint"] && (hints["destructiveHint"] || !hints["idempotentHint"]) {
				t.Errorf("read-only tool with destructiveHint=%v idempotentHint=%v", hints["destructiveHint"], hints["idempotentHint"])
			}
			if def.Title == "" || string(def.Annotations["title"]) != jsonString(def.Title) {
				t.Errorf("title %q, annotations.title %s", def.Title, def.Annotations["title"])
			}
			if def.Description == "" || def.InputSchema["type"] != "object" || def.InputSchema["additionalProperties"] != false {
				t.Errorf("description %q, inputSchema type %v additionalProperties %v", def.Description, def.InputSchema["type"], def.InputSchema["additionalProperties"])
			}
			readOnly := slices.Contains([]string{"get_trip", "get_rfq", "get_quotes", "get_messages", "search_airports",
				"search_empty_legs", "list_watches", "list_webhook_events"}, name)
			if hints["readOnlyHint"] != readOnly {
				t.Errorf("readOnlyHint = %v, want %v", hints["readOnlyHint"], readOnly)
			}
			destructive := name == "cancel_trip" || name == "delete_watch"
			if hints["destructiveHint"] != destructive {
				t.Errorf("destructiveHint = %v, want %v", hints["destructiveHint"], destructive)
			}
			// The airport table and the webhook event queue are local;
			// everything else reaches the marketplace.
			local := name == "search_airports" || name == "list_webhook_events" || name == "requeue_webhook_event"
			if hints["openWorldHint"] == local {
				t.Errorf("openWorldHint = %v", hints["openWorldHint"])
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
