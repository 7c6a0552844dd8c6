package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/internal/ident"
	"github.com/rs/zerolog"
)

// Resource is a static resource: one URI, its definition and its reader.
// Resources go through the same pipeline as tools: ACL, audit line, metrics
// and a time limit.
type Resource struct {
	URI string
	// Name is the resource's short identifier; the ACL policy uses it.
	Name        string
	Title       string
	Description string
	MIMEType    string
	// Tools ties the resource to a tool family: an agent whose policy entry
	// lists no resources may read it when it may call any of these tools.
	// With no Tools, only agents whose policy lists the resource by name can
	// read it (and everyone when no policy is configured).
	Tools   []string
	Timeout time.Duration
	Read    ReadFunc
}

// ResourceTemplate is a family of resources named by a URI template such as
// "file:///{path}" or "avinode://trips/{id}/quotes". Each {name} matches up
// to the template's next literal text (to the end when there is none, slashes
// included); matched values are percent-decoded.
type ResourceTemplate struct {
	URITemplate string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Tools       []string
	Timeout     time.Duration
	Read        ReadFunc
	// List, when set, names concrete resources of the template for
	// resources/list; it should return a bounded, recent set.
	List func(ctx context.Context, agent string) ([]ResourceInfo, error)
	// Watch, when set, is called when the first client subscribes to a URI
	// of the template; the kit calls the returned stop when the last one
	// leaves. The owner then calls Notifier.Updated(uri) on every change.
	// An error refuses the subscription with its message.
	Watch func(uri string, vars map[string]string) (stop func(), err error)

	parts []tmplPart
}

// ReadFunc reads a resource. An *mcperr.Error of code NOT_FOUND (or a
// Coded error saying so) answers "resource not found"; other errors are
// reported with their code.
type ReadFunc func(ctx context.Context, r *ReadRequest) ([]Contents, error)

// ReadRequest is one resources/read as a reader sees it.
type ReadRequest struct {
	URI string
	// Vars are the template's values, decoded ({} for a static resource).
	Vars  map[string]string
	Agent string
	Log   *zerolog.Logger
}

// Contents is one item of a read result: Text, or Blob for binary content.
type Contents struct {
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
}

// ResourceInfo is one entry of resources/list.
type ResourceInfo struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Size        int64  `json:"size,omitempty"`
}

// MarshalJSON writes the wire form: text, or base64 blob.
func (c Contents) MarshalJSON() ([]byte, error) {
	v := struct {
		URI      string  `json:"uri"`
		MIMEType string  `json:"mimeType,omitempty"`
		Text     *string `json:"text,omitempty"`
		Blob     string  `json:"blob,omitempty"`
	}{URI: c.URI, MIMEType: c.MIMEType}
	if c.Blob != nil {
		v.Blob = base64.StdEncoding.EncodeToString(c.Blob)
	} else {
		v.Text = &c.Text
	}
	return json.Marshal(v)
}

type tmplPart struct {
	literal string // text, or "" for an expression
	name    string
}

func parseTemplate(t string) ([]tmplPart, error) {
	var parts []tmplPart
	for t != "" {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			parts = append(parts, tmplPart{literal: t})
			break
		}
		if i > 0 {
			parts = append(parts, tmplPart{literal: t[:i]})
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("unclosed { in URI template")
		}
		name := strings.TrimLeft(t[i+1:i+j], "+")
		if !ident.Is(name) {
			return nil, fmt.Errorf("template expression {%s}: want {name} or {+name}", t[i+1:i+j])
		}
		if len(parts) > 0 && parts[len(parts)-1].literal == "" {
			return nil, fmt.Errorf("two expressions need literal text between them")
		}
		parts = append(parts, tmplPart{name: name})
		t = t[i+j+1:]
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("empty URI template")
	}
	return parts, nil
}

// match reports whether uri is an instance of the template, with its values.
func (t *ResourceTemplate) match(uri string) (map[string]string, bool) {
	vars := map[string]string{}
	rest := uri
	for i, p := range t.parts {
		if p.literal != "" {
			if !strings.HasPrefix(rest, p.literal) {
				return nil, false
			}
			rest = rest[len(p.literal):]
			continue
		}
		end := len(rest)
		if i+1 < len(t.parts) {
			end = strings.Index(rest, t.parts[i+1].literal)
			if end < 0 {
				return nil, false
			}
		}
		raw := rest[:end]
		if raw == "" {
			return nil, false
		}
		v, err := url.PathUnescape(raw)
		if err != nil {
			return nil, false
		}
		vars[p.name] = v
		rest = rest[end:]
	}
	return vars, rest == ""
}

func (r *Resource) check() error {
	if r.URI == "" || r.Name == "" || r.Read == nil {
		return fmt.Errorf("resource %q: URI, Name and Read are required", r.URI)
	}
	if _, err := url.Parse(r.URI); err != nil {
		return fmt.Errorf("resource %q: %w", r.URI, err)
	}
	return nil
}

func (t *ResourceTemplate) check() error {
	if t.URITemplate == "" || t.Name == "" || t.Read == nil {
		return fmt.Errorf("resource template %q: URITemplate, Name and Read are required", t.URITemplate)
	}
	parts, err := parseTemplate(t.URITemplate)
	if err != nil {
		return fmt.Errorf("resource template %q: %w", t.URITemplate, err)
	}
	t.parts = parts
	return nil
}
