package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
)

// noticeSender posts the simulated operators' notifications to a webhook
// receiver the way Avinode posts its own: the pointer as a JSON body, the
// subscription's credentials as HTTP Basic, and the body's signature when a
// signing secret is set. So on the simulated marketplace every answer
// travels receiver → store → processor, as a real one does.
type noticeSender struct {
	target                   atomic.Pointer[string] // unset until this service's own receiver listens
	clientID, clientSecret   string
	signingSecret, sigHeader string
	client                   *http.Client
}

func newNoticeSender(w *webhookSettings) *noticeSender {
	n := &noticeSender{clientID: w.clientID, clientSecret: w.clientSecret, signingSecret: w.signingSecret,
		sigHeader: w.signature, client: &http.Client{Timeout: 10 * time.Second}}
	if w.mockURL != "" {
		n.target.Store(&w.mockURL)
	}
	return n
}

// listening points the sender at this process's own receiver once it
// listens on addr (an unspecified host is reached on loopback).
func (n *noticeSender) listening(addr net.Addr) {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	u := "http://" + net.JoinHostPort(host, port) + webhooks.Path
	n.target.Store(&u)
}

func (n *noticeSender) send(ctx context.Context, body []byte) error {
	target := n.target.Load()
	if target == nil {
		return errors.New("the receiver is not listening yet")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, *target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(n.clientID, n.clientSecret)
	if n.signingSecret != "" {
		req.Header.Set(n.sigHeader, webhooks.Sign(n.signingSecret, body))
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", redactURL(*target), err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: the receiver answered %s", redactURL(*target), resp.Status)
	}
	return nil
}

// redactURL masks the credentials a URL may carry before it is logged.
func redactURL(raw string) string {
	shown, _ := logging.RedactURL(raw)
	return shown
}

// checkMockURL accepts an absolute http or https URL.
func checkMockURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("want an absolute http(s) URL of a receiver, e.g. http://avinode-webhooks:8090%s", webhooks.Path)
	}
	return nil
}
