// Package webhookstest is a lean sender of signed webhook notifications for
// the receiver's benchmarks: one keep-alive HTTP/1.1 connection, requests
// written and answers read by hand, so that what a load run measures is the
// receiver, not its client. It reads what the receiver writes — a status
// line, headers with Content-Length, a small body — and refuses anything
// else (a chunked answer, a missing length) rather than misreading it.
package webhookstest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks"
)

// Sender posts notifications on its own connection; it is not safe for
// concurrent use (one per sending goroutine).
type Sender struct {
	conn          net.Conn
	r             *bufio.Reader
	head, signing string
	req, body     []byte
}

// Dial connects to the receiver at host (host:port), which it will call
// with HTTP Basic user:secret and sign with signing.
func Dial(host, user, secret, signing string) (*Sender, error) {
	conn, err := net.Dial("tcp", host)
	if err != nil {
		return nil, err
	}
	head := "POST " + webhooks.Path + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nAuthorization: Basic " +
		base64.StdEncoding.EncodeToString([]byte(user+":"+secret)) + "\r\n"
	return &Sender{conn: conn, r: bufio.NewReader(conn), head: head, signing: signing}, nil
}

// Post sends a trip-message notification for the event id and returns an
// error unless the receiver answered 200.
func (s *Sender) Post(id string) error {
	body := `{"id":"` + id + `","href":"http://127.0.0.1:40000/tripmsgs/` + id + `","type":"tripmsgs","tripId":"T00001"}`
	s.req = append(s.req[:0], s.head...)
	s.req = append(s.req, webhooks.DefaultSignatureHeader+": "+webhooks.Sign(s.signing, []byte(body))+
		"\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body...)
	if _, err := s.conn.Write(s.req); err != nil {
		return fmt.Errorf("posting %s: %w", id, err)
	}
	status, err := s.readAnswer()
	if err != nil || status != http.StatusOK {
		return fmt.Errorf("posting %s: %d %s %v", id, status, s.body, err)
	}
	return nil
}

var contentLength = []byte("Content-Length")

// readAnswer reads one answer into s.body and returns its status.
func (s *Sender) readAnswer() (int, error) {
	s.body = s.body[:0]
	line, err := s.r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	rest, ok := bytes.CutPrefix(line, []byte("HTTP/1.1 "))
	if !ok || len(rest) < 3 {
		return 0, fmt.Errorf("not an HTTP/1.1 status line: %q", line)
	}
	status, err := strconv.Atoi(string(rest[:3]))
	if err != nil {
		return 0, fmt.Errorf("status line %q: %w", line, err)
	}
	n := -1
	for {
		if line, err = s.r.ReadSlice('\n'); err != nil {
			return status, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			break
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if bytes.EqualFold(name, contentLength) {
			if n, err = strconv.Atoi(string(bytes.TrimSpace(value))); err != nil || n < 0 || n > 1<<20 {
				return status, fmt.Errorf("header %q: not a length this sender reads", line)
			}
		}
	}
	if n < 0 {
		return status, errors.New("an answer without Content-Length (chunked?): this sender reads only sized answers")
	}
	s.body = slices.Grow(s.body, n)[:n]
	_, err = io.ReadFull(s.r, s.body)
	return status, err
}

// Close closes the connection.
func (s *Sender) Close() error { return s.conn.Close() }
