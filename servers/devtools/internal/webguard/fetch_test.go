package webguard

import (
	"context"
	"fmt"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

const samplePage = `<!doctype html>
<html><head><title>Sample   Page</title>
<style>body { color: red } .x { display: none }</style>
<script>var token = "SCRIPT-SECRET";</script>
<link rel="stylesheet" href="/s.css"><meta name="description" content="META-TEXT">
</head><body>
<noscript>NOSCRIPT-TEXT</noscript>
<iframe src="/frame">IFRAME-TEXT</iframe>
<template><p>TEMPLATE-TEXT</p></template>
<svg><text>SVG-TEXT</text></svg>
<h1>Main heading</h1>
<p>Intro with a <a href="docs/guide.html">relative link</a>, a <a href="/root">root link</a>
and an <a href="https://other.example/x">absolute one</a>.</p>
<h2>Lists</h2>
<ul><li>first item</li><li>second <b>bold</b> item
  <ol start="3"><li>three</li><li>four</li></ol></li></ul>
<table><tr><th>name</th><th>value</th></tr><tr><td>a</td><td>1</td></tr></table>
<pre>code  line 1
  line 2</pre>
<p>line<br>break <img src="img/pic.png" alt="a picture"></p>
<form><input value="INPUT-TEXT"><textarea>TEXTAREA-TEXT</textarea><button>BUTTON-TEXT</button>
<select><option>OPTION-TEXT</option></select></form>
<script>document.write("SCRIPT-TEXT")</script>
</body></html>`

var droppedTexts = []string{"SCRIPT-SECRET", "SCRIPT-TEXT", "color: red", "NOSCRIPT-TEXT", "IFRAME-TEXT", "TEMPLATE-TEXT",
	"SVG-TEXT", "META-TEXT", "INPUT-TEXT", "TEXTAREA-TEXT", "BUTTON-TEXT", "OPTION-TEXT", "<p>", "<a "}

func pageServer(t testing.TB) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/dir/page.html", typed("text/html; charset=utf-8", samplePage))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchMarkdown(t *testing.T) {
	srv := pageServer(t)
	c := newTestClient(t, Config{})
	p, err := c.Fetch(context.Background(), FetchRequest{URL: srv.URL + "/dir/page.html"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != FormatMarkdown || p.Title != "Sample Page" || p.ContentType != "text/html" || p.Status != 200 ||
		p.Size != int64(len(samplePage)) || p.BodyTruncated || p.Truncated || p.StartIndex != 0 ||
		p.Length != p.TotalLength || p.NextStartIndex != 0 || p.SizeCap != 10<<20 {
		t.Errorf("page = %+v", p)
	}
	for _, want := range []string{
		"# Main heading",
		"## Lists",
		"[relative link](" + srv.URL + "/dir/docs/guide.html)",
		"[root link](" + srv.URL + "/root)",
		"[absolute one](https://other.example/x)",
		"- first item",
		"- second **bold** item",
		"3. three",
		"4. four",
		"| name | value |",
		"code  line 1\n  line 2",
		"![a picture](" + srv.URL + "/dir/img/pic.png)",
	} {
		if !strings.Contains(p.Content, want) {
			t.Errorf("markdown lacks %q:\n%s", want, p.Content)
		}
	}
	for _, bad := range droppedTexts {
		if strings.Contains(p.Content, bad) {
			t.Errorf("markdown keeps %q:\n%s", bad, p.Content)
		}
	}
}

func TestFetchText(t *testing.T) {
	srv := pageServer(t)
	c := newTestClient(t, Config{})
	p, err := c.Fetch(context.Background(), FetchRequest{URL: srv.URL + "/dir/page.html", Format: "text"})
	if err != nil {
		t.Fatal(err)
	}
	want := `Main heading

Intro with a relative link, a root link and an absolute one.

Lists

- first item
- second bold item
  3. three
  4. four

name | value
a | 1

code  line 1
  line 2

line
break a picture`
	if p.Content != want {
		t.Errorf("text =\n%s\n--- want\n%s", p.Content, want)
	}
	if p.Format != FormatText || p.Title != "Sample Page" {
		t.Errorf("format %q title %q", p.Format, p.Title)
	}
}

func TestFetchHTML(t *testing.T) {
	srv := pageServer(t)
	c := newTestClient(t, Config{})
	p, err := c.Fetch(context.Background(), FetchRequest{URL: srv.URL + "/dir/page.html", Format: "HTML"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != FormatHTML || !strings.Contains(p.Content, `<a href="docs/guide.html">relative link</a>`) {
		t.Errorf("html = %s", p.Content)
	}
}

func TestFetchBaseHref(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><head><base href="https://cdn.example/assets/"></head><body><a href="x.html">x</a>`+
			`<a href="javascript:alert(1)">j</a></body></html>`)
	}))
	defer srv.Close()
	c := newTestClient(t, Config{})
	p, err := c.Fetch(context.Background(), FetchRequest{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Content, "[x](https://cdn.example/assets/x.html)") {
		t.Errorf("base href ignored: %s", p.Content)
	}
	if p.ContentType != "text/html" {
		t.Errorf("sniffed type = %q", p.ContentType)
	}
}

func TestFetchNonHTML(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/plain", typed("text/plain", "<b>not html</b>\nline 2"))
	mux.HandleFunc("/json", typed("application/json", `{"a": [1, 2]}`))
	mux.HandleFunc("/vendor", typed("application/vnd.acme.thing", "looks like text"))
	mux.HandleFunc("/latin1", typed("text/plain; charset=iso-8859-1", "na\xefve"))
	mux.HandleFunc("/latin1-html", typed("text/html", "<html><head><meta charset=\"windows-1252\"></head><body><p>caf\xe9</p></body></html>"))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := newTestClient(t, Config{})
	tests := []struct{ path, format, content, ctype string }{
		{"/plain", FormatRaw, "<b>not html</b>\nline 2", "text/plain"},
		{"/json", FormatRaw, `{"a": [1, 2]}`, "application/json"},
		{"/vendor", FormatRaw, "looks like text", "application/vnd.acme.thing"},
		{"/latin1", FormatRaw, "naïve", "text/plain"},
		{"/latin1-html", FormatMarkdown, "café", "text/html"},
	}
	for _, tc := range tests {
		p, err := c.Fetch(context.Background(), FetchRequest{URL: srv.URL + tc.path})
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if p.Format != tc.format || p.Content != tc.content || p.ContentType != tc.ctype {
			t.Errorf("%s: format %q content %q type %q", tc.path, p.Format, p.Content, p.ContentType)
		}
	}
}

func TestFetchRefusesBinary(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d, 'I', 'H', 'D', 'R'}
	mux := http.NewServeMux()
	mux.HandleFunc("/png", typed("image/png", string(png)))
	mux.HandleFunc("/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		w.Write(png)
	})
	mux.HandleFunc("/vendor-binary", typed("application/vnd.acme.blob", "\x00\x01\x02\xff"))
	mux.HandleFunc("/pdf", typed("application/pdf", "%PDF-1.7"))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := newTestClient(t, Config{})
	for path, mt := range map[string]string{"/png": "image/png", "/untyped": "image/png", "/vendor-binary": "application/vnd.acme.blob", "/pdf": "application/pdf"} {
		_, err := c.Fetch(context.Background(), FetchRequest{URL: srv.URL + path})
		e := wantCode(t, err, mcperr.Validation, "the URL serves "+mt+", which is not a web page or text; use web_request")
		if e.Field != "url" || e.Expected != "a URL serving an HTML page or text" {
			t.Errorf("%s: field %q expected %q", path, e.Field, e.Expected)
		}
	}
}

func TestFetchNon2xx(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(599)
		}
	}))
	defer srv.Close()
	c := newTestClient(t, Config{})
	host := strings.TrimPrefix(srv.URL, "http://")
	_, err := c.Fetch(context.Background(), FetchRequest{URL: srv.URL + "/missing"})
	if e := wantCode(t, err, mcperr.Upstream, host+" answered HTTP 404 Not Found"); !e.Final {
		t.Error("a 404 should not invite a retry")
	}
	_, err = c.Fetch(context.Background(), FetchRequest{URL: srv.URL + "/down"})
	if e := wantCode(t, err, mcperr.Upstream, "answered HTTP 503 Service Unavailable"); e.Final {
		t.Error("a 503 may be retried")
	}
	_, err = c.Fetch(context.Background(), FetchRequest{URL: srv.URL + "/odd"})
	wantCode(t, err, mcperr.Upstream, "answered HTTP 599")
}

func TestFetchInvalidArguments(t *testing.T) {
	c := newTestClient(t, Config{})
	tests := []struct {
		req   FetchRequest
		field string
	}{
		{FetchRequest{URL: "http://example.com", Format: "pdf"}, "format"},
		{FetchRequest{URL: "http://example.com", MaxLength: -1}, "max_length"},
		{FetchRequest{URL: "http://example.com", MaxLength: MaxMaxLength + 1}, "max_length"},
		{FetchRequest{URL: "http://example.com", StartIndex: -1}, "start_index"},
		{FetchRequest{URL: "gopher://example.com"}, "url"},
	}
	for _, tc := range tests {
		_, err := c.Fetch(context.Background(), tc.req)
		if e := wantCode(t, err, mcperr.Validation, ""); e.Field != tc.field {
			t.Errorf("%+v: field %q, want %q", tc.req, e.Field, tc.field)
		}
	}
}

// TestFetchPaging walks a page of multi-byte characters window by window and
// checks that the windows are cut on characters and add up to the whole.
func TestFetchPaging(t *testing.T) {
	text := strings.Repeat("héllo wörld — 日本語テキスト 🙂 ", 40)
	srv := httptest.NewServer(typed("text/plain; charset=utf-8", text))
	defer srv.Close()
	c := newTestClient(t, Config{})
	total := utf8.RuneCountInString(text)
	var got strings.Builder
	start, windows := 0, 0
	for {
		p, err := c.Fetch(context.Background(), FetchRequest{URL: srv.URL, MaxLength: 37, StartIndex: start})
		if err != nil {
			t.Fatal(err)
		}
		windows++
		if !utf8.ValidString(p.Content) {
			t.Fatalf("window at %d is not valid UTF-8", start)
		}
		if p.TotalLength != total || p.StartIndex != start || p.Length != utf8.RuneCountInString(p.Content) {
			t.Fatalf("window %+v", p)
		}
		got.WriteString(p.Content)
		if !p.Truncated {
			if p.NextStartIndex != 0 || start+p.Length != total {
				t.Fatalf("last window %+v", p)
			}
			break
		}
		if p.Length != 37 || p.NextStartIndex != start+37 {
			t.Fatalf("window length %d next %d", p.Length, p.NextStartIndex)
		}
		start = p.NextStartIndex
	}
	if got.String() != text {
		t.Fatal("the windows do not add up to the page")
	}
	if want := (total + 36) / 37; windows != want {
		t.Errorf("%d windows, want %d", windows, want)
	}
	_, err := c.Fetch(context.Background(), FetchRequest{URL: srv.URL, StartIndex: total})
	wantCode(t, err, mcperr.Validation, fmt.Sprintf("start_index %d is past the end of the content (%d characters)", total, total))
}

func TestFetchEmptyPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
	}))
	defer srv.Close()
	c := newTestClient(t, Config{})
	p, err := c.Fetch(context.Background(), FetchRequest{URL: srv.URL})
	if err != nil || p.Content != "" || p.Truncated || p.TotalLength != 0 {
		t.Fatalf("%+v %v", p, err)
	}
}

func TestFetchBodyCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>")
		for i := range 2000 {
			fmt.Fprintf(w, "<p>paragraph %d</p>", i)
		}
	}))
	defer srv.Close()
	c := newTestClient(t, Config{MaxFetchBytes: 1000})
	p, err := c.Fetch(context.Background(), FetchRequest{URL: srv.URL, Format: "text"})
	if err != nil {
		t.Fatal(err)
	}
	if !p.BodyTruncated || p.Size != 1000 || p.SizeCap != 1000 || !strings.HasPrefix(p.Content, "paragraph 0") {
		t.Fatalf("page = %+v", p)
	}
}

func TestTrimPartialRune(t *testing.T) {
	tests := []struct{ in, out string }{
		{"", ""},
		{"abc", "abc"},
		{"é", "é"},
		{"a\xc3", "a"},
		{"a\xe6\x97", "a"},
		{"a\xf0\x9f\x99", "a"},
		{"a\xf0\x9f\x99\x82", "a\xf0\x9f\x99\x82"},
		{"\x80\x80\x80", "\x80\x80\x80"}, // not a cut rune, just invalid: left for the validity check
	}
	for _, tc := range tests {
		if got := string(trimPartialRune([]byte(tc.in))); got != tc.out {
			t.Errorf("trimPartialRune(%q) = %q, want %q", tc.in, got, tc.out)
		}
	}
}

func TestTypes(t *testing.T) {
	for _, mt := range []string{"text/html", "text/csv", "application/json", "application/ld+json", "application/atom+xml", "image/svg+xml", "application/x-ndjson"} {
		if !textual(mt) || binaryType(mt) {
			t.Errorf("%s should be text", mt)
		}
	}
	for _, mt := range []string{"image/png", "audio/mpeg", "video/mp4", "font/woff2", "application/octet-stream", "application/pdf", "application/zip",
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document"} {
		if textual(mt) || !binaryType(mt) {
			t.Errorf("%s should be binary", mt)
		}
	}
	if binaryType("application/vnd.acme.thing") || binaryType("") {
		t.Error("unknown types are judged by their bytes")
	}
}
