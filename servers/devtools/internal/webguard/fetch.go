package webguard

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// Fetch formats.
const (
	FormatMarkdown = "markdown"
	FormatText     = "text"
	FormatHTML     = "html"
	// FormatRaw is reported for a non-HTML text document (plain text, JSON,
	// XML…), returned as it is whatever format was asked.
	FormatRaw = "raw"
)

// Paging defaults for Fetch, counted in characters (runes).
const (
	DefaultMaxLength = 20000
	MaxMaxLength     = 1000000
)

// FetchRequest asks for a page.
type FetchRequest struct {
	URL string
	// Format is markdown (default), text or html.
	Format string
	// MaxLength and StartIndex select the window of the converted content,
	// in characters: content[StartIndex : StartIndex+MaxLength].
	MaxLength  int
	StartIndex int
	Timeout    time.Duration
}

// Page is a fetched, converted page window.
type Page struct {
	URL         string
	Status      int
	ContentType string
	// Size is the number of bytes downloaded; BodyTruncated says the
	// download stopped at the cap (SizeCap), so the end of the page is missing.
	Size          int64
	SizeCap       int64
	BodyTruncated bool
	Title         string
	Format        string
	Content       string
	StartIndex    int
	// Length is the number of characters in Content, TotalLength in the whole
	// converted document.
	Length      int
	TotalLength int
	// NextStartIndex is where the next window starts; 0 with Truncated false
	// when this window reached the end.
	NextStartIndex int
	Truncated      bool
	Duration       time.Duration
}

const acceptPages = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,text/*;q=0.8,*/*;q=0.1"

// Fetch downloads a page and returns a window of it as Markdown, text or
// HTML. A non-2xx status is an Upstream error naming the status; binary
// content is Unsupported.
func (c *Client) Fetch(ctx context.Context, fr FetchRequest) (*Page, error) {
	format := strings.ToLower(fr.Format)
	switch format {
	case "":
		format = FormatMarkdown
	case FormatMarkdown, FormatText, FormatHTML:
	default:
		return nil, invalid("format", "format %q is not supported; use markdown, text or html", fr.Format)
	}
	maxLen := fr.MaxLength
	switch {
	case maxLen == 0:
		maxLen = DefaultMaxLength
	case maxLen < 0 || maxLen > MaxMaxLength:
		return nil, invalid("max_length", "max_length must be between 1 and %d", MaxMaxLength)
	}
	if fr.StartIndex < 0 {
		return nil, invalid("start_index", "start_index cannot be negative")
	}
	resp, err := c.do(ctx, Request{Method: "GET", URL: fr.URL, Header: map[string]string{"Accept": acceptPages}, Timeout: fr.Timeout},
		c.cfg.MaxFetchBytes, func(r *http.Response) error {
			if r.StatusCode < 200 || r.StatusCode > 299 {
				final := r.StatusCode < 500 && r.StatusCode != http.StatusTooManyRequests && r.StatusCode != http.StatusRequestTimeout
				return upstream(final, fmt.Sprintf("%s answered HTTP %s", r.Request.URL.Host, statusText(r.StatusCode)), nil)
			}
			if mt, _ := mediaType(r.Header.Get("Content-Type")); binaryType(mt) {
				return unsupported(mt)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	p := &Page{URL: resp.URL, Status: resp.Status, Size: int64(len(resp.Body)), SizeCap: resp.Cap,
		BodyTruncated: resp.Truncated, Format: format, ContentType: resp.MediaType}
	mt := resp.MediaType
	if mt == "" {
		mt, _ = mediaType(http.DetectContentType(resp.Body))
		p.ContentType = mt
	}
	var content string
	switch {
	case isHTML(mt):
		r, err := charset.NewReader(bytes.NewReader(resp.Body), resp.Header.Get("Content-Type"))
		if err != nil {
			r = bytes.NewReader(resp.Body)
		}
		doc, err := html.Parse(r)
		if err != nil {
			return nil, upstream(false, "the page could not be parsed as HTML", err)
		}
		content, p.Title, err = c.render(ctx, doc, resp.URL, format)
		if err != nil {
			return nil, err
		}
	case textual(mt) || looksLikeText(resp.Body):
		content = decodeText(resp.Body, resp.Charset)
		p.Format = FormatRaw
	default:
		return nil, unsupported(mt)
	}
	if err := page(p, content, fr.StartIndex, maxLen); err != nil {
		return nil, err
	}
	p.Duration = resp.Duration
	return p, nil
}

func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return fmt.Sprint(code)
}

func unsupported(mt string) *Error {
	return &Error{Code: mcperr.Validation, Field: "url", Expected: "a URL serving an HTML page or text",
		Msg: fmt.Sprintf("the URL serves %s, which is not a web page or text; use web_request to download it (binary bodies come back base64-encoded)", orUnknown(mt))}
}

func orUnknown(mt string) string {
	if mt == "" {
		return "content of unknown type"
	}
	return mt
}

// page cuts the window [start, start+maxLen) out of content, in runes.
func page(p *Page, content string, start, maxLen int) error {
	total := utf8.RuneCountInString(content)
	if start > 0 && start >= total {
		return invalid("start_index", "start_index %d is past the end of the content (%d characters)", start, total)
	}
	// Walk to the byte offsets of the window's ends.
	from, to, n := len(content), len(content), 0
	for i := range content {
		if n == start {
			from = i
		}
		if n == start+maxLen {
			to = i
			break
		}
		n++
	}
	if start == 0 {
		from = 0
	}
	p.Content = content[from:to]
	p.StartIndex = start
	p.Length = utf8.RuneCountInString(p.Content)
	p.TotalLength = total
	if end := start + p.Length; end < total {
		p.NextStartIndex, p.Truncated = end, true
	}
	return nil
}

func isHTML(mt string) bool { return mt == "text/html" || mt == "application/xhtml+xml" }

var textTypes = map[string]bool{
	"application/json": true, "application/xml": true, "application/javascript": true,
	"application/ecmascript": true, "application/x-javascript": true, "application/x-ndjson": true,
	"application/yaml": true, "application/x-yaml": true, "application/toml": true,
	"application/x-www-form-urlencoded": true, "application/graphql": true, "application/sql": true,
	"application/x-sh": true, "application/csv": true, "image/svg+xml": true,
}

// textual reports a media type whose body is text.
func textual(mt string) bool {
	return strings.HasPrefix(mt, "text/") || textTypes[mt] || strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")
}

var binaryTypes = map[string]bool{
	"application/octet-stream": true, "application/pdf": true, "application/zip": true, "application/gzip": true,
	"application/x-gzip": true, "application/x-tar": true, "application/x-7z-compressed": true,
	"application/x-bzip2": true, "application/x-xz": true, "application/zstd": true, "application/wasm": true,
	"application/x-protobuf": true, "application/protobuf": true, "application/msgpack": true,
	"application/vnd.ms-excel": true, "application/msword": true, "application/x-msdownload": true,
	"application/java-archive": true, "application/x-rar-compressed": true, "application/vnd.rar": true,
}

// binaryType reports a media type that is binary whatever its bytes look like.
func binaryType(mt string) bool {
	if textual(mt) {
		return false
	}
	for _, p := range []string{"image/", "audio/", "video/", "font/", "model/"} {
		if strings.HasPrefix(mt, p) {
			return true
		}
	}
	return binaryTypes[mt] || strings.HasPrefix(mt, "application/vnd.openxmlformats")
}

// looksLikeText accepts bytes that are valid UTF-8 without NULs; a rune cut
// by the size cap at the very end does not count against it.
func looksLikeText(b []byte) bool {
	b = trimPartialRune(b)
	return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0
}

func trimPartialRune(b []byte) []byte {
	for i := 1; i <= 3 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return b
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// decodeText converts a text body to UTF-8 by its charset parameter;
// without one, or with one we do not know, invalid bytes become U+FFFD.
func decodeText(b []byte, cs string) string {
	if cs != "" && cs != "utf-8" && cs != "utf8" {
		if enc, _ := charset.Lookup(cs); enc != nil {
			if out, err := io.ReadAll(enc.NewDecoder().Reader(bytes.NewReader(b))); err == nil {
				return string(out)
			}
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// DecodeText is decodeText for the tool layer: the body as UTF-8 text when
// it is text, ok false when it should be sent base64-encoded instead.
func DecodeText(r *Response) (string, bool) {
	if binaryType(r.MediaType) {
		return "", false
	}
	b := r.Body
	if r.Truncated {
		b = trimPartialRune(b)
	}
	if r.Charset != "" && r.Charset != "utf-8" && r.Charset != "utf8" {
		if enc, _ := charset.Lookup(r.Charset); enc != nil && bytes.IndexByte(b, 0) < 0 {
			return decodeText(b, r.Charset), true
		}
	}
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return "", false
	}
	return string(b), true
}
