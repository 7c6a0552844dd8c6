package mailmsg_test

import (
	"bytes"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/mailmsg"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

func addr(t *testing.T, s string) *mail.Address {
	t.Helper()
	a, err := mailmsg.ParseAddress("to", s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestRoundTrip: Build then Parse gives back exactly what went in.
func TestRoundTrip(t *testing.T) {
	long := strings.Repeat("Très long sujet avec des accents é à ü — ", 8)
	m := &mailmsg.Message{
		From:    &mail.Address{Name: "Desk, Jetvision", Address: "desk@jetvision.example"},
		To:      []*mail.Address{addr(t, "Zoë Ångström <zoe@client.example>"), addr(t, "b@client.example")},
		Cc:      []*mail.Address{addr(t, "\"Doe, John\" <john@client.example>")},
		Subject: long, Text: "Line one\nLine two with a very long line " + strings.Repeat("x", 200) + "\n=3D not an escape",
		HTML:        "<p>Hello</p>",
		Attachments: []mailmsg.Attachment{{Filename: "naïve plan.pdf", ContentType: "application/pdf", Data: []byte{0, 1, 2, 255}}},
		InReplyTo:   "<p@x.example>", References: []string{"<a@x.example>", "<p@x.example>"},
		Date: time.Date(2025, 11, 15, 9, 30, 0, 0, time.UTC),
	}
	raw, err := mailmsg.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\r\n") {
		if len(line) > 998 || strings.ContainsAny(line, "\r\n") || strings.IndexFunc(line, func(r rune) bool { return r > 127 }) >= 0 {
			t.Fatalf("bad line %q", line)
		}
	}
	p, err := mailmsg.Parse(raw, true)
	if err != nil {
		t.Fatal(err)
	}
	if p.Subject != long || p.From != "Desk, Jetvision <desk@jetvision.example>" || p.To[0] != "Zoë Ångström <zoe@client.example>" ||
		p.Cc[0] != "Doe, John <john@client.example>" || p.Text != m.Text || p.HTML != m.HTML || p.MessageID != m.MessageID ||
		p.InReplyTo != "<p@x.example>" || len(p.References) != 2 || !p.Date.Equal(m.Date) {
		t.Fatalf("parsed %+v", p)
	}
	if len(p.Parts) != 1 || p.Parts[0].Filename != "naïve plan.pdf" || !bytes.Equal(p.Parts[0].Data(), m.Attachments[0].Data) || p.Parts[0].PartID != "1" {
		t.Fatalf("parts %+v", p.Parts)
	}
	// Text only: a single part.
	raw, _ = mailmsg.Build(&mailmsg.Message{From: m.From, Bcc: m.To, Subject: "plain", Text: "just text"})
	if p, _ := mailmsg.Parse(raw, false); p.Text != "just text" || p.HTML != "" || len(p.Bcc) != 2 || bytes.Contains(raw, []byte("multipart")) {
		t.Fatalf("text only: %s", raw)
	}
	// HTML alone gets a text alternative.
	raw, _ = mailmsg.Build(&mailmsg.Message{From: m.From, To: m.To, Subject: "html", HTML: "<h1>Hi</h1><p>a <a href=\"https://x.example\">link</a></p>"})
	if p, _ := mailmsg.Parse(raw, false); !strings.Contains(p.Text, "Hi") || !strings.Contains(p.Text, "https://x.example") {
		t.Fatalf("alternative: %q", p.Text)
	}
}

func TestRefusals(t *testing.T) {
	from := &mail.Address{Address: "a@b.example"}
	to := []*mail.Address{{Address: "c@d.example"}}
	for name, m := range map[string]*mailmsg.Message{
		"no sender":       {To: to, Subject: "s"},
		"no recipient":    {From: from, Subject: "s"},
		"CRLF subject":    {From: from, To: to, Subject: "a\r\nBcc: x@y.example"},
		"bad message id":  {From: from, To: to, Subject: "s", MessageID: "no-brackets"},
		"dir in filename": {From: from, To: to, Subject: "s", Attachments: []mailmsg.Attachment{{Filename: "a/b", ContentType: "text/plain"}}},
		"bad type":        {From: from, To: to, Subject: "s", Attachments: []mailmsg.Attachment{{Filename: "a", ContentType: "nonsense"}}},
	} {
		if _, err := mailmsg.Build(m); err == nil {
			t.Errorf("%s: built", name)
		} else if me, ok := err.(*mcperr.Error); !ok || me.Code != mcperr.Validation {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, bad := range []string{"", "a", "a@b", "a@-b.example", "a..b@c.example", "a@b..example", "Eve <e@x.example>\r\nBcc: v@x.example",
		"e\u2028@x.example", "\"q q\"@x.example", "ü@x.example", strings.Repeat("a", 65) + "@x.example"} {
		if _, err := mailmsg.ParseAddress("to", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := mailmsg.ParseAddresses("cc", []string{"a@b.example", "bad"}); err == nil || err.(*mcperr.Error).Field != "cc[1]" {
		t.Errorf("list: %v", err)
	}
}

func TestThreadingHelpers(t *testing.T) {
	for in, want := range map[string]string{"Hello": "Re: Hello", "Re: Hello": "Re: Hello", "RE: re:Hello": "Re: Hello", "AW: Hallo": "Re: Hallo",
		"Re[2]: x": "Re: x", "": "Re:"} {
		if got := mailmsg.ReplySubject(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
	irt, refs := mailmsg.ReplyThreading("<p@x>", "<a@x> <b@x>", "<b@x>")
	if irt != "<p@x>" || strings.Join(refs, " ") != "<a@x> <b@x> <p@x>" {
		t.Errorf("%s %v", irt, refs)
	}
	_, refs = mailmsg.ReplyThreading("<p@x>", "", "<b@x> <c@x>")
	if strings.Join(refs, " ") != "<b@x> <p@x>" {
		t.Errorf("from In-Reply-To: %v", refs)
	}
	var long []string
	for i := range 40 {
		long = append(long, "<m"+string(rune('a'+i%26))+string(rune('a'+i/26))+"@x>")
	}
	_, refs = mailmsg.ReplyThreading("<p@x>", strings.Join(long, " "), "")
	if len(refs) != 20 || refs[0] != long[0] || refs[19] != "<p@x>" {
		t.Errorf("trimmed chain %v", refs)
	}
	if mailmsg.SafeFilename("../../etc/passwd") != "passwd" || mailmsg.SafeFilename("..") != "attachment" || mailmsg.SafeFilename("a\x00b.pdf") != "a_b.pdf" ||
		len(mailmsg.SafeFilename(strings.Repeat("é", 300)+".pdf")) > 210 {
		t.Error("SafeFilename")
	}
}

func TestParseForeignMail(t *testing.T) {
	raw := "From: =?ISO-8859-1?Q?Andr=E9?= <andre@x.example>\r\nTo: me@y.example\r\nSubject: =?utf-8?B?w6l0w6k=?=\r\n" +
		"Message-ID: <m1@x.example>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n" +
		"--B\r\nContent-Type: text/html; charset=windows-1252\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p>caf=E9 =80</p>\r\n" +
		"--B\r\nContent-Type: image/png\r\nContent-Disposition: inline\r\nContent-Transfer-Encoding: base64\r\n\r\niVBORw0KGgo\r\n--B--\r\n"
	p, err := mailmsg.Parse([]byte(raw), true)
	if err != nil {
		t.Fatal(err)
	}
	if p.From != "André <andre@x.example>" || p.Subject != "été" || p.HTML != "<p>café €</p>" || len(p.Parts) != 1 || !p.Parts[0].Inline || len(p.Parts[0].Data()) != 8 {
		t.Fatalf("%+v %+v", p, p.Parts)
	}
	if !strings.Contains(mailmsg.HTMLToText("<script>x()</script><p>Hi</p>"), "Hi") || strings.Contains(mailmsg.HTMLToText("<script>x()</script><p>Hi</p>"), "x()") {
		t.Error("HTMLToText keeps scripts")
	}
	for _, bad := range []string{"not a message", "Content-Type: multipart/mixed\r\n\r\nx", "Content-Transfer-Encoding: base64\r\n\r\n!!!!"} {
		if _, err := mailmsg.Parse([]byte(bad), false); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if mailmsg.Snippet("a  b\n c", 3) != "a b…" || mailmsg.Snippet("ab", 5) != "ab" {
		t.Error("Snippet")
	}
}
