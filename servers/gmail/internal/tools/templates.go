package tools

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/templates"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/schema"
)

// TemplateTools returns list_templates.
func TemplateTools(d Deps) []kit.Tool { return []kit.Tool{listTemplates(d)} }

// templateVar is one variable of template_data. A list of name/value
// pairs, not an object keyed by name: OpenAI's strict mode refuses an
// object open to any key.
type templateVar struct {
	Name  string `json:"name" jsonschema:"a variable of the template, as list_templates names it" mcp:"minLength=1,maxLength=64"`
	Value string `json:"value" jsonschema:"its value as text: numbers in digits (45000 or 1234.5), booleans true or false, dates YYYY-MM-DD, lists and objects as JSON ([{\"type\":\"Challenger 350\",\"price_usd\":45000}]); empty leaves an optional variable out" mcp:"maxLength=100000"`
}

type templateArgs struct {
	common
	TemplateName string        `json:"template_name" jsonschema:"the template (list_templates describes each and the data it needs)" mcp:"enum={names}"`
	TemplateData []templateVar `json:"template_data" jsonschema:"the template's variables, each once, as name/value pairs: names, types and which are required are in list_templates" mcp:"maxItems=100"`
	Subject      string        `json:"subject,omitempty" jsonschema:"replaces the template's subject line (not for replies, which keep the thread's subject)" mcp:"maxLength=998"`
}

// Validate holds the rules the schema cannot state: the ones every sending tool shares and
// each variable named once.
func (a *templateArgs) Validate() error {
	if err := a.common.validate(); err != nil {
		return err
	}
	seen := make(map[string]int, len(a.TemplateData))
	for i, v := range a.TemplateData {
		if j, dup := seen[v.Name]; dup {
			return mcperr.Invalid(fieldAt("template_data", i)+".name", v.Name, "each variable once",
				"%s.name %q is given twice (also at template_data[%d])", fieldAt("template_data", i), v.Name, j)
		}
		seen[v.Name] = i
	}
	return nil
}

func sendTemplateEmail(d Deps) kit.Tool {
	names := strings.Join(d.Templates.Names(), "|")
	t := kit.NewTool(kit.Tool{
		Name:  "send_template_email",
		Title: "Send a templated email",
		Description: "Send an email made from a template (" + strings.Join(d.Templates.Names(), ", ") + ") with template_data given as " +
			"name/value pairs ({\"name\":\"client_name\",\"value\":\"Ms. Raman\"}; lists and objects as JSON text): an HTML body whose values " +
			"are escaped, a plain-text alternative and a subject line. Each template declares its variables (list_templates): a missing, " +
			"repeated, mistyped or unknown one is a VALIDATION_ERROR naming it, and nothing is sent. Recipients, attachments, Reply-To and " +
			"reply_to_message_id work as in send_email. " + sendReturns + " Also returns template.",
		Vars:          schema.Vars{"names": names},
		Effect:        kit.Additive,
		OpenWorld:     d.OpenWorld,
		Timeout:       2 * time.Minute,
		MaxConcurrent: 4,
		AuditOmit:     []string{"template_data", "attachments"},
	}, func(ctx context.Context, c *kit.Call, a templateArgs) (*sentResult, error) {
		t, ok := d.Templates.Get(a.TemplateName)
		if !ok {
			return nil, mcperr.Invalid("template_name", a.TemplateName, "one of "+strings.Join(d.Templates.Names(), ", "), "no template %q", a.TemplateName)
		}
		pairs := make([]templates.Pair, len(a.TemplateData))
		for i, v := range a.TemplateData {
			pairs[i] = templates.Pair(v)
		}
		data, err := t.Data(pairs, "template_data")
		if err != nil {
			return nil, err
		}
		r, err := t.Render(data)
		if err != nil {
			return nil, err
		}
		subject := r.Subject
		if a.Subject != "" {
			subject = a.Subject
		}
		if a.ReplyToMessageID != "" && a.Subject == "" {
			subject = "" // a reply takes its thread's subject
		}
		body, bodyType := r.HTML, "html"
		if body == "" {
			body, bodyType = r.Text, "text"
		}
		p, err := compose(ctx, d, a.common, subject, body, bodyType, r.Text)
		if err != nil {
			return nil, err
		}
		res, err := deliver(ctx, c, d, p, false)
		if err != nil {
			return nil, err
		}
		res.Template = t.Name
		return res, nil
	})
	return withTo(t)
}

type listTemplatesArgs struct{}

// templateInfo is a template as list_templates describes it.
type templateInfo struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Subject     string         `json:"subject"`
	Variables   []variableInfo `json:"variables"`
	Source      string         `json:"source"`
}

// variableInfo is one declared variable. Items of lists and fields of
// objects follow their variable, named by path (aircraft[].price_usd), so
// the declaration reads as a flat list.
type variableInfo struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Required    bool     `json:"required"`
	Description string   `json:"description,omitempty"`
	MaxLength   int      `json:"max_length,omitempty"`
	Minimum     *float64 `json:"minimum,omitempty"`
	MinItems    int      `json:"min_items,omitempty"`
	MaxItems    int      `json:"max_items,omitempty"`
}

type templatesResult struct {
	Templates []templateInfo `json:"templates"`
}

// flatten lists vars under prefix, sorted by name, each followed by its
// items' or fields' declarations.
func flatten(vars map[string]*templates.Var, prefix string, out []variableInfo) []variableInfo {
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out = flattenVar(vars[n], prefix+n, out)
	}
	return out
}

func flattenVar(v *templates.Var, name string, out []variableInfo) []variableInfo {
	out = append(out, variableInfo{Name: name, Type: v.Type, Required: v.Required, Description: v.Description, MaxLength: v.MaxLength,
		Minimum: v.Minimum, MinItems: v.MinItems, MaxItems: v.MaxItems})
	switch {
	case v.Type == "array" && v.Items != nil && v.Items.Type == "object":
		out = flatten(v.Items.Fields, name+"[].", out)
	case v.Type == "array" && v.Items != nil:
		out = flattenVar(v.Items, name+"[]", out)
	case v.Type == "object":
		out = flatten(v.Fields, name+".", out)
	}
	return out
}

func listTemplates(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "list_templates",
		Title: "List the email templates",
		Description: "List the templates send_template_email can use: each with its description, subject line and variables (name, type, " +
			"whether required, limits). Types: string, number, integer, boolean, date (YYYY-MM-DD), email, array, object. The items of a " +
			"list and the fields of an object follow it, named by path (aircraft[].price_usd); give a list or object as one value, in JSON.",
		Effect: kit.ReadOnly,
	}, func(ctx context.Context, c *kit.Call, _ listTemplatesArgs) (templatesResult, error) {
		out := templatesResult{Templates: []templateInfo{}}
		for _, t := range d.Templates.All() {
			out.Templates = append(out.Templates, templateInfo{Name: t.Name, Description: t.Description, Subject: t.Subject,
				Variables: flatten(t.Variables, "", nil), Source: t.Source})
		}
		return out, nil
	})
}
