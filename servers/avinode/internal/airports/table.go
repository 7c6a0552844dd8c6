package airports

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// header is the first line the table must have; gen writes the same.
const header = "icao\tiata\tcountry\ttype\tscheduled\tlatitude\tlongitude\televation_ft\tname\tcity"

const nFields = 10

// table is an airport table in the text format of airports.tsv, indexed on first use.
type table struct {
	src  string
	once sync.Once
	idx  *index
	err  error
}

// index refers into the table's text rather than copying it: an airport costs a few offsets,
// its codes packed into integers, and its folded name, city and codes for search.
type index struct {
	src   string
	lines []uint32 // start of each airport's line in src, in ICAO order; one extra entry past the end
	icao  []uint32 // packed ICAO code of each airport (ascending, as the lines are)
	// iata holds, for each airport with an IATA code, packed code<<32 | position in order<<16 |
	// airport, sorted: among airports sharing a code the most important comes first.
	iata  []uint64
	order []uint16 // all airports, most important first: the order of search results within a rank
	posOf []uint16 // where each airport stands in order
	// keys holds the folded name + "\x1f" + folded city + "\x1f" + folded ICAO and IATA codes of
	// each airport; airport i's key is keys[keyStart[i]:keyStart[i+1]].
	keys     []byte
	keyStart []uint32
	masks    []uint64 // the characters each key holds (see charMask), to skip keys cheaply
}

// get builds the index on first use. The embedded table is checked by the tests, so a failure is
// a build defect and is reported as a panic naming the line and field.
func (t *table) get() *index {
	t.once.Do(func() { t.idx, t.err = parse(t.src) })
	if t.err != nil {
		panic("airports: embedded table: " + t.err.Error())
	}
	return t.idx
}

func (t *table) count() int { return len(t.get().icao) }

func (t *table) lookup(code string) (Airport, bool) {
	x := t.get()
	i, ok := x.find(code)
	if !ok {
		return Airport{}, false
	}
	return x.airport(i), true
}

// find returns the airport whose ICAO or IATA code is code.
func (x *index) find(code string) (int, bool) {
	c, n, ok := packCode(code)
	switch {
	case !ok:
		return 0, false
	case n == 4:
		return slices.BinarySearch(x.icao, c)
	}
	k, _ := slices.BinarySearch(x.iata, uint64(c)<<32)
	if k == len(x.iata) || x.iata[k]>>32 != uint64(c) {
		return 0, false
	}
	return int(uint16(x.iata[k])), true
}

// packCode packs an ICAO or IATA code, upper-cased and without surrounding space, into an integer
// that orders as the code does, and reports its length.
func packCode(code string) (c uint32, n int, ok bool) {
	code = strings.TrimSpace(code)
	if len(code) != 3 && len(code) != 4 {
		return 0, 0, false
	}
	for i := 0; i < len(code); i++ {
		b := code[i]
		switch {
		case 'a' <= b && b <= 'z':
			b -= 'a' - 'A'
		case 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		default:
			return 0, 0, false
		}
		c = c<<8 | uint32(b)
	}
	return c, len(code), true
}

func (x *index) line(i int) string { return x.src[x.lines[i] : x.lines[i+1]-1] }

// iataOf reads the IATA field, which parse has checked to be empty or three letters.
func (x *index) iataOf(i int) string {
	off := x.lines[i] + 5
	if x.src[off] == '\t' {
		return ""
	}
	return x.src[off : off+3]
}

// airport materialises airport i from its line; parse has checked every field.
func (x *index) airport(i int) Airport {
	var f [nFields]string
	splitLine(x.line(i), &f)
	a := Airport{ICAO: f[0], IATA: f[1], Country: f[2], Kind: kindOf(f[3]), Scheduled: f[4] == "1", Name: f[8], City: f[9]}
	a.Latitude, _ = strconv.ParseFloat(f[5], 64)
	a.Longitude, _ = strconv.ParseFloat(f[6], 64)
	a.ElevationFt, _ = strconv.Atoi(f[7])
	return a
}

// kindOf reads the type field; 0 if it is none of the three.
func kindOf(s string) Kind {
	switch s {
	case "small":
		return Small
	case "medium":
		return Medium
	case "large":
		return Large
	}
	return 0
}

// splitLine splits a line of nFields fields, which parse has counted.
func splitLine(line string, f *[nFields]string) {
	for n := range nFields - 1 {
		k := strings.IndexByte(line, '\t')
		f[n], line = line[:k], line[k+1:]
	}
	f[nFields-1] = line
}

// parse checks the table and builds its index.
func parse(src string) (*index, error) {
	first, body, ok := strings.Cut(src, "\n")
	if !ok || first != header {
		return nil, errors.New("line 1: not the airport table header")
	}
	if body == "" || !strings.HasSuffix(body, "\n") {
		return nil, errors.New("no airports, or the last line is not terminated")
	}
	n := strings.Count(body, "\n")
	if n > math.MaxUint16 {
		return nil, fmt.Errorf("%d airports; at most %d fit the index", n, math.MaxUint16)
	}
	x := &index{
		src:      src,
		lines:    make([]uint32, n+1),
		icao:     make([]uint32, n),
		keyStart: make([]uint32, n+1),
		masks:    make([]uint64, n),
	}
	rank := make([]uint8, n)
	var f [nFields]string
	var fo folder
	fo.buf = make([]byte, 0, len(body)*3/5) // names, cities and codes are a little over half a line
	off := len(first) + 1
	for i := 0; i < n; i++ {
		end := off + strings.IndexByte(src[off:], '\n')
		line := src[off:end]
		if got := strings.Count(line, "\t") + 1; got != nFields {
			return nil, fmt.Errorf("line %d: %d fields, want %d", i+2, got, nFields)
		}
		splitLine(line, &f)
		r, err := checkFields(&f)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+2, err)
		}
		x.icao[i], _, _ = packCode(f[0])
		if i > 0 && x.icao[i] <= x.icao[i-1] {
			return nil, fmt.Errorf("line %d: icao %q is not after %q", i+2, f[0], src[x.lines[i-1]:x.lines[i-1]+4])
		}
		rank[i] = r
		x.lines[i] = uint32(off)
		x.keyStart[i] = uint32(len(fo.buf))
		fo.fold(f[8])
		fo.buf = append(fo.buf, '\x1f')
		fo.fold(f[9])
		if a := aliases[f[0]]; a != "" {
			fo.buf = append(fo.buf, ' ')
			fo.fold(a)
		}
		fo.buf = append(fo.buf, '\x1f')
		fo.fold(f[0])
		if f[1] != "" {
			fo.buf = append(fo.buf, ' ')
			fo.fold(f[1])
		}
		x.masks[i] = charMask(fo.buf[x.keyStart[i]:])
		off = end + 1
	}
	x.lines[n] = uint32(off)
	x.keyStart[n] = uint32(len(fo.buf))
	x.keys = fo.buf

	// Search order: by importance, most important first, then ICAO order, which is file order;
	// importance has few values, so a counting sort does it in one pass.
	var starts [maxRank + 2]int
	for _, r := range rank {
		starts[maxRank-r+1]++
	}
	for r := 1; r < len(starts); r++ {
		starts[r] += starts[r-1]
	}
	x.order = make([]uint16, n)
	x.posOf = make([]uint16, n)
	for i, r := range rank {
		j := starts[maxRank-r]
		starts[maxRank-r]++
		x.order[j], x.posOf[i] = uint16(i), uint16(j)
	}

	for i := 0; i < n; i++ {
		if code := x.iataOf(i); code != "" {
			c, _, _ := packCode(code)
			x.iata = append(x.iata, uint64(c)<<32|uint64(x.posOf[i])<<16|uint64(i))
		}
	}
	slices.Sort(x.iata)
	x.iata = slices.Clip(x.iata)

	return x, nil
}

// charMask sets a bit for each letter a–z and digit in s, and one of 28 bits for each other
// non-space byte: a key whose mask lacks a bit of the query's cannot contain the query.
func charMask(s []byte) uint64 {
	var m uint64
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z':
			m |= 1 << (c - 'a')
		case '0' <= c && c <= '9':
			m |= 1 << (26 + c - '0')
		case c >= 0x80:
			m |= 1 << (36 + c%28)
		}
	}
	return m
}

// maxRank is the highest importance checkFields returns.
const maxRank = uint8(Large)*2 + 1

// checkFields validates one line's fields and returns the airport's importance: its kind, with
// scheduled service breaking ties.
func checkFields(f *[nFields]string) (uint8, error) {
	if !isUpper(f[0], 4) {
		return 0, fmt.Errorf("icao %q: want four upper-case letters", f[0])
	}
	if f[1] != "" && !isUpper(f[1], 3) {
		return 0, fmt.Errorf("iata %q: want three upper-case letters or nothing", f[1])
	}
	if !isUpper(f[2], 2) {
		return 0, fmt.Errorf("country %q: want an ISO 3166-1 alpha-2 code", f[2])
	}
	k := kindOf(f[3])
	if k == 0 {
		return 0, fmt.Errorf("type %q: want large, medium or small", f[3])
	}
	if f[4] != "0" && f[4] != "1" {
		return 0, fmt.Errorf("scheduled %q: want 0 or 1", f[4])
	}
	for _, c := range []struct {
		name  string
		v     string
		limit float64
	}{{"latitude", f[5], 90}, {"longitude", f[6], 180}} {
		v, err := strconv.ParseFloat(c.v, 64)
		if err != nil || math.IsNaN(v) || math.Abs(v) > c.limit {
			return 0, fmt.Errorf("%s %q: want degrees within ±%v", c.name, c.v, c.limit)
		}
	}
	if _, err := strconv.Atoi(f[7]); err != nil {
		return 0, fmt.Errorf("elevation_ft %q: want an integer", f[7])
	}
	if f[8] == "" {
		return 0, errors.New("name: empty")
	}
	r := uint8(k) * 2
	if f[4] == "1" {
		r++
	}
	return r, nil
}

func isUpper(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}
