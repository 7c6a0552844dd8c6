package kit

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

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
	out = wire.AppendString(out, s.descriptionsPromptDescription())
	return s.ok(r, append(out, "}]}"...), true)
}

func (s *Server) getPrompt(r *request) reply {
	if r.p.Name != DescriptionsPrompt {
		return s.fail(r, wire.CodeInvalidParams, "unknown prompt "+strconv.Quote(wire.Truncate(r.p.Name, 64)), nil)
	}
	out := []byte(`{"description":`)
	out = wire.AppendString(out, fmt.Sprintf("Tool guide for %s", s.info.Name))
	out = append(out, `,"messages":[{"role":"user","content":{"type":"text","text":`...)
	out = wire.AppendString(out, s.Describe(r.sess.agent))
	return s.ok(r, append(out, "}}]}"...), false)
}

// Describe renders the tool guide for an agent ("" when no policy is set).
func (s *Server) Describe(agent string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s tools\n\n", s.info.Name)
	if s.info.Instructions != "" {
		b.WriteString(s.info.Instructions)
		b.WriteString("\n\n")
	}
	b.WriteString("Errors come back as a JSON object {code, message, data{field, value, expected, retryable}}: fix the named field for VALIDATION_ERROR, wait retry_after_seconds for RATE_LIMIT_ERROR, and do not repeat a call whose error says retryable=false.\n")
	for _, t := range s.tools {
		if !s.allowed(agent, t.Name) {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n%s\n", t.Name, t.Description)
		fmt.Fprintf(&b, "Effect: %s", t.Effect)
		if t.Effect != ReadOnly && t.Idempotent {
			b.WriteString(", idempotent")
		}
		if t.OpenWorld {
			b.WriteString(", reaches outside systems")
		}
		b.WriteString(".\n")
		for _, line := range argLines(t.InputSchema) {
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
	req := setOf(sc.Required)
	names := make([]string, 0, len(sc.Properties))
	for n := range sc.Properties {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if req[names[i]] != req[names[j]] {
			return req[names[i]]
		}
		return names[i] < names[j]
	})
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
