// Package webhookstest is a lean sender of signed webhook notifications for
// the receiver's benchmarks: one keep-alive HTTP/1.1 connection, requests
// written by hand and answers read with net/http's parser, so that what a
// load run measures is the receiver, not its client.
package webhookstest

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks"
)

// Sender posts notifications on its own connection; it is not safe for
// concurrent use (one per sending goroutine).
type Sender struct {
	conn          net.Conn
	r             *bufio.Reader
	head, signing string
	req           []byte
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
	resp, err := http.ReadResponse(s.r, nil)
	if err != nil {
		return fmt.Errorf("posting %s: %w", id, err)
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("posting %s: %d %s %v", id, resp.StatusCode, answer, err)
	}
	return nil
}

// Close closes the connection.
func (s *Sender) Close() error { return s.conn.Close() }
