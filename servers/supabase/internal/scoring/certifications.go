package scoring

import (
	"bytes"
	"encoding/json"
	"math/big"
	"regexp"
	"strings"
)

// Certification is a safety certification safety_rating may name instead
// of a number, and the 0–5 rating it stands for.
type Certification struct {
	Name   string
	Rating string // exact decimal
}

// certifications is the one mapping; the PostgreSQL function carries the
// same table (migration 0002), and the cross-backend test checks every
// entry on every backend. The top level of each audit scheme is 5.0: ARGUS
// Platinum, Wyvern Wingman and IS-BAO Stage 3 certify the same standard of
// operation; the levels below step down by a half point.
var certifications = []Certification{
	{"ARGUS Platinum", "5.0"},
	{"Wyvern Wingman", "5.0"},
	{"IS-BAO Stage 3", "5.0"},
	{"ARGUS Gold+", "4.5"},
	{"IS-BAO Stage 2", "4.5"},
	{"ARGUS Gold", "4.0"},
	{"IS-BAO Stage 1", "4.0"},
	{"IS-BAO", "4.0"},
	{"ARGUS Silver", "3.5"},
}

// Certifications lists the accepted certifications and their ratings, best
// first.
func Certifications() []Certification { return append([]Certification(nil), certifications...) }

// AcceptedCertifications is the list an unknown certification's error gives.
func AcceptedCertifications() string {
	names := make([]string, len(certifications))
	for i, c := range certifications {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// certKey is a certification's name as matched: ASCII letters lowercased,
// "+" read as "plus", and everything but ASCII letters and digits dropped,
// so "argus gold plus", "ARGUS Gold+" and "Argus-Gold+" are one name. Only
// ASCII is folded, as PostgreSQL's lower() under the "C" collation does.
func certKey(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == '+':
			b.WriteString("plus")
		}
	}
	return b.String()
}

var certRatings = func() map[string]*big.Rat {
	m := make(map[string]*big.Rat, len(certifications))
	for _, c := range certifications {
		r, ok := new(big.Rat).SetString(c.Rating)
		if !ok {
			panic("scoring: bad rating " + c.Rating)
		}
		m[certKey(c.Name)] = r
	}
	return m
}()

// numericText is a string safety_rating read as a number; anything else
// is a certification's name. The PostgreSQL function uses the same pattern.
var numericText = regexp.MustCompile(`^[ \t\n\r]*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[ \t\n\r]*$`)

// safetyRating reads safety_rating: a number, a numeric string, or the
// name of a certification; ok is false for a missing value or null.
func safetyRating(where string, raw json.RawMessage) (*big.Rat, bool, error) {
	field := where + ".safety_rating"
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, nil
	}
	if raw[0] == '{' || raw[0] == '[' || raw[0] == 't' || raw[0] == 'f' {
		return nil, false, bad("%s must be a number or a safety certification", field)
	}
	if raw[0] != '"' {
		return number(field, raw)
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, false, bad("%s is not valid JSON", field)
	}
	if numericText.MatchString(text) {
		return number(field, raw)
	}
	if r, ok := certRatings[certKey(text)]; ok {
		return new(big.Rat).Set(r), true, nil
	}
	return nil, false, bad("%s: unknown safety certification (expected a 0-5 number or one of %s)", field, AcceptedCertifications())
}
