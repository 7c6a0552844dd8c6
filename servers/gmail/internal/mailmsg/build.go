// Package mailmsg builds and reads RFC 5322 messages: the one MIME writer
// behind every message the gmail server sends, drafts or stores locally,
// and the reader behind every message it shows.
//
// Building refuses what would corrupt a message or let an argument forge
// headers: header values with CR, LF or other control characters,
// addresses that are not RFC 5322 addr-specs, file names with paths.
// Display names, subjects and file names outside ASCII are encoded (RFC 2047
// words, RFC 2231 parameters); bodies are quoted-printable UTF-8, and an HTML
// body always travels with a plain-text alternative; attachments are base64
// in 76-character lines; every line ends in CRLF and long headers are folded.
// Replies carry In-Reply-To and the References chain built from the
// parent's Message-ID, and a subject with one "Re: ".
package mailmsg

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"path"
	"strings"
	"time"
	"unicode"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/textcut"
)

// MaxHeaderLen bounds one header value (RFC 5322 allows lines of 998
// characters; longer values are folded, but none needs more than this).
const MaxHeaderLen = 4000

// Attachment is a file carried by a message.
type Attachment struct {
	Filename    string
	ContentType string
	Data        []byte
}

// Message is what Build writes.
type Message struct {
	From    *mail.Address
	To      []*mail.Address
	Cc      []*mail.Address
	Bcc     []*mail.Address
	ReplyTo []*mail.Address
	Subject string
	// Text and HTML are the bodies; with HTML alone, the text alternative
	// is made from it.
	Text        string
	HTML        string
	Attachments []Attachment
	// MessageID is "<id@domain>"; Build makes one when it is empty.
	MessageID  string
	InReplyTo  string
	References []string
	Date       time.Time
}

// Build writes the message as RFC 5322 bytes with CRLF line ends. Errors
// are VALIDATION_ERRORs naming the offending field.
func Build(m *Message) ([]byte, error) {
	if m.From == nil {
		return nil, mcperr.Invalid("from", nil, "a sender address", "the message has no sender")
	}
	if len(m.To)+len(m.Cc)+len(m.Bcc) == 0 {
		return nil, mcperr.Invalid("to", nil, "at least one recipient", "the message has no recipient")
	}
	if err := CheckHeaderValue("subject", m.Subject); err != nil {
		return nil, err
	}
	for i, a := range m.Attachments {
		if err := checkAttachment(i, a); err != nil {
			return nil, err
		}
	}
	if m.MessageID == "" {
		m.MessageID = NewMessageID(DomainOf(m.From.Address))
	}
	if !ValidMessageID(m.MessageID) {
		return nil, mcperr.Invalid("message_id", m.MessageID, "<local@domain>", "not a Message-ID")
	}
	if m.Date.IsZero() {
		m.Date = time.Now()
	}
	var buf bytes.Buffer
	att := attachmentsSize(m.Attachments)
	buf.Grow(len(m.Text)*3/2 + len(m.HTML)*3 + 4096 + 1024*len(m.Attachments) + att/57*78 + 78)
	h := &headerWriter{b: &buf}
	h.add("From", formatAddresses([]*mail.Address{m.From}))
	h.addList("To", m.To)
	h.addList("Cc", m.Cc)
	h.addList("Bcc", m.Bcc)
	h.addList("Reply-To", m.ReplyTo)
	h.add("Subject", encodeText(m.Subject))
	h.add("Date", m.Date.Format(time.RFC1123Z))
	h.add("Message-ID", m.MessageID)
	if m.InReplyTo != "" {
		h.add("In-Reply-To", m.InReplyTo)
	}
	if len(m.References) > 0 {
		h.add("References", strings.Join(m.References, " "))
	}
	h.add("MIME-Version", "1.0")
	if h.err != nil {
		return nil, h.err
	}
	text := m.Text
	if text == "" && m.HTML != "" {
		text = HTMLToText(m.HTML)
	}
	body := func(ew entityWriter) error {
		if m.HTML == "" {
			return writeText(ew, "text/plain", text)
		}
		alt, err := nested(ew, "alternative")
		if err != nil {
			return err
		}
		if err := writeText(alt.create, "text/plain", text); err != nil {
			return err
		}
		if err := writeText(alt.create, "text/html", m.HTML); err != nil {
			return err
		}
		return alt.Close()
	}
	root := func(h textproto.MIMEHeader) (io.Writer, error) {
		writeMIMEHeader(&buf, h)
		return &buf, nil
	}
	if len(m.Attachments) == 0 {
		if err := body(root); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	mixed, err := nested(root, "mixed")
	if err != nil {
		return nil, err
	}
	if err := body(mixed.create); err != nil {
		return nil, err
	}
	for _, a := range m.Attachments {
		if err := writeAttachment(mixed.create, a); err != nil {
			return nil, err
		}
	}
	if err := mixed.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func attachmentsSize(as []Attachment) int {
	n := 0
	for _, a := range as {
		n += len(a.Data)
	}
	return n
}

func checkAttachment(i int, a Attachment) error {
	field := fmt.Sprintf("attachments[%d].filename", i)
	if err := CheckHeaderValue(field, a.Filename); err != nil {
		return err
	}
	if strings.TrimSpace(a.Filename) == "" || strings.ContainsAny(a.Filename, `/\`) || a.Filename == "." || a.Filename == ".." || len(a.Filename) > 255 {
		return mcperr.Invalid(field, a.Filename, "a file name without directories, at most 255 bytes", "%s is not a plain file name", field)
	}
	ctField := fmt.Sprintf("attachments[%d].content_type", i)
	if err := CheckHeaderValue(ctField, a.ContentType); err != nil {
		return err
	}
	mt, _, err := mime.ParseMediaType(a.ContentType)
	if err != nil || !strings.Contains(mt, "/") || strings.HasPrefix(mt, "multipart/") {
		return mcperr.Invalid(ctField, a.ContentType, "a media type such as application/pdf", "%s is not a usable media type", ctField)
	}
	return nil
}

// maxWord is the longest word of an unstructured header value written as
// it is: a longer one could not be folded to 78 characters a line.
const maxWord = 60

// encodeText makes an unstructured header value (a subject) ASCII and
// foldable: as is when it is ASCII in words of at most maxWord, else RFC
// 2047 encoded words (each at most 75 characters, with spaces between them
// to fold at; readers join adjacent encoded words without the space).
func encodeText(s string) string {
	if isPrintableASCII(s) && !hasLongWord(s) && !strings.Contains(s, "=?") {
		return s
	}
	if !isPrintableASCII(s) {
		// Go's encoder splits the text into words of at most 75
		// characters.
		return mime.QEncoding.Encode("utf-8", s)
	}
	// ASCII that Go's encoder would leave as it is: B-encode it in chunks.
	var words []string
	for len(s) > 0 {
		n := min(len(s), 45) // 60 base64 characters: a 72-character word
		words = append(words, "=?utf-8?b?"+base64.StdEncoding.EncodeToString([]byte(s[:n]))+"?=")
		s = s[n:]
	}
	return strings.Join(words, " ")
}

func hasLongWord(s string) bool {
	for _, w := range strings.Split(s, " ") {
		if len(w) > maxWord {
			return true
		}
	}
	return false
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x7f || (s[i] < 0x20 && s[i] != '\t') {
			return false
		}
	}
	return true
}

// headerWriter writes folded header fields.
type headerWriter struct {
	b   *bytes.Buffer
	err error
}

func (h *headerWriter) addList(name string, as []*mail.Address) {
	if len(as) > 0 {
		h.add(name, formatAddresses(as))
	}
}

func (h *headerWriter) add(name, value string) {
	if h.err != nil {
		return
	}
	if strings.ContainsAny(value, "\r\n") {
		// Every input was checked; this is the last line of defence.
		h.err = mcperr.Invalid(strings.ToLower(name), nil, "one line", "the %s header would contain a line break", name)
		return
	}
	writeFolded(h.b, name, value)
}

// writeFolded writes "Name: value" folded at its spaces (RFC 5322 2.2.3:
// unfolding removes only the CRLF) so that lines stay within 78 characters
// where the value allows it, and within 998 always. The fold may come
// right after the colon, before the first word.
func writeFolded(b *bytes.Buffer, name, value string) {
	b.WriteString(name)
	b.WriteByte(':')
	line := len(name) + 1
	for _, w := range strings.Split(value, " ") {
		if line+1+len(w) > 78 && line > 1 {
			b.WriteString("\r\n")
			line = 0
		}
		b.WriteByte(' ')
		line++
		for line+len(w) > 998 {
			// A word no space breaks (every value written here is checked
			// to have none this long; this is the last line of defence).
			cut := 998 - line
			b.WriteString(w[:cut])
			b.WriteString("\r\n ")
			w, line = w[cut:], 1
		}
		b.WriteString(w)
		line += len(w)
	}
	b.WriteString("\r\n")
}

// entityWriter starts a MIME entity with header h and returns where its
// body goes: the message itself, or a new part of a multipart.
type entityWriter func(h textproto.MIMEHeader) (io.Writer, error)

func writeMIMEHeader(b *bytes.Buffer, h textproto.MIMEHeader) {
	for _, k := range []string{"Content-Type", "Content-Transfer-Encoding", "Content-Disposition"} {
		for _, v := range h[k] {
			writeFolded(b, k, v)
		}
	}
	b.WriteString("\r\n")
}

type multipartEntity struct{ *multipart.Writer }

func (m multipartEntity) create(h textproto.MIMEHeader) (io.Writer, error) { return m.CreatePart(h) }

// nested starts a multipart/sub entity in ew.
func nested(ew entityWriter, sub string) (multipartEntity, error) {
	boundary := multipart.NewWriter(io.Discard).Boundary()
	w, err := ew(textproto.MIMEHeader{"Content-Type": {"multipart/" + sub + "; boundary=\"" + boundary + "\""}})
	if err != nil {
		return multipartEntity{}, err
	}
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(boundary); err != nil {
		return multipartEntity{}, err
	}
	return multipartEntity{mw}, nil
}

func writeText(ew entityWriter, mediaType, text string) error {
	h := textproto.MIMEHeader{"Content-Type": {mediaType + "; charset=utf-8"}, "Content-Transfer-Encoding": {"quoted-printable"}}
	var body bytes.Buffer
	qp := quotedprintable.NewWriter(&body)
	if _, err := qp.Write([]byte(normalizeNewlines(text))); err != nil {
		return err
	}
	if err := qp.Close(); err != nil {
		return err
	}
	return emit(ew, h, body.Bytes())
}

func normalizeNewlines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.ReplaceAll(s, "\n", "\r\n")
}

func writeAttachment(ew entityWriter, a Attachment) error {
	mt, params, _ := mime.ParseMediaType(a.ContentType)
	params["name"] = a.Filename
	h := textproto.MIMEHeader{
		"Content-Type":              {mime.FormatMediaType(mt, params)},
		"Content-Transfer-Encoding": {"base64"},
		"Content-Disposition":       {mime.FormatMediaType("attachment", map[string]string{"filename": a.Filename})},
	}
	w, err := ew(h)
	if err != nil {
		return err
	}
	// 57 input bytes make one 76-character line; lines are encoded a block
	// at a time straight into the message.
	const lineIn, linesPerBlock = 57, 64
	var block [linesPerBlock * 78]byte
	data := a.Data
	for len(data) > 0 {
		n := 0
		for range linesPerBlock {
			if len(data) == 0 {
				break
			}
			chunk := data[:min(lineIn, len(data))]
			data = data[len(chunk):]
			base64.StdEncoding.Encode(block[n:], chunk)
			n += base64.StdEncoding.EncodedLen(len(chunk))
			if len(data) > 0 {
				block[n], block[n+1] = '\r', '\n'
				n += 2
			}
		}
		if _, err := w.Write(block[:n]); err != nil {
			return err
		}
	}
	return nil
}

// emit writes a leaf entity with header h and an encoded body.
func emit(ew entityWriter, h textproto.MIMEHeader, body []byte) error {
	w, err := ew(h)
	if err != nil {
		return err
	}
	_, err = w.Write(body)
	return err
}

// SafeFilename turns a name from a message (which anyone may have chosen)
// into a plain file name: no directories, no control characters, no
// leading dot.
func SafeFilename(name string) string {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '/' || r == ':' {
			return '_'
		}
		return r
	}, name)
	// No leading dot (a hidden file, or "." and ".."), and no trailing dots
	// or spaces, which some systems drop, making two names one.
	name = strings.TrimRight(strings.TrimLeft(strings.TrimSpace(name), "."), ". ")
	if name == "" || name == "/" {
		name = "attachment"
	}
	if len(name) > 200 {
		ext := path.Ext(name)
		if len(ext) > 20 {
			ext = ""
		}
		name = textcut.Prefix(name, 200-len(ext)) + ext
	}
	return name
}
