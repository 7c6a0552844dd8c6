package webguard

import (
	"bytes"
	"context"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// dropped are elements whose content is never page text: code, styling,
// embedded documents and media, form controls. The Markdown converter drops
// some of them already; registering all keeps both formats the same.
var dropped = []string{
	"head", "script", "style", "noscript", "template", "iframe", "frame", "frameset", "object", "embed",
	"applet", "svg", "canvas", "math", "audio", "video", "source", "track", "map", "link", "meta",
	"input", "textarea", "select", "option", "button", "dialog",
}

var droppedSet = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range dropped {
		m[t] = true
	}
	return m
}()

var (
	mdOnce sync.Once
	mdConv *converter.Converter
)

// markdownConverter is built once: the converter is safe for concurrent use.
func markdownConverter() *converter.Converter {
	mdOnce.Do(func() {
		mdConv = converter.NewConverter(converter.WithPlugins(
			base.NewBasePlugin(),
			commonmark.NewCommonmarkPlugin(),
			strikethrough.NewStrikethroughPlugin(),
			table.NewTablePlugin(),
		))
		for _, t := range dropped {
			mdConv.Register.TagType(t, converter.TagTypeRemove, converter.PriorityEarly)
		}
	})
	return mdConv
}

// render converts a parsed page. Relative links and images are made
// absolute against the page's <base href> or, without one, its final URL.
func (c *Client) render(ctx context.Context, doc *html.Node, pageURL, format string) (string, string, error) {
	title := strings.Join(strings.Fields(textOf(find(doc, atom.Title))), " ")
	base := pageURL
	if b := find(doc, atom.Base); b != nil {
		if href := attr(b, "href"); href != "" {
			if pu, err := url.Parse(pageURL); err == nil {
				if hu, err := pu.Parse(href); err == nil && (hu.Scheme == "http" || hu.Scheme == "https") {
					base = hu.String()
				}
			}
		}
	}
	switch format {
	case FormatHTML:
		var buf bytes.Buffer
		if err := html.Render(&buf, doc); err != nil {
			return "", "", upstream(false, "the page could not be rendered", err)
		}
		return buf.String(), title, nil
	case FormatText:
		return Text(doc), title, nil
	}
	md, err := markdownConverter().ConvertNode(doc, converter.WithDomain(base), converter.WithContext(ctx))
	if err != nil {
		return "", "", upstream(false, "the page could not be converted to Markdown", err)
	}
	return string(md), title, nil
}

func find(n *html.Node, a atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if f := find(ch, a); f != nil {
			return f
		}
	}
	return nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
	}
	walk(n)
	return b.String()
}

// blockGap is the number of line breaks around a block element: 2 leaves a
// blank line (paragraphs, headings), 1 starts a new line (list items, rows).
var blockGap = map[atom.Atom]int{
	atom.P: 2, atom.H1: 2, atom.H2: 2, atom.H3: 2, atom.H4: 2, atom.H5: 2, atom.H6: 2,
	atom.Blockquote: 2, atom.Pre: 2, atom.Table: 2, atom.Ul: 2, atom.Ol: 2, atom.Dl: 2,
	atom.Figure: 2, atom.Hr: 2, atom.Section: 2, atom.Article: 2, atom.Header: 2, atom.Footer: 2,
	atom.Nav: 2, atom.Aside: 2, atom.Main: 2, atom.Form: 2, atom.Fieldset: 2, atom.Address: 2, atom.Details: 2,
	atom.Div: 1, atom.Li: 1, atom.Tr: 1, atom.Dt: 1, atom.Dd: 1, atom.Figcaption: 1, atom.Summary: 1,
	atom.Caption: 1, atom.Legend: 1, atom.Body: 1,
}

// Text renders a page as plain text: no markup, whitespace collapsed as a
// browser would, one line per block, list items marked "- " or "1. ",
// table cells separated by " | ".
func Text(doc *html.Node) string {
	w := &textWriter{}
	w.node(doc)
	return strings.TrimSpace(blankRuns.ReplaceAllString(w.b.String(), "\n\n"))
}

var blankRuns = regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`)

type textWriter struct {
	b       strings.Builder
	nl      int    // line breaks owed before the next text
	space   bool   // a space is owed before the next text
	prefix  string // list marker owed at the start of the next line
	pre     int    // depth inside <pre>
	lists   []int  // open lists, innermost last: the next number, or -1 for <ul>
	started bool
}

func (w *textWriter) brk(n int) {
	if w.started && n > w.nl {
		w.nl = n
	}
	w.space = false
}

func (w *textWriter) emit(s string) {
	if w.nl > 0 {
		w.b.WriteString(strings.Repeat("\n", w.nl))
		w.nl, w.space = 0, false
	} else if w.space && w.started {
		w.b.WriteByte(' ')
	}
	w.space = false
	if w.prefix != "" {
		w.b.WriteString(w.prefix)
		w.prefix = ""
	}
	w.b.WriteString(s)
	w.started = true
}

func (w *textWriter) text(s string) {
	if w.pre > 0 {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		if s != "" {
			w.emit(s)
		}
		return
	}
	fields := strings.Fields(s)
	if len(fields) == 0 {
		if s != "" {
			w.space = true
		}
		return
	}
	if isSpaceByte(s[0]) {
		w.space = true
	}
	for i, f := range fields {
		if i > 0 {
			w.space = true
		}
		w.emit(f)
	}
	if isSpaceByte(s[len(s)-1]) {
		w.space = true
	}
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func (w *textWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.ElementNode:
		if droppedSet[n.Data] {
			return
		}
	case html.DocumentNode:
	default:
		return
	}
	gap := blockGap[n.DataAtom]
	switch n.DataAtom {
	case atom.Br:
		w.brk(1)
		if !w.started {
			return
		}
		w.b.WriteString(strings.Repeat("\n", w.nl))
		w.nl = 0
		return
	case atom.Pre:
		w.pre++
		defer func() { w.pre-- }()
	case atom.Ul, atom.Ol:
		next := -1 // unordered
		if n.DataAtom == atom.Ol {
			next = 1
			if v, err := strconv.Atoi(attr(n, "start")); err == nil {
				next = v
			}
		}
		if len(w.lists) > 0 {
			gap = 1 // a nested list is part of its item
		}
		w.lists = append(w.lists, next)
		defer func() { w.lists = w.lists[:len(w.lists)-1] }()
	case atom.Li:
		w.brk(1)
		indent := strings.Repeat("  ", max(len(w.lists)-1, 0))
		w.prefix = indent + "- "
		if k := len(w.lists) - 1; k >= 0 && w.lists[k] >= 0 {
			w.prefix = indent + strconv.Itoa(w.lists[k]) + ". "
			w.lists[k]++
		}
		defer func() { w.prefix = "" }()
	case atom.Td, atom.Th:
		if prevElement(n) != nil {
			w.space = true
			w.emit("|")
			w.space = true
		}
	case atom.Img:
		if alt := strings.TrimSpace(attr(n, "alt")); alt != "" {
			w.text(alt)
		}
	}
	if gap > 0 {
		w.brk(gap)
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		w.node(ch)
	}
	if gap > 0 {
		w.brk(gap)
	}
}

func prevElement(n *html.Node) *html.Node {
	for s := n.PrevSibling; s != nil; s = s.PrevSibling {
		if s.Type == html.ElementNode {
			return s
		}
	}
	return nil
}
