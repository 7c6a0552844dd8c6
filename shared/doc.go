// Package shared is the root of the kit every mcp-fleet server is built on.
// The code lives in its sub-packages: kit (bootstrap, transports, the tool
// call pipeline), mcperr (the error taxonomy), validate (JSON Schema argument
// checks), acl (agent-to-tool policy), logging, metrics, ratelimit, retry,
// datadir, and the test helpers mcptest and pgtest.
package shared
