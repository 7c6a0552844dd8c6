// Package textcut shortens text to a bound in bytes without splitting a
// UTF-8 character: for names, queries and messages the fleet repeats (in
// errors, stored failure reasons, fence labels) only up to a length.
package textcut

import "unicode/utf8"

// Prefix returns the longest prefix of s that is at most n bytes long and
// does not end inside a character.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Ellipsis returns s when it is at most n bytes long, and otherwise its
// Prefix of n bytes followed by "…", which says that it was cut.
func Ellipsis(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n) + "…"
}
