package tools

import (
	"strings"
	"testing"
)

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		mime       string
		text       bool
	}{
		{"notes.txt", "plain words\n", "text/plain", true},
		{"empty", "", "text/plain", true},
		{"README.md", "# Title\n", "text/markdown", true},
		{"main.go", "package main\n", "text/x-go", true},
		{"data.json", `{"a":1}`, "application/json", true},
		{"rows.jsonl", "{}\n{}\n", "application/jsonl", true},
		{"conf.yaml", "a: 1\n", "application/yaml", true},
		{"no-extension", "just text", "text/plain", true},
		{"UPPER.JSON", `[]`, "application/json", true},
		// The content wins over a name that disagrees.
		{"page.txt", "<!DOCTYPE html><html></html>", "text/html", true},
		{"image.txt", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png", false},
		{"doc.json", "%PDF-1.7\n", "application/pdf", false},
		// Generic XML takes the name's more precise type.
		{"icon.svg", `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>`, "image/svg+xml", true},
		{"feed.xml", `<?xml version="1.0"?><rss/>`, "application/xml", true},
		{"unknown.data", `<?xml version="1.0"?><x/>`, "text/xml", true},
		// Binary: blob, whatever the name says it should be.
		{"blob.bin", "\x00\x01\x02", "application/octet-stream", false},
		{"fake.txt", "\x00\x01\x02", "application/octet-stream", false},
		{"module.wasm", "\x00asm\x01\x00\x00\x00", "application/wasm", false},
		{"app.db", "SQLite format 3\x00", "application/vnd.sqlite3", false},
		{"latin1.txt", "caf\xe9 au lait", "application/octet-stream", false},
		{"latin1.xml", "<?xml version=\"1.0\"?><a>caf\xe9</a>", "text/xml", false},
		// UTF-8 with terminal escapes: the sniffer calls it binary, it is text.
		{"build.log", "\x1b[31mred\x1b[0m\n", "text/plain", true},
		{"colors", "\x1b[31mred\x1b[0m\n", "text/plain", true},
		// A NUL past the sniffed head still makes it binary.
		{"long.txt", strings.Repeat("a", 600) + "\x00", "application/octet-stream", false},
	} {
		mime, text := sniff(tc.name, []byte(tc.data))
		if mime != tc.mime || text != tc.text {
			t.Errorf("sniff(%s) = %s, %v; want %s, %v", tc.name, mime, text, tc.mime, tc.text)
		}
	}
}

func TestFileURI(t *testing.T) {
	for p, want := range map[string]string{
		"/a/b.txt":     "file:///a/b.txt",
		"/a b/c#d?.go": "file:///a%20b/c%23d%3F.go",
		"/ünï":         "file:///%C3%BCn%C3%AF",
	} {
		if got := FileURI(p); got != want {
			t.Errorf("FileURI(%q) = %q, want %q", p, got, want)
		}
	}
}
