package mailmsg

import (
	"regexp"
	"strings"
	"sync"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
)

// dropped are elements whose content is never mail text.
var dropped = []string{"head", "script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "canvas",
	"audio", "video", "link", "meta", "input", "textarea", "select", "button", "form"}

var (
	convOnce sync.Once
	conv     *converter.Converter
)

func textConverter() *converter.Converter {
	convOnce.Do(func() {
		conv = converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin()))
		for _, t := range dropped {
			conv.Register.TagType(t, converter.TagTypeRemove, converter.PriorityEarly)
		}
	})
	return conv
}

var blankLines = regexp.MustCompile(`\n{3,}`)

// HTMLToText renders an HTML body as readable plain text (Markdown-like:
// paragraphs, lists, links with their address, tables). It is the text
// alternative of HTML mail that comes without one, and what a reader gets
// of an HTML-only message.
func HTMLToText(html string) string {
	out, err := textConverter().ConvertString(html)
	if err != nil {
		// Only an unreadable document fails; strip what looks like tags.
		out = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(html, " ")
	}
	return strings.TrimSpace(blankLines.ReplaceAllString(out, "\n\n"))
}
