package tools_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// bigText is n characters of text with what JSON escapes (quotes,
// angle brackets, line breaks), so escaping is counted too.
func bigText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "Line %d of the \"quote\" <b>&</b> é\n", i)
	}
	return b.String()[:n]
}

func TestGetEmailPagesAHugeBody(t *testing.T) {
	for name, open := range backends() {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			s.maxResult = mcptest.MinBudget
			c := s.connect(t, nil, "")
			body := bigText(60000)
			out := send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": "Big", "body": body, "body_type": "text"})
			var got strings.Builder
			offset, calls := 0, 0
			for {
				var page struct {
					Body           string `json:"body"`
					BodyOffset     int    `json:"body_offset"`
					BodyTotalChars int    `json:"body_total_chars"`
					Truncated      bool   `json:"truncated"`
					NextOffset     *int   `json:"next_offset"`
				}
				mcptest.Sized(t, c, mcptest.MinBudget, "get_email", map[string]any{"message_id": out.ID, "offset": offset, "max_chars": 100000}, &page)
				calls++
				if page.BodyOffset != offset || page.Truncated != (page.NextOffset != nil) || page.Body == "" {
					t.Fatalf("page at %d: offset %d, truncated %v, next %v, %d chars", offset, page.BodyOffset, page.Truncated, page.NextOffset, len(page.Body))
				}
				got.WriteString(page.Body)
				if page.NextOffset == nil {
					if n := utf8.RuneCountInString(got.String()); page.BodyTotalChars != n {
						t.Errorf("total %d, read %d", page.BodyTotalChars, n)
					}
					break
				}
				offset = *page.NextOffset
			}
			if strings.TrimSpace(strings.ReplaceAll(got.String(), "\r\n", "\n")) != strings.TrimSpace(body) {
				t.Errorf("the pages do not add up to the body")
			}
			if calls < 5 {
				t.Errorf("a 60000-character body came in %d results of at most %d bytes", calls, mcptest.MinBudget)
			}
			t.Logf("%s: 60000 characters in %d results of at most %d bytes", name, calls, mcptest.MinBudget)
		})
	}
}

func TestThreadHistoryPagesWithinTheBudget(t *testing.T) {
	for name, open := range backends() {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			s.maxResult = mcptest.MinBudget
			c := s.connect(t, nil, "")
			first := send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": "Trip", "body": bigText(1000), "body_type": "text"})
			ids := []string{first.ID}
			for i := 1; i < 12; i++ {
				r := send(t, c, "send_email", map[string]any{"to": "a@client.example", "reply_to_message_id": first.ID,
					"body": fmt.Sprintf("reply %d\n%s", i, bigText(1000)), "body_type": "text"})
				ids = append(ids, r.ID)
			}
			var seen []string
			offset, calls := 0, 0
			for {
				var page struct {
					MessageCount   int  `json:"message_count"`
					EarlierOmitted int  `json:"earlier_omitted"`
					Truncated      bool `json:"truncated"`
					NextOffset     *int `json:"next_offset"`
					Messages       []struct {
						ID string `json:"id"`
					} `json:"messages"`
				}
				mcptest.Sized(t, c, mcptest.MinBudget, "get_thread_history", map[string]any{"thread_id": first.ThreadID, "max_messages": 50, "offset": offset}, &page)
				calls++
				if page.MessageCount != 12 || len(page.Messages) == 0 {
					t.Fatalf("page at %d: %+v", offset, page)
				}
				var ids []string
				for _, m := range page.Messages {
					ids = append(ids, m.ID)
				}
				seen = append(ids, seen...) // older pages come before
				if page.EarlierOmitted != 12-len(seen) {
					t.Errorf("earlier_omitted %d after %d messages", page.EarlierOmitted, len(seen))
				}
				if page.NextOffset == nil {
					break
				}
				if !page.Truncated || *page.NextOffset != len(seen) {
					t.Fatalf("truncated %v, next_offset %d after %d messages", page.Truncated, *page.NextOffset, len(seen))
				}
				offset = *page.NextOffset
			}
			if strings.Join(seen, ",") != strings.Join(ids, ",") {
				t.Errorf("pages gave %v, the thread is %v", seen, ids)
			}
			if calls < 3 {
				t.Errorf("12 messages of 1000 characters came in %d results", calls)
			}
			t.Logf("%s: 12 messages of 1000 characters in %d results of at most %d bytes", name, calls, mcptest.MinBudget)
		})
	}
}

func TestSearchPagesWithinTheBudget(t *testing.T) {
	for name, open := range backends() {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			s.maxResult = mcptest.MinBudget
			c := s.connect(t, nil, "")
			want := map[string]bool{}
			for i := range 30 {
				subject := fmt.Sprintf("Quote %d %s", i, strings.Repeat("<long & \"quoted\"> subject ", 30))
				want[send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": subject, "body": "b", "body_type": "text"}).ID] = true
			}
			got := map[string]bool{}
			token, calls, cut := "", 0, false
			for {
				var page struct {
					Messages []struct {
						ID string `json:"id"`
					} `json:"messages"`
					NextPageToken string `json:"next_page_token"`
					Truncated     bool   `json:"truncated"`
				}
				args := map[string]any{"query": "Quote", "max_results": 50}
				if token != "" {
					args["page_token"] = token
				}
				mcptest.Sized(t, c, mcptest.MinBudget, "search_emails", args, &page)
				calls++
				cut = cut || page.Truncated
				for _, m := range page.Messages {
					if got[m.ID] {
						t.Errorf("%s came twice", m.ID)
					}
					got[m.ID] = true
				}
				if page.NextPageToken == "" || calls > 30 {
					break
				}
				token = page.NextPageToken
			}
			if len(got) != len(want) || !cut {
				t.Errorf("%d of %d messages found in %d pages (cut %v)", len(got), len(want), calls, cut)
			}
			t.Logf("%s: 30 results of 1 KB in %d pages of at most %d bytes", name, calls, mcptest.MinBudget)
		})
	}
}

func TestBase64AttachmentOverTheBudget(t *testing.T) {
	s := localServer(t)
	s.maxResult = mcptest.MinBudget
	c := s.connect(t, nil, "")
	data := []byte(strings.Repeat("x", 20000))
	out := send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": "File", "body": "b", "body_type": "text",
		"attachments": []map[string]any{{"filename": "big.txt", "content": base64.StdEncoding.EncodeToString(data)}}})
	var msg struct {
		Attachments []struct {
			AttachmentID string `json:"attachment_id"`
		} `json:"attachments"`
	}
	mcptest.Structured(t, c.Call("get_email", map[string]any{"message_id": out.ID}), &msg)
	b := mcptest.FailCode(t, c.Call("get_attachment", map[string]any{"message_id": out.ID, "attachment_id": msg.Attachments[0].AttachmentID,
		"mode": "base64"}), mcperr.Validation)
	if b.Data.Field != "mode" || !strings.Contains(b.Message, "mode file") {
		t.Errorf("%+v", b)
	}
	var saved struct {
		Path string `json:"path"`
		Size int    `json:"size"`
	}
	mcptest.Structured(t, c.Call("get_attachment", map[string]any{"message_id": out.ID, "attachment_id": msg.Attachments[0].AttachmentID}), &saved)
	if saved.Size != len(data) || saved.Path == "" {
		t.Errorf("mode file: %+v", saved)
	}
}

// A message too large for the budget on its own comes with as much of its
// body as fits.
func TestThreadHistoryClipsAMessageOverTheBudget(t *testing.T) {
	s := localServer(t)
	s.maxResult = mcptest.MinBudget
	c := s.connect(t, nil, "")
	first := send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": "Huge", "body": bigText(20000), "body_type": "text"})
	var page struct {
		Truncated bool `json:"truncated"`
		Messages  []struct {
			BodyText      string `json:"body_text"`
			BodyTruncated bool   `json:"body_truncated"`
		} `json:"messages"`
		NextOffset *int `json:"next_offset"`
	}
	mcptest.Sized(t, c, mcptest.MinBudget, "get_thread_history", map[string]any{"thread_id": first.ThreadID, "max_body_chars": 20000}, &page)
	if !page.Truncated || len(page.Messages) != 1 || !page.Messages[0].BodyTruncated || len(page.Messages[0].BodyText) < 1000 || page.NextOffset != nil {
		t.Errorf("truncated %v, %d messages, next %v", page.Truncated, len(page.Messages), page.NextOffset)
	}
}

// The rules between arguments are the same on every sending tool.
func TestSendingRulesAreShared(t *testing.T) {
	c := localServer(t).connect(t, nil, "")
	for _, tool := range []string{"send_email", "create_draft"} {
		b := mcptest.FailCode(t, c.Call(tool, map[string]any{"to": "a@client.example", "body": "b"}), mcperr.Validation)
		if b.Data.Field != "subject" {
			t.Errorf("%s without subject: %+v", tool, b)
		}
		b = mcptest.FailCode(t, c.Call(tool, map[string]any{"to": "a@client.example", "subject": "s", "body": "b", "body_type": "markdown"}), mcperr.Validation)
		if b.Data.Field != "body_type" {
			t.Errorf("%s body_type markdown: %+v", tool, b)
		}
	}
	for _, tool := range []string{"send_email", "create_draft", "send_template_email"} {
		for att, field := range map[string]string{`{"content":"eA==","path":"a.txt","filename":"a.txt"}`: "attachments[0]",
			`{"content":"eA=="}`: "attachments[0].filename", `{"filename":"a.txt"}`: "attachments[0]"} {
			var a map[string]any
			_ = json.Unmarshal([]byte(att), &a)
			args := map[string]any{"to": "a@client.example", "subject": "s", "body": "b", "attachments": []any{a}}
			if tool == "send_template_email" {
				args = map[string]any{"to": "a@client.example", "template_name": "follow_up", "attachments": []any{a},
					"template_data": pairs(map[string]any{"client_name": "A", "message": "m"})}
			}
			if b := mcptest.FailCode(t, c.Call(tool, args), mcperr.Validation); b.Data.Field != field {
				t.Errorf("%s %s: field %q, want %q", tool, att, b.Data.Field, field)
			}
		}
	}
}
