package airports

import (
	_ "embed"
	"fmt"
	"math"
)

//go:embed airports.tsv
var embedded string

// std is the embedded table. Building it is deferred to the first call that needs it; the
// variable itself costs nothing at start-up.
var std = &table{src: embedded}

// Kind is an airport's OurAirports type.
type Kind uint8

// The kinds in the table, smallest first.
const (
	Small Kind = iota + 1
	Medium
	Large
)

// String returns the OurAirports name of the kind: "small_airport", "medium_airport" or
// "large_airport".
func (k Kind) String() string {
	switch k {
	case Small:
		return "small_airport"
	case Medium:
		return "medium_airport"
	case Large:
		return "large_airport"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// MarshalText makes a Kind appear by its name in JSON.
func (k Kind) MarshalText() ([]byte, error) {
	if k < Small || k > Large {
		return nil, fmt.Errorf("airports: unknown kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// Airport is one airport of the table.
type Airport struct {
	ICAO        string  `json:"icao"`           // four upper-case letters
	IATA        string  `json:"iata,omitempty"` // three upper-case letters, or empty
	Name        string  `json:"name"`
	City        string  `json:"city,omitempty"`
	Country     string  `json:"country"` // ISO 3166-1 alpha-2
	Latitude    float64 `json:"latitude"`
	Longitude   float64 `json:"longitude"`
	ElevationFt int     `json:"elevation_ft"` // 0 where the source has none
	Kind        Kind    `json:"type"`
	Scheduled   bool    `json:"scheduled_service"`
}

// Lookup finds an airport by its ICAO code (four letters) or IATA code (three letters). Case and
// surrounding space in code are ignored; the Airport carries the codes in upper case. Where two
// airports share an IATA code the larger (then the one with scheduled service, then the first by
// ICAO code) answers.
func Lookup(code string) (Airport, bool) { return std.lookup(code) }

// Search returns up to limit airports matching query, best first:
//
//  1. the airport whose ICAO or IATA code is the query;
//  2. airports whose name or city begins with the query;
//  3. airports with a word of the name or city, or a code, beginning with the query ("bourget"
//     finds Paris-Le Bourget, "LF" the French airports);
//  4. for a query of several words, airports where each word begins a word of the name, the
//     city or a code ("geneva airport", "new york jfk");
//  5. airports whose name or city contains the query anywhere.
//
// Comparison ignores case, accents and punctuation ("zurich" finds Zürich, "le bourget" finds
// Paris-Le Bourget). Within a rank, large airports come before medium and small ones, airports
// with scheduled service before those without, then ICAO order, so the same query always gets the
// same answer. A limit below 1 means DefaultLimit; above MaxLimit, MaxLimit. Only the first
// MaxQueryLen bytes of the query are used, and the work per call is one pass over the table at
// most. A query with no letter or digit finds nothing.
func Search(query string, limit int) []Airport { return std.search(query, limit) }

// Search limits.
const (
	DefaultLimit = 10
	MaxLimit     = 100
	MaxQueryLen  = 100
)

// Count returns the number of airports in the table.
func Count() int { return std.count() }

// Earth's mean radius (IUGG), and the nautical mile, in kilometres.
const (
	earthRadiusKm = 6371.0088
	kmPerNM       = 1.852
)

// Distance returns the great-circle distance between two airports in kilometres and nautical
// miles, on a sphere of Earth's mean radius (haversine formula). It is within 0.5% of the
// ellipsoidal distance, which is what flight-time and price estimates need.
func Distance(a, b Airport) (km, nm float64) {
	const rad = math.Pi / 180
	φ1, φ2 := a.Latitude*rad, b.Latitude*rad
	dφ := φ2 - φ1
	dλ := (b.Longitude - a.Longitude) * rad
	h := sq(math.Sin(dφ/2)) + math.Cos(φ1)*math.Cos(φ2)*sq(math.Sin(dλ/2))
	km = 2 * earthRadiusKm * math.Asin(math.Sqrt(math.Min(1, h)))
	return km, km / kmPerNM
}

func sq(x float64) float64 { return x * x }
