package mailmsg

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of Parse: a hostile message cannot make it recurse or allocate
// without bound.
const (
	maxDepth = 10
	maxParts = 500
)

// Part is a leaf of a message's MIME tree that is not one of its bodies: an
// attachment (or an inline image).
type Part struct {
	// PartID is the part's place in the tree, numbered as Gmail does: "0",
	// "1", "1.0"…
	PartID      string `json:"part_id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int    `json:"size"`
	Inline      bool   `json:"inline,omitempty"`
	data        []byte
}

// Data is the part's decoded content.
func (p *Part) Data() []byte { return p.data }

// Parsed is a message as read.
type Parsed struct {
	Header     mail.Header
	From       string
	To         []string
	Cc         []string
	Bcc        []string
	ReplyTo    []string
	Subject    string
	Date       time.Time
	MessageID  string
	InReplyTo  string
	References []string
	Text       string
	HTML       string
	Parts      []*Part
}

var decoder = &mime.WordDecoder{CharsetReader: charsetReader}

func charsetReader(charset string, in io.Reader) (io.Reader, error) {
	b, err := io.ReadAll(io.LimitReader(in, 64<<20))
	if err != nil {
		return nil, err
	}
	s, ok := decodeCharset(charset, b)
	if !ok {
		return nil, fmt.Errorf("unsupported charset %q", charset)
	}
	return strings.NewReader(s), nil
}

// decodeCharset turns text in charset into UTF-8: UTF-8 and ASCII as they
// are, Latin-1 and Windows-1252 by table; anything else is passed through
// with invalid bytes replaced.
func decodeCharset(charset string, b []byte) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		return strings.ToValidUTF8(string(b), "\uFFFD"), true
	case "iso-8859-1", "latin1", "iso_8859-1", "l1", "windows-1252", "cp1252":
		var sb strings.Builder
		sb.Grow(len(b))
		for _, c := range b {
			if c >= 0x80 && c < 0xa0 {
				sb.WriteRune(cp1252[c-0x80])
			} else {
				sb.WriteRune(rune(c))
			}
		}
		return sb.String(), true
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), false
}

var cp1252 = [32]rune{'€', '\uFFFD', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\uFFFD', 'Ž', '\uFFFD',
	'\uFFFD', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\uFFFD', 'ž', 'Ÿ'}

// DecodeHeader decodes RFC 2047 words in a header value; a value that
// cannot be decoded is returned as it is.
func DecodeHeader(v string) string {
	d, err := decoder.DecodeHeader(v)
	if err != nil {
		return v
	}
	return d
}

func addressList(h mail.Header, key string) []string {
	v := h.Get(key)
	if v == "" {
		return nil
	}
	list, err := (&mail.AddressParser{WordDecoder: decoder}).ParseList(v)
	if err != nil {
		// Keep what the sender wrote, decoded, rather than lose it.
		return []string{DecodeHeader(v)}
	}
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = FormatAddress(a)
	}
	return out
}

// FormatAddress writes "Name <addr>" (or addr) without encoding the name.
func FormatAddress(a *mail.Address) string {
	if a.Name == "" {
		return a.Address
	}
	return a.Name + " <" + a.Address + ">"
}

// Parse reads a message. With keepData, attachments keep their decoded
// bytes (Part.Data); otherwise only their size is kept.
func Parse(raw []byte, keepData bool) (*Parsed, error) {
	msg, err := mail.ReadMessage(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return nil, fmt.Errorf("not an RFC 5322 message: %w", err)
	}
	p := &Parsed{Header: msg.Header}
	h := msg.Header
	if from := addressList(h, "From"); len(from) > 0 {
		p.From = from[0]
	}
	p.To, p.Cc, p.Bcc, p.ReplyTo = addressList(h, "To"), addressList(h, "Cc"), addressList(h, "Bcc"), addressList(h, "Reply-To")
	p.Subject = DecodeHeader(h.Get("Subject"))
	if d, err := h.Date(); err == nil {
		p.Date = d
	}
	if ids := MessageIDs(h.Get("Message-ID")); len(ids) > 0 {
		p.MessageID = ids[0]
	}
	if ids := MessageIDs(h.Get("In-Reply-To")); len(ids) > 0 {
		p.InReplyTo = ids[0]
	}
	p.References = MessageIDs(h.Get("References"))
	w := &walker{p: p, keep: keepData}
	if err := w.entity(textproto.MIMEHeader(h), msg.Body, "", 0); err != nil {
		return nil, err
	}
	return p, nil
}

type walker struct {
	p     *Parsed
	keep  bool
	parts int
}

func (w *walker) entity(h textproto.MIMEHeader, body io.Reader, id string, depth int) error {
	w.parts++
	if depth > maxDepth || w.parts > maxParts {
		return errors.New("the message's MIME structure is too deep or has too many parts")
	}
	ct := h.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || ct == "" {
		mt, params = "text/plain", map[string]string{"charset": "us-ascii"}
	}
	mt = strings.ToLower(mt)
	if strings.HasPrefix(mt, "multipart/") {
		if params["boundary"] == "" {
			return errors.New("a multipart entity has no boundary")
		}
		mr := multipart.NewReader(body, params["boundary"])
		for i := 0; ; i++ {
			part, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("reading part %s: %w", childID(id, i), err)
			}
			if err := w.entity(part.Header, part, childID(id, i), depth+1); err != nil {
				return err
			}
		}
	}
	data, err := decodeBody(h.Get("Content-Transfer-Encoding"), body)
	if err != nil {
		return fmt.Errorf("part %s: %w", orRoot(id), err)
	}
	disp, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	filename := dparams["filename"]
	if filename == "" {
		filename = params["name"]
	}
	filename = DecodeHeader(filename)
	isAttachment := strings.EqualFold(disp, "attachment") || filename != ""
	if !isAttachment && (mt == "text/plain" || mt == "text/html") {
		text, _ := decodeCharset(params["charset"], data)
		text = strings.ReplaceAll(text, "\r\n", "\n")
		if mt == "text/plain" && w.p.Text == "" {
			w.p.Text = text
			return nil
		}
		if mt == "text/html" && w.p.HTML == "" {
			w.p.HTML = text
			return nil
		}
	}
	part := &Part{PartID: orRoot(id), Filename: filename, ContentType: mt, Size: len(data), Inline: strings.EqualFold(disp, "inline")}
	if w.keep {
		part.data = data
	}
	w.p.Parts = append(w.p.Parts, part)
	return nil
}

func childID(parent string, i int) string {
	if parent == "" {
		return strconv.Itoa(i)
	}
	return parent + "." + strconv.Itoa(i)
}

func orRoot(id string) string {
	if id == "" {
		return "0"
	}
	return id
}

func decodeBody(cte string, body io.Reader) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "base64":
		b, err := io.ReadAll(body)
		if err != nil {
			return nil, err
		}
		clean := bytes.Map(func(r rune) rune {
			if r == '\r' || r == '\n' || r == ' ' || r == '\t' {
				return -1
			}
			return r
		}, b)
		out := make([]byte, base64.StdEncoding.DecodedLen(len(clean)))
		n, err := base64.StdEncoding.Decode(out, clean)
		if err != nil {
			// Some senders drop padding.
			trimmed := bytes.TrimRight(clean, "=")
			out = make([]byte, base64.RawStdEncoding.DecodedLen(len(trimmed)))
			n, err = base64.RawStdEncoding.Decode(out, trimmed)
			if err != nil {
				return nil, errors.New("its base64 content does not decode")
			}
		}
		return out[:n], nil
	case "quoted-printable":
		b, err := io.ReadAll(quotedprintable.NewReader(body))
		if err != nil {
			return nil, errors.New("its quoted-printable content does not decode")
		}
		return b, nil
	default:
		return io.ReadAll(body)
	}
}

// Snippet is the first words of text, on one line, at most n runes.
func Snippet(text string, n int) string {
	s := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// DecodeText turns body bytes in charset into UTF-8 text.
func DecodeText(charset string, b []byte) string {
	s, _ := decodeCharset(charset, b)
	return s
}
