// Package ident says what may name a placeholder, the same in schema
// description variables ({max}) and resource URI templates ({trip_id}).
package ident

// Is reports whether s is a placeholder name: one or more ASCII letters,
// digits and underscores.
func Is(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
