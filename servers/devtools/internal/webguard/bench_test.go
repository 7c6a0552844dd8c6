package webguard

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// page100KB is a realistic article page of about 100 KB: navigation,
// headings, paragraphs with links, lists, a table, scripts and styles.
func page100KB() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Benchmark page</title><style>body{font:14px sans-serif}</style>` +
		`<script>window.dataLayer=[];function track(){}</script></head><body><nav><ul><li><a href="/">Home</a></li><li><a href="/docs">Docs</a></li></ul></nav><main>`)
	for i := 0; b.Len() < 100<<10; i++ {
		fmt.Fprintf(&b, `<h2 id="s%d">Section %d</h2><p>This is paragraph %d with <a href="/ref/%d">a relative link</a>, `+
			`<strong>bold</strong> and <em>emphasised</em> words, and some ordinary prose to fill the line — naïve café.</p>`+
			`<ul><li>item one</li><li>item two with <code>code</code></li></ul>`+
			`<table><tr><th>k</th><th>v</th></tr><tr><td>%d</td><td>value</td></tr></table><script>track(%d)</script>`, i, i, i, i, i, i)
	}
	b.WriteString(`</main></body></html>`)
	return b.String()
}

func BenchmarkWebFetch100KB(b *testing.B) {
	page := page100KB()
	srv := httptest.NewServer(typed("text/html; charset=utf-8", page))
	defer srv.Close()
	c := newTestClient(b, Config{})
	for _, format := range []string{FormatMarkdown, FormatText} {
		b.Run(format, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := c.Fetch(context.Background(), FetchRequest{URL: srv.URL, Format: format})
				if err != nil || p.TotalLength == 0 {
					b.Fatalf("%v %+v", err, p)
				}
			}
		})
	}
}
