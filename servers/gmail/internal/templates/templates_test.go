package templates_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/templates"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

func TestOverrideDirectory(t *testing.T) {
	set, err := templates.Load(filepath.Join("..", "..", "..", "..", "configs", "gmail", "templates"))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := set.Get("follow_up")
	if !strings.Contains(f.Source, "configs") || !f.Variables["agent_name"].Required || len(set.Names()) != 4 {
		t.Fatalf("%+v %v", f, set.Names())
	}
	if _, err := f.Render(map[string]any{"client_name": "A", "message": "m"}); err == nil || !strings.Contains(err.Error(), "agent_name") {
		t.Errorf("the override's own requirement: %v", err)
	}
	r, err := f.Render(map[string]any{"client_name": "A", "message": "One.\n\nTwo.", "agent_name": "Alex", "reference": "BK-1"})
	if err != nil || r.Subject != "About BK-1" || !strings.Contains(r.HTML, "Georgia") || !strings.Contains(r.HTML, "<p>Two.</p>") ||
		!strings.Contains(r.Text, "Alex") {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestLoadErrors(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"bad name":          {"Bad-Name.json": `{"subject":"s","variables":{}}`, "Bad-Name.txt": "x"},
		"unknown key":       {"a.json": `{"subject":"s","variabels":{}}`, "a.txt": "x"},
		"bad type":          {"a.json": `{"subject":"s","variables":{"x":{"type":"text"}}}`, "a.txt": "x"},
		"array of nothing":  {"a.json": `{"subject":"s","variables":{"x":{"type":"array"}}}`, "a.txt": "x"},
		"no body":           {"a.json": `{"subject":"s","variables":{}}`},
		"broken html":       {"a.json": `{"subject":"s","variables":{}}`, "a.html": "{{if}}"},
		"broken text":       {"a.json": `{"subject":"s","variables":{}}`, "a.txt": "{{.x"},
		"bad variable name": {"a.json": `{"subject":"s","variables":{"X-1":{"type":"string"}}}`, "a.txt": "x"},
	} {
		dir := t.TempDir()
		for n, c := range files {
			_ = os.WriteFile(filepath.Join(dir, n), []byte(c), 0o600)
		}
		if _, err := templates.Load(dir); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	if _, err := templates.Load(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing directory loaded")
	}
	// A new template, with an undeclared variable in its body: the render
	// fails as the operator's fault, not the caller's.
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "alert.json"), []byte(`{"description":"d","subject":"Alert {{.level}}","variables":{"level":{"type":"string","required":true},"ok":{"type":"boolean"},"n":{"type":"integer","minimum":1},"tags":{"type":"array","items":{"type":"string"}},"meta":{"type":"object","fields":{"k":{"type":"string"}}}}}`), 0o600)
	_ = os.WriteFile(filepath.Join(dir, "alert.txt"), []byte(`{{.level}} {{.ok}} {{.n}} {{len .tags}} {{.meta.k}} {{.undeclared}}`), 0o600)
	set, err := templates.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := set.Get("alert")
	if _, err := a.Render(map[string]any{"level": "high"}); err == nil || !strings.Contains(err.Error(), "INTERNAL_ERROR") {
		t.Errorf("undeclared: %v", err)
	}
	for field, v := range map[string]any{"ok": "yes", "n": 0.0, "tags": "a", "meta": 1, "level": ""} {
		data := map[string]any{"level": "high", field: v}
		if _, err := a.Render(data); err == nil || !strings.Contains(err.Error(), "template_data."+field) {
			t.Errorf("%s=%v: %v", field, v, err)
		}
	}
	if _, err := a.Render(map[string]any{"level": "a\x00b"}); err == nil || !strings.Contains(err.Error(), "subject") {
		t.Errorf("a control character in the subject: %v", err)
	}
}

func TestDataFromPairs(t *testing.T) {
	tmpl := &templates.Template{Name: "t", Variables: map[string]*templates.Var{
		"name": {Type: "string", Required: true}, "n": {Type: "integer"}, "ok": {Type: "boolean"}, "list": {Type: "array", Items: &templates.Var{Type: "number"}},
	}}
	data, err := tmpl.Data([]templates.Pair{pair("name", "A"), pair("n", " 4 "), pair("ok", "true"), pair("list", "[1, 2.5]")}, "template_data")
	if err != nil {
		t.Fatal(err)
	}
	if data["name"] != "A" || data["n"] != 4.0 || data["ok"] != true || len(data["list"].([]any)) != 2 {
		t.Errorf("%#v", data)
	}
	if data, err := tmpl.Data([]templates.Pair{pair("name", "A"), pair("n", "")}, "template_data"); err != nil || len(data) != 1 {
		t.Errorf("an empty value leaves the variable out: %v %v", data, err)
	}
	for _, tc := range []struct {
		pairs []templates.Pair
		field string
	}{
		{[]templates.Pair{pair("nme", "A")}, "template_data[0].name"},
		{[]templates.Pair{pair("name", "A"), pair("name", "B")}, "template_data[1].name"},
		{[]templates.Pair{pair("n", "four")}, "template_data[0].value"},
		{[]templates.Pair{pair("ok", "yes please")}, "template_data[0].value"},
		{[]templates.Pair{pair("list", "[1,")}, "template_data[0].value"},
		{[]templates.Pair{pair("list", "[1] [2]")}, "template_data[0].value"},
	} {
		_, err := tmpl.Data(tc.pairs, "template_data")
		var e *mcperr.Error
		if !errors.As(err, &e) || e.Field != tc.field {
			t.Errorf("%v: %v, want a VALIDATION_ERROR naming %s", tc.pairs, err, tc.field)
		}
	}
}

func pair(name, value string) templates.Pair { return templates.Pair{Name: name, Value: value} }
