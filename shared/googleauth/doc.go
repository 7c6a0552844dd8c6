// Package googleauth gives fleet servers that call Google APIs (gmail,
// sheets) their credentials, the same way in each:
//
//   - [Command] is the `<server>-mcp auth` subcommand: the OAuth 2.0
//     loopback flow for installed applications ([Authorize]) — a listener on
//     127.0.0.1 on a random port, PKCE (S256), a random state, access_type
//     offline and prompt=consent so that Google issues a refresh token, and
//     only the scopes the server's enabled tools need. It prints the URL to
//     open (and opens a browser only when asked), waits for the answer with a
//     time limit, exchanges the code and stores the token in the server's
//     data directory with mode 0600, written atomically ([TokenFile]).
//   - [NewUserSource] is the oauth2.TokenSource of a person's credentials: the
//     stored token, or a refresh token from the environment, refreshed
//     through the caller's HTTP client, every refreshed token persisted (so a
//     rotated refresh token survives a restart and nobody has to consent
//     again). A missing, expired or revoked grant is an AUTHENTICATION_ERROR
//     that says which command to run.
//   - [LoadServiceAccount] reads a service account's JSON key, with an
//     optional subject for domain-wide delegation.
//   - [Settings] registers the client id, secret, refresh token and endpoint
//     flags every such server shares, with its own aliases.
//
// Endpoints are configurable so that tests point them at a fake
// authorization server (package googleauthtest). Secrets (the client secret,
// refresh and access tokens, private keys) never reach an error message; the
// caller hands them to its log redactor.
package googleauth
