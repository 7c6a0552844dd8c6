package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxDrain bounds how much of an unwanted body is read so its connection
// can be reused; past this, dropping the connection is cheaper.
const maxDrain = 64 << 10

// BodyTooLargeError reports a body longer than the cap it was read with.
// FromError maps it to a non-retryable UPSTREAM_ERROR.
type BodyTooLargeError struct {
	Limit int64
}

func (e *BodyTooLargeError) Error() string {
	return fmt.Sprintf("response body exceeds the limit of %d bytes", e.Limit)
}

// ReadBody reads r to its end, but no more than limit bytes (limit <= 0
// means DefaultMaxResponseBytes): a longer body is a *BodyTooLargeError,
// not a silently cut one.
func ReadBody(r io.Reader, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading response body: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, &BodyTooLargeError{Limit: limit}
	}
	return data, nil
}

// decodeError reports a body that is not the JSON expected. Its text names
// the JSON problem, never the body.
type decodeError struct{ err error }

func (e *decodeError) Error() string { return "decoding JSON response: " + e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }

// DecodeJSON reads at most limit bytes of r (see ReadBody) and decodes them
// into v. Fields v does not declare are ignored, so an upstream that adds
// fields does not break its client. FromError maps a failure to
// UPSTREAM_ERROR (or TIMEOUT_ERROR, TRANSPORT_ERROR for a failed read).
func DecodeJSON(r io.Reader, limit int64, v any) error {
	data, err := ReadBody(r, limit)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &decodeError{err: err}
	}
	return nil
}

// NewJSONRequest builds a request with body encoded as JSON (no body when
// body is nil) and Accept: application/json. The body can be replayed, so a
// request that is safe to repeat can be retried.
func NewJSONRequest(ctx context.Context, method, url string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("upstream: encoding %s request body: %w", method, err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, fmt.Errorf("upstream: building %s request: %w", method, scrubCause(err))
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// DoJSON sends req through the client and decodes a 2xx answer into out
// (nil, or a 204, discards the body). Every failure is an *mcperr.Error:
// FromError for the request, FromStatus for a non-2xx status, with the hints
// of Config.ErrorHints.
func (c *Client) DoJSON(req *http.Request, out any) error {
	resp, err := c.http.Do(req)
	if err != nil {
		return FromError(c.name, err, Request(req))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var hs []Hint
		if c.errorHints != nil {
			// An error body that cannot be read whole gives no hints.
			body, _ := ReadBody(resp.Body, maxErrorBody)
			hs = c.errorHints(resp.StatusCode, resp.Header, body)
		}
		drain(resp.Body)
		return FromStatus(c.name, resp.StatusCode, resp.Header, append([]Hint{Request(req)}, hs...)...)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		drain(resp.Body)
		return nil
	}
	if err := DecodeJSON(resp.Body, c.maxBody, out); err != nil {
		// The request hint keeps a POST whose answer broke off from being
		// called retryable: the upstream has accepted it.
		return FromError(c.name, err, Request(req))
	}
	return nil
}

func drain(r io.Reader) {
	_, _ = io.CopyN(io.Discard, r, maxDrain)
}
