package tools_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"mime"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// TestReplyByMessageID: the ids an agent holds after a send — id and the
// RFC message_id — both work wherever a message is named, and a reply made
// with the message_id threads.
func TestReplyByMessageID(t *testing.T) {
	onEveryBackend(t, func(t *testing.T, s *server) {
		c := s.connect(t, nil, "")
		first := send(t, c, "send_email", map[string]any{"to": "zoe@client.example", "subject": "Your quote", "body": "Two options.", "body_type": "text"})
		if first.MessageID == "" || first.ID == "" {
			t.Fatalf("send result %+v", first)
		}
		for _, id := range []string{first.MessageID, strings.Trim(first.MessageID, "<>")} {
			var m struct {
				ID        string `json:"id"`
				MessageID string `json:"message_id"`
			}
			mcptest.Structured(t, c.Call("get_email", map[string]any{"message_id": id}), &m)
			if m.ID != first.ID || m.MessageID != first.MessageID {
				t.Errorf("get_email(%s): %+v", id, m)
			}
		}
		var th struct {
			ThreadID string `json:"thread_id"`
			Messages []struct{ ID string }
		}
		mcptest.Structured(t, c.Call("get_thread_history", map[string]any{"thread_id": first.MessageID}), &th)
		if th.ThreadID != first.ThreadID || len(th.Messages) != 1 || th.Messages[0].ID != first.ID {
			t.Errorf("get_thread_history by message_id: %+v", th)
		}
		reply := send(t, c, "send_email", map[string]any{"to": "zoe@client.example", "body": "One more thing.", "body_type": "text",
			"reply_to_message_id": first.MessageID})
		if reply.ThreadID != first.ThreadID || reply.InReplyTo != first.MessageID {
			t.Fatalf("reply %+v (first %+v)", reply, first)
		}
		msg, err := mail.ReadMessage(bytes.NewReader(s.rawOf(t, reply.ID)))
		if err != nil {
			t.Fatal(err)
		}
		if msg.Header.Get("In-Reply-To") != first.MessageID || msg.Header.Get("References") != first.MessageID {
			t.Errorf("reply headers %v", msg.Header)
		}
		var p struct {
			Messages []struct {
				ID        string `json:"id"`
				MessageID string `json:"message_id"`
			}
		}
		mcptest.Structured(t, c.Call("search_emails", map[string]any{"query": "subject:quote"}), &p)
		if len(p.Messages) != 2 || p.Messages[0].MessageID == "" || p.Messages[1].MessageID != first.MessageID {
			t.Errorf("search results %+v", p)
		}
		b := mcptest.FailCode(t, c.Call("send_email", map[string]any{"to": "zoe@client.example", "body": "x", "reply_to_message_id": "<nobody@nowhere.example>"}), mcperr.Validation)
		if b.Data.Field != "reply_to_message_id" {
			t.Errorf("%+v", b)
		}
		mcptest.FailCode(t, c.Call("get_email", map[string]any{"message_id": "<nobody@nowhere.example>"}), mcperr.NotFound)
	})
}

// TestAttachmentNames: attachments of one message saved to files never
// overwrite each other, whatever their names.
func TestAttachmentNames(t *testing.T) {
	onEveryBackend(t, func(t *testing.T, s *server) {
		c := s.connect(t, nil, "")
		var parts strings.Builder
		names := []string{"quote.pdf", "quote.pdf", "..", ".", "", "QUOTE.pdf"}
		for i, n := range names {
			disp := "attachment"
			if n != "" {
				disp += fmt.Sprintf(`; filename="%s"`, n)
			}
			fmt.Fprintf(&parts, "--b\nContent-Type: application/pdf\nContent-Disposition: %s\nContent-Transfer-Encoding: base64\n\n%s\n",
				disp, base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("file %d", i))))
		}
		raw := fmt.Sprintf("From: Zoe <zoe@client.example>\nTo: %s\nSubject: files\nDate: Mon, 17 Nov 2025 10:00:00 +0000\n"+
			"Message-ID: <files-1@client.example>\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nsee attached\n%s--b--\n", me, parts.String())
		id := s.receive(t, c, raw)
		var m struct {
			Attachments []struct {
				AttachmentID string `json:"attachment_id"`
			}
		}
		mcptest.Structured(t, c.Call("get_email", map[string]any{"message_id": id}), &m)
		if len(m.Attachments) != len(names) {
			t.Fatalf("attachments %+v", m.Attachments)
		}
		paths := map[string]string{}
		for i, a := range m.Attachments {
			var r struct{ Path string }
			mcptest.Structured(t, c.Call("get_attachment", map[string]any{"message_id": id, "attachment_id": a.AttachmentID}), &r)
			if prev, dup := paths[strings.ToLower(r.Path)]; dup {
				t.Errorf("attachment %d saved over %s: %s", i, prev, r.Path)
			}
			paths[strings.ToLower(r.Path)] = a.AttachmentID
			b, err := os.ReadFile(r.Path)
			if err != nil || string(b) != fmt.Sprintf("file %d", i) {
				t.Errorf("attachment %d: %q %v", i, b, err)
			}
			if base := filepath.Base(r.Path); base == "." || base == ".." || strings.HasPrefix(base, ".") {
				t.Errorf("attachment %d saved as %q", i, base)
			}
			// Fetching it again gives the same file.
			var again struct{ Path string }
			mcptest.Structured(t, c.Call("get_attachment", map[string]any{"message_id": id, "attachment_id": a.AttachmentID}), &again)
			if again.Path != r.Path {
				t.Errorf("attachment %d saved again as %s, first %s", i, again.Path, r.Path)
			}
		}
	})
}

// TestBlockedExtensionDisguised: a blocked type with a trailing dot or
// space, or in capitals, is still refused.
func TestBlockedExtensionDisguised(t *testing.T) {
	onEveryBackend(t, func(t *testing.T, s *server) {
		c := s.connect(t, nil, "")
		for _, n := range []string{"x.exe.", "x.exe ", "x.EXE", "x.exe. . ", "x.Exe.."} {
			b := mcptest.FailCode(t, c.Call("send_email", map[string]any{"to": "a@client.example", "subject": "s", "body": "b",
				"attachments": []map[string]any{{"filename": n, "content": "QUJD"}}}), mcperr.Validation)
			if b.Data.Field != "attachments[0].filename" {
				t.Errorf("%q: %+v", n, b)
			}
		}
	})
}

// TestLongSubjectFolded: header lines stay within RFC 5322's limits and the
// subject reads back as it was sent.
func TestLongSubjectFolded(t *testing.T) {
	onEveryBackend(t, func(t *testing.T, s *server) {
		c := s.connect(t, nil, "")
		for _, subject := range []string{
			strings.Repeat("x", 998),
			strings.Repeat("é", 499),
			"Quote " + strings.Repeat("Challenger350", 60) + " and more words after it",
			strings.Repeat("word ", 150) + "end",
		} {
			out := send(t, c, "send_email", map[string]any{"to": "Zoë Ångström <zoe@client.example>", "subject": subject, "body": "b", "body_type": "text"})
			raw := s.rawOf(t, out.ID)
			head := raw[:bytes.Index(raw, []byte("\r\n\r\n"))]
			for _, line := range strings.Split(string(head), "\r\n") {
				if len(line) > 998 {
					t.Errorf("a header line of %d octets: %.60s…", len(line), line)
				} else if len(line) > 78 {
					t.Errorf("a header line of %d octets, over 78 where it could be folded: %.60s…", len(line), line)
				}
			}
			msg, err := mail.ReadMessage(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			got, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
			if err != nil || got != subject {
				t.Errorf("subject read back %q (%v), sent %q", got, err, subject)
			}
		}
	})
}

// TestAllowlistCoversReplyTo: Reply-To is held to the recipient allowlist
// like to, cc and bcc.
func TestAllowlistCoversReplyTo(t *testing.T) {
	onEveryBackend(t, func(t *testing.T, s *server) {
		s.deps.AllowRecipients = []string{"client.example"}
		c := s.connect(t, nil, "")
		b := mcptest.FailCode(t, c.Call("send_email", map[string]any{"to": "a@client.example", "subject": "s", "body": "b",
			"reply_to": "harvest@evil.example"}), mcperr.PermissionDeny)
		if b.Data.Field != "reply_to" {
			t.Errorf("%+v", b)
		}
		send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": "s", "body": "b", "reply_to": "desk@client.example"})
	})
}

// TestSearchSyntax: OR, from:me and whole words, as Gmail reads them — or
// a refusal naming what is not understood; never a silent empty page.
func TestSearchSyntax(t *testing.T) {
	onEveryBackend(t, func(t *testing.T, s *server) {
		c := s.connect(t, nil, "")
		a := send(t, c, "send_email", map[string]any{"to": "one@client.example", "subject": "Alpha Challenger quote", "body": "first", "body_type": "text"})
		b := send(t, c, "send_email", map[string]any{"to": "two@client.example", "subject": "Bravo quote", "body": "second", "body_type": "text"})
		in := s.receive(t, c, "From: Zoe <zoe@client.example>\nTo: "+me+"\nSubject: Charlie\nDate: Mon, 17 Nov 2025 10:00:00 +0000\n"+
			"Message-ID: <charlie-1@client.example>\nMIME-Version: 1.0\nContent-Type: text/plain\n\nhello\n")
		ids := func(q string) []string {
			var p struct{ Messages []struct{ ID string } }
			mcptest.Structured(t, c.Call("search_emails", map[string]any{"query": q}), &p)
			out := []string{}
			for _, m := range p.Messages {
				out = append(out, m.ID)
			}
			return out
		}
		for q, want := range map[string][]string{
			"alpha | bravo":       {b.ID, a.ID},
			"alpha OR bravo":      {b.ID, a.ID},
			"{alpha bravo}":       {b.ID, a.ID},
			"subject:(alpha)":     {a.ID},
			"from:me":             {b.ID, a.ID},
			"from:me quote alpha": {a.ID},
			"-from:me":            {in},
			"to:me":               {in},
			"challenger":          {a.ID},
			"challeng":            {},
		} {
			if got := ids(q); mustJSON(got) != mustJSON(want) {
				t.Errorf("%s: got %v want %v", q, got, want)
			}
		}
		if s.fake != nil {
			return // the real Gmail answers what it understands
		}
		for _, q := range []string{"alpha AROUND 3 bravo", "is:unread", "label:(a b"} {
			b := mcptest.FailCode(t, c.Call("search_emails", map[string]any{"query": q}), mcperr.Validation)
			if b.Data.Field != "query" {
				t.Errorf("%s: %+v", q, b)
			}
		}
	})
}

// TestInboundDate: a received message's date is its Date header, and the
// date operators use it; without a Date header, the date is when the file
// appeared, and the message says so.
func TestInboundDate(t *testing.T) {
	s := localServer(t)
	c := s.connect(t, nil, "")
	id := s.receive(t, c, "From: Zoe <zoe@client.example>\nTo: "+me+"\nSubject: Old news\nDate: Mon, 03 Mar 2025 10:00:00 +0100\n"+
		"Message-ID: <old-1@client.example>\nMIME-Version: 1.0\nContent-Type: text/plain\n\nhello\n")
	var m struct {
		Date     time.Time `json:"date"`
		DateNote string    `json:"date_note"`
	}
	mcptest.Structured(t, c.Call("get_email", map[string]any{"message_id": id}), &m)
	if !m.Date.Equal(time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)) || m.DateNote != "" {
		t.Errorf("date %v (%s)", m.Date, m.DateNote)
	}
	for q, n := range map[string]int{"before:2025/03/04": 1, "after:2025/03/04": 0, "older_than:30d": 1, "newer_than:30d": 0} {
		var p struct{ Messages []any }
		mcptest.Structured(t, c.Call("search_emails", map[string]any{"query": q}), &p)
		if len(p.Messages) != n {
			t.Errorf("%s: %d messages", q, len(p.Messages))
		}
	}
	raw := "From: Zoe <zoe@client.example>\r\nTo: " + me + "\r\nSubject: undated\r\nMessage-ID: <undated-1@client.example>\r\n\r\nhello\r\n"
	p := filepath.Join(s.dir, "mailbox", "inbox", "undated.eml")
	if err := os.WriteFile(p, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	mod := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	_ = os.Chtimes(p, mod, mod)
	var found struct{ Messages []struct{ ID string } }
	mcptest.Structured(t, c.Call("search_emails", map[string]any{"query": "rfc822msgid:<undated-1@client.example>"}), &found)
	if len(found.Messages) != 1 {
		t.Fatalf("undated: %+v", found)
	}
	mcptest.Structured(t, c.Call("get_email", map[string]any{"message_id": found.Messages[0].ID}), &m)
	if !m.Date.Equal(mod) || !strings.Contains(m.DateNote, "Date header") {
		t.Errorf("undated message: %v (%q)", m.Date, m.DateNote)
	}
}

// TestLimitErrorsStateTheLimit: a refusal over a limit says the limit, the
// value and the field.
func TestLimitErrorsStateTheLimit(t *testing.T) {
	s := localServer(t)
	s.deps.MaxAttachmentBytes = 1000
	c := s.connect(t, nil, "")
	var bcc []string
	for i := range 50 {
		bcc = append(bcc, fmt.Sprintf("b%d@client.example", i))
	}
	var cc []string
	for i := range 50 {
		cc = append(cc, fmt.Sprintf("c%d@client.example", i))
	}
	b := mcptest.FailCode(t, c.Call("send_email", map[string]any{"to": []string{"a@client.example", "z@client.example"}, "cc": cc, "bcc": bcc, "subject": "s", "body": "b"}), mcperr.Validation)
	if !strings.Contains(b.Message, "102") || !strings.Contains(b.Message, "100") || b.Data.Field == "" || !strings.Contains(b.Message, b.Data.Field) {
		t.Errorf("recipients: %s (field %s)", b.Message, b.Data.Field)
	}
	b = mcptest.FailCode(t, c.Call("send_email", map[string]any{"to": "a@client.example", "subject": "s", "body": "b",
		"attachments": []map[string]any{{"filename": "x.pdf", "content": base64.StdEncoding.EncodeToString(make([]byte, 1500))}}}), mcperr.Validation)
	if !strings.Contains(b.Message, "1000") || !strings.Contains(b.Message, "1500") || !strings.Contains(b.Message, "attachments[0]") {
		t.Errorf("attachment size: %s", b.Message)
	}
}
