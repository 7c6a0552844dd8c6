package tools

import (
	"context"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/templates"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/schema"
)

// TemplateTools returns list_templates.
func TemplateTools(d Deps) []kit.Tool { return []kit.Tool{listTemplates(d)} }

type templateArgs struct {
	common
	TemplateName string         `json:"template_name" jsonschema:"the template (list_templates describes each and the data it needs)" mcp:"enum={names}"`
	TemplateData map[string]any `json:"template_data" jsonschema:"the template's variables: names, types and which are required are in list_templates"`
	Subject      string         `json:"subject,omitempty" jsonschema:"replaces the template's subject line (not for replies, which keep the thread's subject)" mcp:"maxLength=998"`
}

func sendTemplateEmail(d Deps) kit.Tool {
	names := strings.Join(d.Templates.Names(), "|")
	return kit.Tool{
		Name:  "send_template_email",
		Title: "Send a templated email",
		Description: "Send an email made from a template (" + strings.Join(d.Templates.Names(), ", ") + ") with the data given in template_data: " +
			"an HTML body whose values are escaped, a plain-text alternative and a subject line. Each template declares its variables (list_templates): " +
			"a missing, mistyped or unknown one is a VALIDATION_ERROR naming it, and nothing is sent. Recipients, attachments, Reply-To and " +
			"reply_to_message_id work as in send_email. " + sendReturns + " Also returns template.",
		InputSchema:   withProperty(schema.MustFor[templateArgs](schema.Vars{"names": names}), "to", toSchema),
		Effect:        kit.Additive,
		OpenWorld:     d.OpenWorld,
		Timeout:       2 * time.Minute,
		MaxConcurrent: 4,
		AuditOmit:     []string{"template_data", "attachments"},
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a templateArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			t, ok := d.Templates.Get(a.TemplateName)
			if !ok {
				return nil, mcperr.Invalid("template_name", a.TemplateName, "one of "+strings.Join(d.Templates.Names(), ", "), "no template %q", a.TemplateName)
			}
			r, err := t.Render(a.TemplateData)
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
		},
	}
}

type listTemplatesArgs struct{}

func listTemplates(d Deps) kit.Tool {
	return kit.Tool{
		Name:  "list_templates",
		Title: "List the email templates",
		Description: "List the templates send_template_email can use: each with its description, subject line and variables (type, whether " +
			"required, limits, and for lists and objects their items and fields). Types: string, number, integer, boolean, date (YYYY-MM-DD), " +
			"email, array, object.",
		InputSchema: schema.MustFor[listTemplatesArgs](),
		Effect:      kit.ReadOnly,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			return map[string][]*templates.Template{"templates": d.Templates.All()}, nil
		},
	}
}
