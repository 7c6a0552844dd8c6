package validate

import "encoding/json"

// OpenAI's strict mode makes every property required and lets a model send
// null for the ones the tool marked optional; other hosts send null for "not
// given" too. An optional property whose schema does not itself accept null
// is therefore read as absent: the null is removed before validation, so the
// call behaves as if the key were left out (and the tool's default applies).

// nullNode is what the removal needs of one schema node: which properties
// are required, the schemas of the properties and of array items, and
// whether null is a value the node accepts.
type nullNode struct {
	required  map[string]bool
	props     map[string]*nullNode
	items     *nullNode
	allowNull bool
}

func nullTree(raw json.RawMessage) *nullNode {
	var s struct {
		Type       json.RawMessage            `json:"type"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
		Items      json.RawMessage            `json:"items"`
		AnyOf      []json.RawMessage          `json:"anyOf"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	n := &nullNode{required: map[string]bool{}, allowNull: acceptsNull(s.Type)}
	for _, a := range s.AnyOf {
		var t struct {
			Type json.RawMessage `json:"type"`
		}
		if json.Unmarshal(a, &t) == nil && acceptsNull(t.Type) {
			n.allowNull = true
		}
	}
	for _, r := range s.Required {
		n.required[r] = true
	}
	if len(s.Properties) > 0 {
		n.props = make(map[string]*nullNode, len(s.Properties))
		for k, p := range s.Properties {
			n.props[k] = nullTree(p)
		}
	}
	if len(s.Items) > 0 {
		n.items = nullTree(s.Items)
	}
	return n
}

func acceptsNull(t json.RawMessage) bool {
	var one string
	if json.Unmarshal(t, &one) == nil {
		return one == "null"
	}
	var many []string
	if json.Unmarshal(t, &many) == nil {
		for _, x := range many {
			if x == "null" {
				return true
			}
		}
	}
	return false
}

// DropOptionalNulls removes, in place, every null given for an optional
// property whose schema does not accept null, at any depth of v (arguments
// as Decode returns them). It reports whether it removed any.
func (s *Schema) DropOptionalNulls(v any) bool {
	if s == nil || s.nulls == nil {
		return false
	}
	return s.nulls.drop(v)
}

func (n *nullNode) drop(v any) bool {
	if n == nil {
		return false
	}
	dropped := false
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			p := n.props[k]
			if val == nil {
				if !n.required[k] && p != nil && !p.allowNull {
					delete(x, k)
					dropped = true
				}
				continue
			}
			if p.drop(val) {
				dropped = true
			}
		}
	case []any:
		for _, e := range x {
			if n.items.drop(e) {
				dropped = true
			}
		}
	}
	return dropped
}
