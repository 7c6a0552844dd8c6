package argorder

import (
	"slices"
	"testing"
)

func TestNames(t *testing.T) {
	props := map[string]int{"zeta": 1, "alpha": 2, "mode": 3, "beta": 4}
	names, required := Names(props, []string{"zeta", "beta", "gone"})
	if want := []string{"beta", "zeta", "alpha", "mode"}; !slices.Equal(names, want) {
		t.Errorf("order %v, want %v", names, want)
	}
	if !required["zeta"] || !required["beta"] || required["alpha"] || required["mode"] {
		t.Errorf("required %v", required)
	}
	if names, required := Names(map[string]bool{}, nil); len(names) != 0 || len(required) != 0 {
		t.Errorf("no properties: %v %v", names, required)
	}
}
