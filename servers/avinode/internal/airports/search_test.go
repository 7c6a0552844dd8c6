package airports

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"testing"
)

func icaos(as []Airport) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ICAO
	}
	return out
}

func TestSearchFindsTheAirportFirst(t *testing.T) {
	tests := []struct {
		query string
		first []string // the first results, in order
	}{
		{"LHR", []string{"EGLL"}},
		{"egll", []string{"EGLL"}},
		{" teb ", []string{"KTEB"}},
		{"heathrow", []string{"EGLL"}},
		{"teterboro", []string{"KTEB"}},
		{"le bourget", []string{"LFPB"}},
		{"Paris-Le Bourget", []string{"LFPB"}},
		{"bourget", []string{"LFPB"}},
		{"van nuys", []string{"KVNY"}},
		{"Geneva", []string{"LSGG"}},
		{"geneva airport", []string{"LSGG"}},
		{"Zurich", []string{"LSZH"}},
		{"zürich", []string{"LSZH"}},
		{"ZÜRICH", []string{"LSZH"}},
		{"Zu\u0308rich", []string{"LSZH"}}, // the accent typed as a combining mark
		{"dubai", []string{"OMDB"}},
		{"hong kong", []string{"VHHH"}},
		{"frankfurt", []string{"EDDF"}},
		{"new york jfk", []string{"KJFK"}},
		{"martha's vineyard", []string{"KMVY"}},
		{"marthas", []string{"KMVY"}},
		{"sao paulo", []string{"SBGR", "SBSP"}},
		// Large airports with scheduled service first, then by ICAO code.
		{"London", []string{"EGGW", "EGKK", "EGLL", "EGSS"}},
		{"paris", []string{"LFPG", "LFPO"}},
	}
	for _, tt := range tests {
		got := icaos(Search(tt.query, 10))
		if len(got) < len(tt.first) || !slices.Equal(got[:len(tt.first)], tt.first) {
			t.Errorf("Search(%q) = %v; want it to begin with %v", tt.query, got, tt.first)
		}
	}
}

func TestSearchCodePrefixFindsTheRegion(t *testing.T) {
	got := Search("LF", 20)
	if len(got) != 20 {
		t.Fatalf("Search(LF) returned %d airports", len(got))
	}
	for _, a := range got {
		if !strings.HasPrefix(a.ICAO, "LF") && !strings.HasPrefix(a.IATA, "LF") && !strings.HasPrefix(fold(a.Name+" "+a.City), "lf") {
			t.Errorf("Search(LF) returned %s %s (%s)", a.ICAO, a.IATA, a.Name)
		}
	}
}

// rankOf is the ranking Search documents, computed the slow way over every airport.
func rankOf(a Airport, query string) int {
	q := fold(query)
	code := strings.ToUpper(strings.TrimSpace(query))
	if code == a.ICAO || (a.IATA != "" && code == a.IATA) {
		return rankCode
	}
	name, city := fold(a.Name), fold(a.City)
	fields := []string{name, city, fold(a.ICAO + " " + a.IATA)}
	wordIn := func(w string) bool {
		for _, f := range fields {
			if strings.HasPrefix(f, w) || strings.Contains(f, " "+w) {
				return true
			}
		}
		return false
	}
	switch {
	case strings.HasPrefix(name, q) || strings.HasPrefix(city, q):
		return rankPrefix
	case wordIn(q):
		return rankWordPrefix
	}
	if words := strings.Fields(q); len(words) > 1 {
		all := true
		for _, w := range words {
			all = all && wordIn(w)
		}
		if all {
			return rankAllWords
		}
	}
	if strings.Contains(name, q) || strings.Contains(city, q) {
		return rankSubstring
	}
	return -1
}

func TestSearchMatchesTheDocumentedRanking(t *testing.T) {
	x := std.get()
	all := make([]Airport, Count())
	for i := range all {
		all[i] = x.airport(i)
	}
	queries := []string{
		"a", "x", "air", "int", "EG", "lf", "KT", "london", "LONDON heathrow", "saint", "st",
		"san jose", "new york jfk", "ZÜRICH", "são", "o'hare", "ondon", "airport london",
		"LHR", "EGLL", "jfk", "de", "international airport", "rio de janeiro", "köln", "zzzz",
	}
	for _, query := range queries {
		for _, limit := range []int{1, 10, 37} {
			type ranked struct {
				a    Airport
				rank int
			}
			var want []ranked
			for _, a := range all {
				if r := rankOf(a, query); r >= 0 {
					want = append(want, ranked{a, r})
				}
			}
			slices.SortFunc(want, func(p, q ranked) int {
				return cmp.Or(cmp.Compare(p.rank, q.rank), cmp.Compare(importance(q.a), importance(p.a)), strings.Compare(p.a.ICAO, q.a.ICAO))
			})
			want = want[:min(len(want), limit)]
			got := Search(query, limit)
			if len(got) != len(want) {
				t.Errorf("Search(%q, %d): %d results; want %d", query, limit, len(got), len(want))
				continue
			}
			for i := range got {
				if got[i] != want[i].a {
					t.Errorf("Search(%q, %d)[%d] = %s; want %s (rank %d)\n got %v", query, limit, i, got[i].ICAO, want[i].a.ICAO, want[i].rank, icaos(got))
					break
				}
			}
		}
	}
}

func TestSearchLimitsAndEmptyQueries(t *testing.T) {
	if n := len(Search("a", 0)); n != DefaultLimit {
		t.Errorf("limit 0 gave %d results; want %d", n, DefaultLimit)
	}
	if n := len(Search("a", -5)); n != DefaultLimit {
		t.Errorf("limit -5 gave %d results; want %d", n, DefaultLimit)
	}
	if n := len(Search("a", 100000)); n != MaxLimit {
		t.Errorf("limit 100000 gave %d results; want %d", n, MaxLimit)
	}
	if n := len(Search("a", 3)); n != 3 {
		t.Errorf("limit 3 gave %d results", n)
	}
	for _, q := range []string{"", "   ", "!!!", "-/()", "\xff\xfe", "qqqqqqqq"} {
		if got := Search(q, 10); len(got) != 0 {
			t.Errorf("Search(%q) = %v; want nothing", q, icaos(got))
		}
	}
}

func TestSearchUsesOnlyTheStartOfALongQuery(t *testing.T) {
	long := "a" + strings.Repeat("é", 500) // byte MaxQueryLen falls inside an é
	got, want := Search(long, 10), Search(long[:MaxQueryLen-1], 10)
	if !slices.Equal(icaos(got), icaos(want)) {
		t.Errorf("long query: %v; want %v", icaos(got), icaos(want))
	}
	long = "london" + strings.Repeat(" ", MaxQueryLen) + "zzzz"
	if got := icaos(Search(long, 3)); !slices.Equal(got, icaos(Search("london", 3))) {
		t.Errorf("words past MaxQueryLen were used: %v", got)
	}
}

func TestSearchIsDeterministic(t *testing.T) {
	for _, q := range []string{"a", "london", "saint", "EG"} {
		first := icaos(Search(q, MaxLimit))
		for range 3 {
			if again := icaos(Search(q, MaxLimit)); !slices.Equal(first, again) {
				t.Fatalf("Search(%q) changed between calls:\n%v\n%v", q, first, again)
			}
		}
	}
}

func TestConcurrentFirstUse(t *testing.T) {
	tb := &table{src: embedded}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				if _, ok := tb.lookup("OMDB"); !ok {
					t.Error("OMDB not found")
				}
			} else if got := tb.search("dubai", 1); len(got) != 1 || got[0].ICAO != "OMDB" {
				t.Errorf("search(dubai) = %v", icaos(got))
			}
		}()
	}
	wg.Wait()
}

func TestFold(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Zürich", "zurich"},
		{"ZÜRICH", "zurich"},
		{"Zu\u0308rich", "zurich"},
		{"São Paulo–Guarulhos", "sao paulo guarulhos"},
		{"Paris-Le Bourget", "paris le bourget"},
		{"  --Paris (Le Bourget)--  ", "paris le bourget"},
		{"Martha's Vineyard", "marthas vineyard"},
		{"Martha’s Vineyard", "marthas vineyard"},
		{"Hawaiʻi", "hawaii"},
		{"Straße", "strasse"},
		{"Øresund Æro Œuvre", "oresund aero oeuvre"},
		{"Łódź", "lodz"},
		{"Þingvellir Đakovo", "thingvellir dakovo"},
		{"İstanbul", "istanbul"},
		{"Ağrı", "agri"},
		{"Hồ Chí Minh", "ho chi minh"},
		{"Москва Шереметьево", "москва шереметьево"},
		{"東京", "東京"},
		{"A1 B-2", "a1 b 2"},
		{"a\u037eb", "a b"}, // Greek question mark: decomposes to ';'
		{"\u1fef", ""},      // Greek varia: decomposes to '`'; no letter
		{"\xffbad\xfe", "bad"},
		{"!!!", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := fold(tt.in); got != tt.want {
			t.Errorf("fold(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
