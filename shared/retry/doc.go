// Package retry keeps the fleet's upstream HTTP clients (Avinode, Gmail,
// Sheets, PostgREST) from turning a brief upstream hiccup into a failed tool
// call, and from turning a long outage into a pile-up of hung tool calls.
//
// It has three parts that compose:
//
//   - [Do] repeats a function while its error says repeating may help, with
//     capped exponential backoff, jitter and server-requested delays.
//   - [Transport] does the same at the http.RoundTripper level, but only for
//     requests that are safe to send twice: a POST that may have reached the
//     server is never sent again unless the caller marked it idempotent.
//   - [Breaker] stops calling an upstream that keeps failing, so callers get an
//     immediate, explainable *mcperr.Error instead of waiting for timeouts.
//
// Errors decide their own fate: anything with a Retryable() bool method
// (including *mcperr.Error) is asked; [Permanent], [Retryable] and
// [RetryAfter] let code that knows better override that. Errors that say
// nothing are not retried, because repeating an unknown failure is as likely
// to do harm as good.
//
// Layer either Do or Transport around an upstream call, not both: stacked
// retries multiply the attempt count and the worst-case latency.
package retry
