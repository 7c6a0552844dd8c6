package query

import (
	"strings"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// MaxIdent is PostgreSQL's identifier length.
const MaxIdent = 63

// IdentPattern is the strict pattern every schema, table, column and function
// name must match: a letter or underscore, then letters, digits and
// underscores. No quotes, dots, spaces or operators can pass it.
const IdentPattern = "^[A-Za-z_][A-Za-z0-9_]{0,62}$"

// ValidIdent reports whether s matches IdentPattern.
func ValidIdent(s string) bool {
	if len(s) == 0 || len(s) > MaxIdent {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// CheckIdent returns a VALIDATION_ERROR naming field when s is not a valid
// identifier.
func CheckIdent(field, what, s string) error {
	if ValidIdent(s) {
		return nil
	}
	shown := s
	if len(shown) > 80 {
		shown = shown[:80] + "…"
	}
	return mcperr.Invalid(field, shown, "a name matching "+IdentPattern,
		"%s %q is not a valid name: letters, digits and underscores only, starting with a letter or underscore, at most %d characters",
		what, shown, MaxIdent)
}

// QuoteIdent quotes a checked identifier for SQL. It doubles any quote for
// safety, although a checked identifier holds none.
func QuoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// IsSystemName reports names that belong to the database system rather than
// to an application: PostgreSQL reserves the pg_ prefix for its own schemas,
// functions and roles.
func IsSystemName(s string) bool {
	return strings.HasPrefix(strings.ToLower(s), "pg_")
}
