// Package upstream builds the one HTTP client every fleet server uses to call
// the service behind it (Avinode's REST API, Gmail and Sheets through
// google.golang.org/api, Supabase's PostgREST), and turns that client's
// failures into the mcperr taxonomy.
//
// [New] returns a [Client] whose [Client.HTTPClient] is an ordinary
// *http.Client (hand it to option.WithHTTPClient for the Google libraries).
// Every request sent through it goes through these steps, outermost first:
//
//  1. Bounds: the overall Timeout is applied to the request's context (an
//     earlier deadline of the caller wins) and lasts until the response body
//     is closed. A User-Agent naming the server and its version is put in
//     front of any the caller set, and the correlation id of the tool call
//     (logging.CorrelationID) travels in X-Correlation-ID unless configured
//     otherwise.
//  2. Retries, with shared/retry's Transport: exponential backoff with
//     jitter; 429 and 503 wait at least their Retry-After (seconds or
//     HTTP-date). Only requests that are safe to send twice are repeated on
//     429, 500, 502, 503, 504, resets and timeouts: GET, HEAD, OPTIONS, PUT
//     and DELETE, a request carrying an Idempotency-Key header, or one whose
//     context went through [MarkIdempotent]. Any other request (a POST) is
//     sent again only when it provably never left this process: a failed
//     dial, an open circuit. No wait is started that would outlive the
//     context's deadline or exceed Policy.MaxRetryAfter; the last response
//     or error is returned instead.
//  3. Per attempt: a debug log line (upstream, method, URL with secrets
//     masked, attempt number, status or error, duration; never headers or
//     bodies), then the Auth hook, which adds the server's credentials afresh
//     to each attempt so a token refreshed during the backoff is used. A hook
//     failure ends the request at once, without a retry: a token endpoint
//     that just refused is not asked again in a loop, and no stacked retries
//     multiply the load. [TokenSource] caches a bearer token, refreshes it
//     before it expires, and lets concurrent requests share one refresh.
//  4. The circuit breaker of this upstream (retry.Breaker): after
//     BreakerThreshold consecutive failures (5xx, timeouts, transport errors;
//     not 4xx nor rate limits) it rejects requests without sending them, with
//     a retryable UPSTREAM_ERROR naming the upstream and the seconds until the
//     next trial, then lets one trial through.
//  5. The per-attempt timeout (until the response headers arrive), then a
//     pooled http.Transport with its own dial, TLS handshake and
//     response-header timeouts. Redirects are followed only within the same
//     host, so credentials the Auth hook adds never reach another host.
//
// Non-2xx responses are returned as responses, as net/http does. [FromStatus]
// and [FromError] map a status (with its headers) or an error from the
// client, including a Google client error's Code and Header, to an
// *mcperr.Error that names the upstream and the status, says whether a retry
// may help, and carries Retry-After. Messages never include a response body
// (it may echo secrets) nor a URL's query; a caller adds a short safe text
// with [Detail], and says with [RateLimited] that a 403 is really a rate
// limit. The original error is kept as the cause, for logs only. A failure
// whose outcome is unknown (a 5xx, a timeout or a lost connection after a
// POST was sent) is not marked retryable, and carries [ErrOutcomeUnknown]:
// the upstream may have applied it. A caller names the request with
// [Request], or with [Method] and [Repeatable] when it has only a Google
// client error; a 429, or a 503 with Retry-After, stays retryable.
//
// [Client.DoJSON] with [NewJSONRequest] covers the common case of a JSON API:
// send, map failures, read at most MaxResponseBytes and decode, ignoring
// unknown fields. [ReadBody] and [DecodeJSON] are its parts.
package upstream
