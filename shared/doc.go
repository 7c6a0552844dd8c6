// Package shared is the root of the kit every mcp-fleet server is built on.
// The code lives in its sub-packages: kit (definitions, the protocol engine
// and its transports, the call pipeline, notifier, lifecycle), mcperr (the
// error taxonomy), schema (input schemas from argument structs), validate
// (JSON Schema argument checks), acl (agent policy), oauth (OAuth 2.1
// access tokens on the HTTP transport), upstream (HTTP clients for upstream
// APIs), retry, untrusted (fencing outside content), logging, metrics,
// ratelimit, datadir, suggest ("did you mean"), state, atomicfile
// (crash-safe file replacement), textcut (text cut to a byte bound on a
// character boundary), jsontext (text written as a JSON string), buildinfo
// (the version and commit a binary is linked with), googleauth (Google
// sign-in and service account keys), and the test helpers mcptest, pgtest,
// retry/retrytest, googleauth/googleauthtest and oauth/oauthtest.
package shared
