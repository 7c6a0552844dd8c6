package upstream_test

import (
	"context"
	"net/http"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/retry"
	"github.com/mcp-fleet/mcp-fleet/shared/upstream"
)

// An Avinode-style client: a bearer token fetched from a token endpoint
// through its own client, plus headers that must be fresh on every attempt.
func ExampleNew() {
	auth, err := upstream.New(upstream.Config{Name: "avinode-auth", Server: "avinode-mcp", Version: "1.0.0"})
	if err != nil {
		panic(err)
	}
	tokens := &upstream.TokenSource{Fetch: func(ctx context.Context) (upstream.Token, error) {
		req, err := upstream.NewJSONRequest(ctx, http.MethodPost, "https://auth.example.com/token", map[string]string{"grant_type": "client_credentials"})
		if err != nil {
			return upstream.Token{}, err
		}
		var out struct {
			AccessToken string `json:"access_token"`
			ExpiresIn   int    `json:"expires_in"`
		}
		if err := auth.DoJSON(req, &out); err != nil {
			return upstream.Token{}, err
		}
		return upstream.Token{Value: out.AccessToken, Expiry: time.Now().Add(time.Duration(out.ExpiresIn) * time.Second)}, nil
	}}
	api, err := upstream.New(upstream.Config{
		Name: "avinode", Server: "avinode-mcp", Version: "1.0.0",
		Auth: func(r *http.Request) error {
			if err := tokens.Apply(r); err != nil {
				return err
			}
			r.Header.Set("X-Avinode-SentTimestamp", time.Now().UTC().Format(time.RFC3339))
			r.Header.Set("X-Avinode-Product", "mcp-fleet/1.0.0")
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	_ = api // api.DoJSON(req, &out) in the tool handlers
}

// A Google API client takes the *http.Client as is; a 403 whose reason is a
// rate limit is retried like a 429.
func ExampleClient_HTTPClient() {
	c, err := upstream.New(upstream.Config{
		Name: "gmail", Server: "gmail-mcp", Version: "1.0.0",
		RetryableStatus: retry.GoogleRateLimited,
	})
	if err != nil {
		panic(err)
	}
	_ = c.HTTPClient() // gmail.NewService(ctx, option.WithHTTPClient(c.HTTPClient()))
}
