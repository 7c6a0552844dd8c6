// Package argorder is the order a tool's arguments are documented in, the
// same in the reference docs and in the tool-descriptions prompt: required
// arguments first, each group by name.
package argorder

import (
	"slices"
	"strings"
)

// Names are the property names of an object schema in documentation
// order; required says which of them the schema requires.
func Names[P any](properties map[string]P, requiredList []string) (names []string, required map[string]bool) {
	required = make(map[string]bool, len(requiredList))
	for _, n := range requiredList {
		required[n] = true
	}
	names = make([]string, 0, len(properties))
	for n := range properties {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if required[a] != required[b] {
			if required[a] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return names, required
}
