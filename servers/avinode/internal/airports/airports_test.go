package airports

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	// Importing the package must not parse the table: nothing has called into it yet.
	if std.idx != nil {
		fmt.Fprintln(os.Stderr, "the airport table was built before its first use")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func TestLookupKnownAirports(t *testing.T) {
	tests := []struct {
		code                   string
		icao, iata, name, city string
		country                string
		kind                   Kind
		lat, lon               float64
	}{
		{"KTEB", "KTEB", "TEB", "Teterboro Airport", "Teterboro", "US", Medium, 40.8501, -74.0608},
		{"EGLL", "EGLL", "LHR", "London Heathrow Airport", "London", "GB", Large, 51.4706, -0.4619},
		{"LFPB", "LFPB", "LBG", "Paris-Le Bourget Airport", "Paris (Le Bourget, Seine-Saint-Denis)", "FR", Medium, 48.9694, 2.4414},
		{"KVNY", "KVNY", "VNY", "Van Nuys Airport", "Van Nuys", "US", Medium, 34.2098, -118.49},
		{"LSGG", "LSGG", "GVA", "Geneva Cointrin International Airport", "Geneva", "CH", Large, 46.2381, 6.1090},
		{"EDDF", "EDDF", "FRA", "Frankfurt Airport", "Frankfurt am Main", "DE", Large, 50.0302, 8.5611},
		{"OMDB", "OMDB", "DXB", "Dubai International Airport", "Dubai", "AE", Large, 25.2528, 55.3644},
		{"VHHH", "VHHH", "HKG", "Hong Kong International Airport", "Hong Kong", "HK", Large, 22.3089, 113.915},
		{"LSZH", "LSZH", "ZRH", "Zürich Airport", "Zurich", "CH", Large, 47.4581, 8.5481},
		{"EGGW", "EGGW", "LTN", "London Luton Airport", "Luton, Bedfordshire", "GB", Large, 51.8747, -0.3683},
		// A small airport that is in the table for its jet-capable runway alone.
		{"KSDL", "KSDL", "SCF", "Scottsdale Airport", "Scottsdale", "US", Small, 33.6229, -111.911},
		// Recoded airport: the current code, not the superseded ident, is the key.
		{"SPJC", "SPJC", "LIM", "Jorge Chávez International Airport", "Lima", "PE", Large, -12.0219, -77.1143},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			a, ok := Lookup(tt.code)
			if !ok {
				t.Fatalf("Lookup(%q): not found", tt.code)
			}
			if a.ICAO != tt.icao || a.IATA != tt.iata || a.Name != tt.name || a.City != tt.city || a.Country != tt.country || a.Kind != tt.kind {
				t.Errorf("Lookup(%q) = %+v", tt.code, a)
			}
			if math.Abs(a.Latitude-tt.lat) > 0.01 || math.Abs(a.Longitude-tt.lon) > 0.01 {
				t.Errorf("Lookup(%q) at %v,%v; want about %v,%v", tt.code, a.Latitude, a.Longitude, tt.lat, tt.lon)
			}
		})
	}
}

func TestLookupByIATAAndCase(t *testing.T) {
	for _, code := range []string{"LHR", "lhr", "Lhr", " EGLL ", "egll", "\tlhr\n"} {
		a, ok := Lookup(code)
		if !ok || a.ICAO != "EGLL" || a.IATA != "LHR" {
			t.Errorf("Lookup(%q) = %+v, %v; want EGLL/LHR", code, a, ok)
		}
	}
	for code, icao := range map[string]string{"teb": "KTEB", "LBG": "LFPB", "vny": "KVNY", "GVA": "LSGG", "DXB": "OMDB", "HKG": "VHHH", "ZRH": "LSZH"} {
		if a, ok := Lookup(code); !ok || a.ICAO != icao {
			t.Errorf("Lookup(%q) = %q, %v; want %s", code, a.ICAO, ok, icao)
		}
	}
}

func TestLookupMisses(t *testing.T) {
	for _, code := range []string{"", "EG", "EGLLX", "E-LL", "EGL!", "ZZZZ", "QQQ", "K00A", "123", "ÉGLL", "   "} {
		if a, ok := Lookup(code); ok {
			t.Errorf("Lookup(%q) = %+v; want no airport", code, a)
		}
	}
}

func TestEveryAirportResolves(t *testing.T) {
	x := std.get()
	n := Count()
	iatas := 0
	for i := 0; i < n; i++ {
		a := x.airport(i)
		got, ok := Lookup(a.ICAO)
		if !ok || got != a {
			t.Fatalf("Lookup(%q) = %+v, %v; want %+v", a.ICAO, got, ok, a)
		}
		if a.Name == "" || len(a.Country) != 2 || a.Kind < Small || a.Kind > Large {
			t.Fatalf("airport %d incomplete: %+v", i, a)
		}
		if a.IATA != "" {
			iatas++
			byIATA, ok := Lookup(a.IATA)
			if !ok || byIATA.IATA != a.IATA {
				t.Fatalf("Lookup(%q) = %+v, %v", a.IATA, byIATA, ok)
			}
			if byIATA.ICAO != a.ICAO && importance(byIATA) < importance(a) {
				t.Errorf("IATA %s answers with %s, less important than %s", a.IATA, byIATA.ICAO, a.ICAO)
			}
		}
	}
	if iatas < 4000 {
		t.Errorf("only %d airports with an IATA code", iatas)
	}
}

func importance(a Airport) int {
	r := int(a.Kind) * 2
	if a.Scheduled {
		r++
	}
	return r
}

func TestCount(t *testing.T) {
	n := Count()
	if n < 5000 {
		t.Fatalf("Count() = %d; want at least 5000", n)
	}
	if lines := strings.Count(embedded, "\n") - 1; n != lines {
		t.Errorf("Count() = %d; the table has %d airport lines", n, lines)
	}
}

func TestEmbeddedTableMatchesItsChecksum(t *testing.T) {
	// gen writes the table and its checksum together; a table edited by hand, or regenerated
	// without its checksum, fails here.
	want, err := os.ReadFile("airports.tsv.sha256")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(embedded))
	if got := hex.EncodeToString(sum[:]) + "  airports.tsv\n"; got != string(want) {
		t.Errorf("sha256 of the embedded table:\n%s\nrecorded:\n%s", got, want)
	}
	if !strings.HasPrefix(embedded, header+"\n") {
		t.Errorf("the embedded table does not start with the header %q", header)
	}
}

func TestDistance(t *testing.T) {
	get := func(code string) Airport {
		t.Helper()
		a, ok := Lookup(code)
		if !ok {
			t.Fatalf("no %s", code)
		}
		return a
	}
	// References: the WGS-84 geodesic between the same two points (Karney's algorithm, as
	// GeographicLib computes it); a sphere may be off by up to 0.5%.
	tests := []struct {
		a, b string
		km   float64
	}{
		{"KTEB", "EGGW", 5550.67},
		{"EGLL", "OMDB", 5504.72},
		{"KVNY", "VHHH", 11658.54},
	}
	for _, tt := range tests {
		a, b := get(tt.a), get(tt.b)
		km, nm := Distance(a, b)
		if math.Abs(km-tt.km)/tt.km > 0.01 {
			t.Errorf("Distance(%s, %s) = %.1f km; want within 1%% of %.1f", tt.a, tt.b, km, tt.km)
		}
		if math.Abs(nm*1.852-km) > 1e-9 {
			t.Errorf("Distance(%s, %s): %.3f nm is not %.3f km", tt.a, tt.b, nm, km)
		}
		if back, _ := Distance(b, a); math.Abs(back-km) > 1e-9 {
			t.Errorf("Distance is not symmetric: %v vs %v", km, back)
		}
	}
	if km, nm := Distance(get("LFPB"), get("LFPB")); km != 0 || nm != 0 {
		t.Errorf("distance of an airport to itself = %v km, %v nm", km, nm)
	}
	// Antipodes: half the circumference, with no NaN from rounding past 1.
	km, _ := Distance(Airport{Latitude: 90}, Airport{Latitude: -90})
	if want := math.Pi * earthRadiusKm; math.Abs(km-want) > 1e-6 {
		t.Errorf("pole to pole = %v km; want %v", km, want)
	}
}

func TestKindNames(t *testing.T) {
	for k, want := range map[Kind]string{Small: "small_airport", Medium: "medium_airport", Large: "large_airport", 9: "Kind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q; want %q", k, got, want)
		}
	}
	if _, err := Kind(0).MarshalText(); err == nil {
		t.Error("MarshalText of an unknown kind succeeded")
	}
	a, _ := Lookup("KTEB")
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"icao":"KTEB","iata":"TEB","name":"Teterboro Airport","city":"Teterboro","country":"US","latitude":40.8501,"longitude":-74.0608,"elevation_ft":9,"type":"medium_airport","scheduled_service":true}`
	if string(b) != want {
		t.Errorf("JSON:\n%s\nwant\n%s", b, want)
	}
}

func TestTableIsBuiltOnFirstUse(t *testing.T) {
	tb := &table{src: embedded}
	if tb.idx != nil {
		t.Fatal("index built before use")
	}
	if _, ok := tb.lookup("LSGG"); !ok {
		t.Fatal("LSGG not found")
	}
	if tb.idx == nil {
		t.Fatal("index not kept after first use")
	}
	first := tb.idx
	tb.count()
	if tb.idx != first {
		t.Error("index rebuilt on second use")
	}
}

func TestCorruptTablePanicsWithTheReason(t *testing.T) {
	tb := &table{src: header + "\nKTEB\tTEB\n"}
	defer func() {
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, "line 2: 2 fields") {
			t.Errorf("panic %v; want the line and what is wrong", r)
		}
	}()
	tb.count()
	t.Error("no panic")
}

func TestParseRejects(t *testing.T) {
	good := "KTEB\tTEB\tUS\tmedium\t1\t40.8501\t-74.0608\t9\tTeterboro Airport\tTeterboro"
	with := func(field int, v string) string {
		f := strings.Split(good, "\t")
		f[field] = v
		return header + "\n" + strings.Join(f, "\t") + "\n"
	}
	tests := []struct {
		name, src, want string
	}{
		{"empty", "", "line 1"},
		{"other header", "code\tname\nKTEB\tx\n", "line 1"},
		{"no airports", header + "\n", "no airports"},
		{"unterminated", header + "\n" + good, "not terminated"},
		{"few fields", header + "\nKTEB\tTEB\n", "line 2: 2 fields"},
		{"many fields", header + "\n" + good + "\textra\n", "line 2: 11 fields"},
		{"icao", with(0, "KTE"), `icao "KTE"`},
		{"icao case", with(0, "kteb"), `icao "kteb"`},
		{"iata", with(1, "TE1"), `iata "TE1"`},
		{"country", with(2, "USA"), `country "USA"`},
		{"type", with(3, "heliport"), `type "heliport"`},
		{"scheduled", with(4, "yes"), `scheduled "yes"`},
		{"latitude", with(5, "91"), `latitude "91"`},
		{"latitude syntax", with(5, "N40"), `latitude "N40"`},
		{"longitude", with(6, "-180.5"), `longitude "-180.5"`},
		{"longitude NaN", with(6, "NaN"), `longitude "NaN"`},
		{"elevation", with(7, "9.5"), `elevation_ft "9.5"`},
		{"name", with(8, ""), "name: empty"},
		{"order", header + "\n" + good + "\n" + good + "\n", `line 3: icao "KTEB" is not after "KTEB"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parse error %v; want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := parse(header + "\n" + good + "\n"); err != nil {
		t.Errorf("a valid one-line table: %v", err)
	}
}

func TestParseRefusesMoreAirportsThanTheIndexHolds(t *testing.T) {
	_, err := parse(header + "\n" + strings.Repeat("\n", math.MaxUint16+1))
	if err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("parse error %v; want the index limit", err)
	}
}

// TestBusinessAviationSearch: the airports private charters use are in the table, and the names
// people give them — local spellings, abbreviations, resorts — find them first.
func TestBusinessAviationSearch(t *testing.T) {
	for _, tc := range []struct{ query, icao string }{
		{"LFLJ", "LFLJ"}, {"Courchevel", "LFLJ"},
		{"KHTO", "KHTO"}, {"East Hampton", "KHTO"},
		{"TFFJ", "TFFJ"}, {"St. Barthélemy", "TFFJ"}, {"St Barth", "TFFJ"}, {"Saint-Barthélemy", "TFFJ"}, {"st barths", "TFFJ"},
		{"München", "EDDM"}, {"Munchen", "EDDM"}, {"Munich", "EDDM"},
		{"Gstaad", "LSGK"}, {"Saanen", "LSGK"}, {"Vail", "KEGE"}, {"Aspen", "KASE"}, {"St. Moritz", "LSZS"},
		{"Teterboro", "KTEB"}, {"Van Nuys", "KVNY"}, {"Le Bourget", "LFPB"}, {"Farnborough", "EGLF"},
		{"Nice", "LFMN"}, {"Geneva", "LSGG"}, {"Genève", "LSGG"}, {"Sion", "LSGS"}, {"Palm Beach", "KPBI"},
		{"Nantucket", "KACK"}, {"Cannes", "LFMD"}, {"Olbia", "LIEO"}, {"Ibiza", "LEIB"}, {"Mykonos", "LGMK"},
	} {
		got := Search(tc.query, 3)
		if len(got) == 0 || got[0].ICAO != tc.icao {
			var codes []string
			for _, a := range got {
				codes = append(codes, a.ICAO+" "+a.Name)
			}
			t.Errorf("Search(%q) = %v; want %s first", tc.query, codes, tc.icao)
		}
	}
	for code := range aliases {
		if a, ok := Lookup(code); !ok || a.ICAO != code {
			t.Errorf("alias for %s, which the table lacks", code)
		}
	}
}
