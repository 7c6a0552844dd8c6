package tools

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/webguard"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

const webBudget = 16 << 10

// TestWebResultsWithinBudget: a response or page far over the result
// budget comes back in parts within it, and the offsets they give read the
// whole of it.
func TestWebResultsWithinBudget(t *testing.T) {
	var text strings.Builder
	for i := 0; text.Len() < 100<<10; i++ {
		fmt.Fprintf(&text, "row %d \"ünïcode\" <b>\n", i)
	}
	bin := make([]byte, 60<<10)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/text", typed("text/plain; charset=utf-8", text.String()))
	mux.HandleFunc("/bin", typed("application/octet-stream", string(bin)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := webClientOpts(t, webguard.Config{AllowCIDRs: loopback, Version: "1"}, kit.Options{Limits: kit.Limits{MaxResultBytes: webBudget}})

	type page struct {
		Body           string `json:"body"`
		BodyOffset     int64  `json:"body_offset"`
		BodyLength     int64  `json:"body_length"`
		Truncated      bool   `json:"truncated"`
		NextBodyOffset *int64 `json:"next_body_offset"`
		Rest           string `json:"rest"`
	}
	read := func(t *testing.T, path string, decode func(string) []byte) []byte {
		var all []byte
		args := map[string]any{"url": srv.URL + path}
		for pages := 0; ; pages++ {
			res := c.Call("web_request", args)
			var p page
			untrustedOK(t, res, &p)
			if n := mcptest.ResultSize(t, res); n > webBudget {
				t.Fatalf("page %d is %d bytes, over the budget", pages, n)
			}
			if p.BodyOffset != int64(len(all)) {
				t.Fatalf("page %d starts at %d, want %d", pages, p.BodyOffset, len(all))
			}
			all = append(all, decode(p.Body)...)
			if !p.Truncated {
				if pages == 0 {
					t.Error("one page only")
				}
				return all
			}
			if p.NextBodyOffset == nil || !strings.Contains(p.Rest, fmt.Sprintf("body_offset %d", *p.NextBodyOffset)) {
				t.Fatalf("truncated without a next offset: %+v", p)
			}
			args["body_offset"] = *p.NextBodyOffset
		}
	}
	t.Run("text", func(t *testing.T) {
		if got := read(t, "/text", func(s string) []byte { return []byte(s) }); string(got) != text.String() {
			t.Error("the pages do not join to the body")
		}
	})
	t.Run("binary", func(t *testing.T) {
		got := read(t, "/bin", func(s string) []byte {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				t.Fatal(err)
			}
			return b
		})
		if string(got) != string(bin) {
			t.Error("the pages do not join to the body")
		}
	})
	t.Run("offset past the end", func(t *testing.T) {
		b := mcptest.FailCode(t, c.Call("web_request", map[string]any{"url": srv.URL + "/bin", "body_offset": len(bin) + 1}), mcperr.Validation)
		if b.Data.Field != "body_offset" {
			t.Errorf("field %q: %s", b.Data.Field, b.Message)
		}
	})
	t.Run("web_fetch", func(t *testing.T) {
		var all strings.Builder
		args := map[string]any{"url": srv.URL + "/text", "max_length": 200000}
		for {
			res := c.Call("web_fetch", args)
			var p struct {
				Content        string `json:"content"`
				StartIndex     int    `json:"start_index"`
				Length         int    `json:"length"`
				Truncated      bool   `json:"truncated"`
				NextStartIndex *int   `json:"next_start_index"`
				Rest           string `json:"rest"`
			}
			untrustedOK(t, res, &p)
			if n := mcptest.ResultSize(t, res); n > webBudget {
				t.Fatalf("window is %d bytes, over the budget", n)
			}
			all.WriteString(p.Content)
			if !p.Truncated {
				break
			}
			if p.NextStartIndex == nil || *p.NextStartIndex != p.StartIndex+p.Length || !strings.Contains(p.Rest, "start_index") {
				t.Fatalf("window: %+v", p)
			}
			args["start_index"] = *p.NextStartIndex
		}
		if all.String() != text.String() {
			t.Error("the windows do not join to the page")
		}
	})
}
