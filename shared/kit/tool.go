package kit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	jsonschema "github.com/mcp-fleet/mcp-fleet/shared/schema"
)

// Effect says what a tool does to the world. It is mandatory: the kit derives
// the MCP annotations from it (mcp-go's defaults call every tool destructive)
// and --read-only keeps only ReadOnly tools.
type Effect int

const (
	effectUnset Effect = iota
	// ReadOnly tools change nothing.
	ReadOnly
	// Additive tools create or append but never overwrite or remove.
	Additive
	// Destructive tools may overwrite or delete.
	Destructive
)

func (e Effect) String() string {
	switch e {
	case ReadOnly:
		return "read-only"
	case Additive:
		return "additive"
	case Destructive:
		return "destructive"
	}
	return "unset"
}

// Tool is one tool: its definition and its handler, side by side.
type Tool struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the full JSON Schema of the arguments; the kit validates
	// every call against it before the handler runs, and tools/list
	// advertises its portable projection (schema.Advertise). NewTool
	// derives it from the argument type.
	InputSchema json.RawMessage
	// OutputSchema describes structuredContent; NewTool derives it from the
	// result type.
	OutputSchema json.RawMessage
	// Vars are the values of "{name}" placeholders in the argument type's
	// tags (limits set by flags), for NewTool.
	Vars jsonschema.Vars
	// Paging tells a caller whose result was over the result budget how to
	// ask for less ("read a window with offset and limit"). A tool whose
	// results can be large says it; the kit puts it in the error.
	Paging string
	Effect Effect
	// Idempotent: repeating the call with the same arguments has no further
	// effect. Ignored for ReadOnly tools, which always are.
	Idempotent bool
	// OpenWorld: the tool reaches systems outside this process's own state
	// (a remote API, the web).
	OpenWorld bool
	// Timeout bounds one call; zero means the server default.
	Timeout time.Duration
	// MaxConcurrent caps the calls of this tool running at once in the
	// process (0: only the server-wide caps apply). A tool that starts
	// processes or holds scarce connections sets a small number; calls past
	// it wait briefly for a slot, then fail with RATE_LIMIT_ERROR.
	MaxConcurrent int
	// AuditOmit names top-level arguments whose values the audit line
	// replaces with their size: contents that are data, not intent (a file
	// body, a request body), and may hold secrets no key name reveals.
	AuditOmit []string
	Handler   Handler

	// defErr is why NewTool could not build the definition; the
	// registration check reports it.
	defErr error
}

// Handler does a tool's work. It returns a value that the kit sends as JSON
// (text and structuredContent), a string (text only), an Untrusted value, or
// an error; an *mcperr.Error or mcperr.Coded error reaches the client as its
// code and message, anything else as INTERNAL_ERROR with its text kept in
// logs.
type Handler func(ctx context.Context, call *Call) (any, error)

// validToolName: a lowercase letter, then up to 63 of a-z 0-9 _. (By hand:
// a counted-repetition regexp costs start-up time in every server.)
func validToolName(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// check verifies a definition at registration, so a malformed tool is a
// start-up error and never a runtime surprise.
func (t *Tool) check() error {
	if t.defErr != nil {
		return fmt.Errorf("tool %q: %w", t.Name, t.defErr)
	}
	if !validToolName(t.Name) {
		return fmt.Errorf("tool %q: a name is a lowercase letter, then up to 63 of a-z 0-9 _", t.Name)
	}
	if t.Description == "" {
		return fmt.Errorf("tool %q: description is required", t.Name)
	}
	if t.Effect == effectUnset || t.Effect > Destructive {
		return fmt.Errorf("tool %q: Effect must be ReadOnly, Additive or Destructive", t.Name)
	}
	if t.Handler == nil {
		return fmt.Errorf("tool %q: no handler", t.Name)
	}
	if t.MaxConcurrent < 0 {
		return fmt.Errorf("tool %q: MaxConcurrent must not be negative", t.Name)
	}
	var schema struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(t.InputSchema, &schema); err != nil || schema.Type != "object" {
		return fmt.Errorf("tool %q: input schema must be a JSON object schema of type \"object\"", t.Name)
	}
	return nil
}

// Annotations returns the MCP hints derived from Effect, Idempotent and OpenWorld.
func (t *Tool) Annotations() mcp.ToolAnnotation {
	ro := t.Effect == ReadOnly
	destructive := t.Effect == Destructive
	idem := ro || t.Idempotent
	open := t.OpenWorld
	return mcp.ToolAnnotation{Title: t.Title, ReadOnlyHint: &ro, DestructiveHint: &destructive,
		IdempotentHint: &idem, OpenWorldHint: &open}
}

// annotationsJSON is the annotations object of tools/list.
type annotationsJSON struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
}

// listJSON is the tool's entry in tools/list, encoded once at registration:
// the input schema as advertised, its portable projection.
func (t *Tool) listJSON() (def, advertised []byte, err error) {
	advertised, err = jsonschema.Project(t.InputSchema)
	if err != nil {
		return nil, nil, err
	}
	a := t.Annotations()
	def, err = json.Marshal(struct {
		Name         string          `json:"name"`
		Title        string          `json:"title,omitempty"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
		Annotations  annotationsJSON `json:"annotations"`
	}{t.Name, t.Title, t.Description, advertised, t.OutputSchema, annotationsJSON{
		Title: t.Title, ReadOnlyHint: *a.ReadOnlyHint, DestructiveHint: *a.DestructiveHint,
		IdempotentHint: *a.IdempotentHint, OpenWorldHint: *a.OpenWorldHint,
	}})
	return def, advertised, err
}

// AgentReady reports what would make an LLM host refuse the tool, and with
// it the whole server: a name or description over the providers' limits,
// an argument schema outside the portable subset (schema.Advertise), or no
// outputSchema, without which a host cannot tell a model the result's shape.
func AgentReady(t Tool) error {
	if t.defErr != nil {
		return fmt.Errorf("tool %q: %w", t.Name, t.defErr)
	}
	if probs := jsonschema.ToolProblems(t.Name, t.Description); len(probs) > 0 {
		return fmt.Errorf("tool %q: %s", t.Name, strings.Join(probs, "; "))
	}
	if _, err := jsonschema.Advertise(t.InputSchema); err != nil {
		return fmt.Errorf("tool %q: %w", t.Name, err)
	}
	if len(t.OutputSchema) == 0 {
		return fmt.Errorf("tool %q: no outputSchema: declare it with kit.NewTool and a result struct", t.Name)
	}
	return nil
}
