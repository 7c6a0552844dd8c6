package suggest

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"read-only", "tools", "trip_quotes", "flight_search"}
	for _, c := range []struct{ in, want string }{
		{"read-onyl", `; did you mean "read-only"?`},
		{"TOOLS", `; did you mean "tools"?`},
		{"trip_qoutes", `; did you mean "trip_quotes"?`},
		{"tools", ""},      // the name itself
		{"frobnicate", ""}, // nothing near
		{"fligth_search", `; did you mean "flight_search"?`},
	} {
		if got := Closest(c.in, names); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if distance("kitten", "sitting") != 3 || distance("", "abc") != 3 {
		t.Error("distance")
	}
}
