package postgrestfake

import (
	"math/rand/v2"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
)

// randomValue draws strings rich in the characters PostgREST's grammar
// treats specially.
func randomValue(r *rand.Rand) string {
	const alphabet = `ab,.:()"\{} 	*%_-+&=?#é✈`
	n := r.IntN(8)
	var b strings.Builder
	for range n {
		runes := []rune(alphabet)
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	return b.String()
}

// TestRendererRoundTrip: whatever values the renderer puts in a query
// string, PostgREST's grammar reads back exactly — in simple filters, in
// in.(…) lists, and in or/and trees — after form encoding and decoding.
func TestRendererRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		v1, v2, v3 := randomValue(r), randomValue(r), randomValue(r)
		where := query.Group{Items: []query.Node{
			{Cond: &query.Cond{Column: "a", Op: query.Eq, Value: query.Value{Kind: query.String, Text: v1}}},
			{Cond: &query.Cond{Column: "b", Op: query.In, Not: i%2 == 0, List: []query.Value{{Kind: query.String, Text: v2}, {Kind: query.String, Text: v3}}}},
			{Group: &query.Group{Or: true, Items: []query.Node{
				{Cond: &query.Cond{Column: "c", Op: query.Like, Value: query.Value{Kind: query.String, Text: v3}}},
				{Cond: &query.Cond{Column: "d", Op: query.In, List: []query.Value{{Kind: query.String, Text: v1}}}},
				{Group: &query.Group{Items: []query.Node{
					{Cond: &query.Cond{Column: "e", Op: query.Neq, Value: query.Value{Kind: query.String, Text: v2}}},
					{Cond: &query.Cond{Column: "f", Op: query.Is, Value: query.Value{Kind: query.Null, Text: "null"}}},
				}}},
			}}},
		}}
		req := query.PostgRESTSelect(&query.Select{Table: "t", Items: []query.Item{{Star: true}}, Where: where, Limit: 5})
		raw := req.RawQuery()
		got, err := parseRequest(raw)
		if err != nil {
			t.Fatalf("values %q %q %q: %s does not parse: %v", v1, v2, v3, raw, err)
		}
		if !reflect.DeepEqual(got.where, where) {
			t.Fatalf("values %q %q %q: %s\nread back %+v", v1, v2, v3, raw, got.where)
		}
		if got.limit != 6 {
			t.Fatalf("limit %d", got.limit)
		}
	}
}

func TestGrammar(t *testing.T) {
	tests := []struct {
		query string
		want  query.Group
	}{
		{"a=eq.x,y)z", query.Group{Items: []query.Node{{Cond: &query.Cond{Column: "a", Op: query.Eq, Value: query.Value{Text: "x,y)z"}}}}}},
		{"a=in.(%20x,%22y,z%22,w)", query.Group{Items: []query.Node{{Cond: &query.Cond{Column: "a", Op: query.In,
			List: []query.Value{{Text: "x"}, {Text: "y,z"}, {Text: "w"}}}}}}},
		{"or=(a.eq.1,%20b.is.NULL%20,and(c.gt.%7B1,2%7D,d.lt.%22%5C%22q%22))", query.Group{Items: []query.Node{{Group: &query.Group{Or: true, Items: []query.Node{
			{Cond: &query.Cond{Column: "a", Op: query.Eq, Value: query.Value{Text: "1"}}},
			{Cond: &query.Cond{Column: "b", Op: query.Is, Value: query.Value{Kind: query.Null, Text: "null"}}},
			{Group: &query.Group{Items: []query.Node{
				{Cond: &query.Cond{Column: "c", Op: query.Gt, Value: query.Value{Text: "{1,2}"}}},
				{Cond: &query.Cond{Column: "d", Op: query.Lt, Value: query.Value{Text: `"q`}}},
			}}},
		}}}}}},
		{"a=not.is.true", query.Group{Items: []query.Node{{Cond: &query.Cond{Column: "a", Op: query.Is, Not: true, Value: query.Value{Kind: query.Null, Text: "true"}}}}}},
	}
	for _, tc := range tests {
		got, err := parseRequest(tc.query)
		if err != nil || !reflect.DeepEqual(got.where, tc.want) {
			t.Errorf("%s: %+v %v", tc.query, got, err)
		}
	}
	for _, bad := range []string{"a=xx.1", "a=is.maybe", "a=in.1,2", "or=(a.eq.1", "or=a.eq.1", "not.or=(a.eq.1)", "or=(a)", "a=in.(x",
		"order=a.sideways", "limit=-1", "offset=x", "columns=a b", "a%20b=eq.1", "or=(a.eq.1)x", "on_conflict=%22a"} {
		if _, err := parseRequest(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
	if _, err := params("a=%zz"); err == nil {
		t.Error("bad escape accepted")
	}
	o, err := orderParam("a.desc.nullsfirst,b,c.nullslast")
	if err != nil || !reflect.DeepEqual(o, []query.Order{{Column: "a", Desc: true, Nulls: "first"}, {Column: "b"}, {Column: "c", Nulls: "last"}}) {
		t.Errorf("order %v %v", o, err)
	}
	if v, _ := url.QueryUnescape("a+b"); v != "a b" {
		t.Errorf("+ is a space: %q", v)
	}
}
