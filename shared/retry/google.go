package retry

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// maxPeek bounds how much of a 403 body GoogleRateLimited reads. Google's
// error documents are a few hundred bytes; anything larger is not one.
const maxPeek = 16 << 10

// GoogleRateLimited reports whether resp is a Google API 403 that is really a
// rate limit (reason rateLimitExceeded or userRateLimitExceeded), which Gmail
// and Sheets send instead of 429 and which clears on its own after a backoff.
// Other 403s are permission problems that retrying cannot fix. The body is
// restored, so the caller can still read it. Use with WithRetryableStatus.
func GoogleRateLimited(resp *http.Response) bool {
	if resp == nil || resp.StatusCode != http.StatusForbidden || resp.Body == nil {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, maxPeek))
	resp.Body = &peekedBody{Reader: io.MultiReader(bytes.NewReader(head), resp.Body), Closer: resp.Body}
	if err != nil {
		return false
	}
	var doc struct {
		Error struct {
			Errors []struct {
				Reason string `json:"reason"`
			} `json:"errors"`
		} `json:"error"`
	}
	if json.Unmarshal(head, &doc) != nil {
		return false
	}
	for _, e := range doc.Error.Errors {
		switch e.Reason {
		case "rateLimitExceeded", "userRateLimitExceeded":
			return true
		}
	}
	return false
}

type peekedBody struct {
	io.Reader
	io.Closer
}
