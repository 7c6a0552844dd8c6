package ident

import "testing"

func TestIs(t *testing.T) {
	for s, want := range map[string]bool{
		"trip_id": true, "max": true, "A9": true, "_": true,
		"": false, "trip-id": false, "a b": false, "+name": false, "é": false, "{x}": false,
	} {
		if got := Is(s); got != want {
			t.Errorf("Is(%q) = %v, want %v", s, got, want)
		}
	}
}
