package engine

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/shared/jsontext"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/argorder"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
)

// DescriptionsPrompt is the name of the prompt every server offers: usage
// guidance for its tools that a host can fetch and put in front of a model
// (a host may fetch it once per server). It is generated from the registered tools, so it cannot
// drift from them, and it lists only what the caller's agent may call.
const DescriptionsPrompt = "tool-descriptions"

func (s *Server) descriptionsPromptDescription() string {
	return fmt.Sprintf("How to use the %s server's tools: what each does, its arguments, and whether it changes anything.", s.info.Name)
}

func (s *Server) listPrompts(r *request) reply {
	out := []byte(`{"prompts":[{"name":"` + DescriptionsPrompt + `","description":`)
	out = jsontext.AppendString(out, s.descriptionsPromptDescription())
	return s.ok(r, append(out, "}]}"...), true)
}

func (s *Server) getPrompt(r *request) reply {
	if r.p.Name != DescriptionsPrompt {
		return s.fail(r, wire.CodeInvalidParams, "unknown prompt "+strconv.Quote(wire.Truncate(r.p.Name, 64)), nil)
	}
	out := []byte(`{"description":`)
	out = jsontext.AppendString(out, fmt.Sprintf("Tool guide for %s", s.info.Name))
	out = append(out, `,"messages":[{"role":"user","content":{"type":"text","text":`...)
	out = jsontext.AppendString(out, s.Describe(r.sess.agent))
	return s.ok(r, append(out, "}}]}"...), false)
}

// Describe renders the tool guide for an agent ("" when no policy is set).
func (s *Server) Describe(agent string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s tools\n\n", s.info.Name)
	if text := s.instructionsFor(agent); text != "" {
		b.WriteString(text)
		b.WriteString("\n\n")
	}
	b.WriteString("Errors come back as a JSON object {code, message, data{field, value, expected, retryable}}: fix the named field for VALIDATION_ERROR, wait retry_after_seconds for RATE_LIMIT_ERROR, and do not repeat a call whose error says retryable=false.\n")
	for _, t := range s.tools {
		if !s.allowed(agent, t.Name) {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n%s\n", t.Name, s.forAgent(agent, t.Description))
		fmt.Fprintf(&b, "Effect: %s", t.Effect)
		if !t.ReadOnly() && t.Idempotent {
			b.WriteString(", idempotent")
		}
		if t.OpenWorld {
			b.WriteString(", reaches outside systems")
		}
		b.WriteString(".\n")
		for _, line := range argLines(t.Advertised) {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// argLines summarises the top-level properties of an object schema.
func argLines(schema json.RawMessage) []string {
	var sc struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
			Default     any    `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &sc) != nil || len(sc.Properties) == 0 {
		return []string{"Arguments: none."}
	}
	names, req := argorder.Names(sc.Properties, sc.Required)
	out := []string{"Arguments:"}
	for _, n := range names {
		p := sc.Properties[n]
		line := fmt.Sprintf("- %s (%v", n, p.Type)
		if req[n] {
			line += ", required"
		}
		if p.Default != nil {
			line += fmt.Sprintf(", default %v", p.Default)
		}
		line += ")"
		if len(p.Enum) > 0 {
			line += fmt.Sprintf(" one of %v", p.Enum)
		}
		if p.Description != "" {
			line += ": " + p.Description
		}
		out = append(out, line)
	}
	return out
}

// instructionsFor is the server's instructions as the agent may read them.
func (s *Server) instructionsFor(agent string) string {
	return s.forAgent(agent, s.info.Instructions)
}

// forAgent drops from text each sentence that names a tool of this server
// the agent may not call: guidance about a tool it cannot use only
// misleads the model ("send with send_email" to an agent without it).
func (s *Server) forAgent(agent, text string) string {
	if text == "" || s.opts.Policy == nil {
		return text
	}
	var b strings.Builder
	for _, sentence := range sentences(text) {
		if s.namesForbidden(agent, sentence) {
			continue
		}
		b.WriteString(sentence)
	}
	return strings.TrimSpace(b.String())
}

// namesForbidden reports whether text names a tool of this server, served
// or not, that the agent may not call.
func (s *Server) namesForbidden(agent, text string) bool {
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_'
	}) {
		if s.toolNames[w] && (s.byName[w] == nil || !s.allowed(agent, w)) {
			return true
		}
	}
	return false
}

// sentences splits text after each ". " (keeping the space), so joining
// them gives the text back.
func sentences(text string) []string {
	var out []string
	for {
		i := strings.Index(text, ". ")
		if i < 0 {
			return append(out, text)
		}
		out = append(out, text[:i+2])
		text = text[i+2:]
	}
}
