// Package suggest finds the name a mistyped one was probably meant to be,
// for errors that end "did you mean …?": flags, commands, tools, agents.
package suggest

import (
	"fmt"
	"strings"
)

// Closest returns "; did you mean "c"?" for the candidate nearest to v by
// edit distance (case ignored) when one is near enough — within about half
// of v's length — and differs from v; otherwise "".
func Closest(v string, candidates []string) string {
	best, bestD := "", len(v)/2+2
	for _, c := range candidates {
		if d := distance(strings.ToLower(v), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || best == v {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
