package a1

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Range
		str  string
	}{
		{"Clients", Tab("Clients"), "Clients"},
		{"Clients!A1:B2", Rect("Clients", 1, 1, 2, 2), "Clients!A1:B2"},
		{"Clients!b2:a1", Rect("Clients", 1, 1, 2, 2), "Clients!A1:B2"},
		{"Clients!A1", Cell("Clients", 1, 1), "Clients!A1"},
		{"Clients!A:C", Range{"Clients", 1, 1, 0, 3}, "Clients!A:C"},
		{"Clients!C:A", Range{"Clients", 1, 1, 0, 3}, "Clients!A:C"},
		{"Clients!2:5", Range{"Clients", 2, 1, 5, 0}, "Clients!2:5"},
		{"Clients!A2:F", Range{"Clients", 2, 1, 0, 6}, "Clients!A2:F"},
		{"Clients!A:B5", Rect("Clients", 1, 1, 5, 2), "Clients!A1:B5"},
		{"Clients!AA10:ZZZ20", Rect("Clients", 10, 27, 20, MaxCols), "Clients!AA10:ZZZ20"},
		{"'Flight History'!A1:C3", Rect("Flight History", 1, 1, 3, 3), "'Flight History'!A1:C3"},
		{"'It''s'!A1", Cell("It's", 1, 1), "'It''s'!A1"},
		{"'Flight History'", Tab("Flight History"), "'Flight History'"},
		{"Flight History!A1", Cell("Flight History", 1, 1), "'Flight History'!A1"},
		{"a!b!C3", Cell("a!b", 3, 3), "'a!b'!C3"},
		{"'A1'!A1", Cell("A1", 1, 1), "'A1'!A1"},
		{"'R1C1'!B2", Cell("R1C1", 2, 2), "'R1C1'!B2"},
		{"'true'!B2", Cell("true", 2, 2), "'true'!B2"},
		{"'2024'!B2", Cell("2024", 2, 2), "'2024'!B2"},
		{"Sheet_1!B2", Cell("Sheet_1", 2, 2), "Sheet_1!B2"},
		{"Clients!C2:D", Range{"Clients", 2, 3, 0, 4}, "Clients!C2:D"},
		{"Clients!C5:C", Range{"Clients", 5, 3, 0, 3}, "Clients!C5:C"},
		{"Clients!3:3", Range{"Clients", 3, 1, 3, 0}, "Clients!3:3"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Parse = %+v, want %+v", got, tc.want)
			}
			if s := got.String(); s != tc.str {
				t.Errorf("String = %q, want %q", s, tc.str)
			}
			again, err := Parse(got.String())
			if err != nil || again != got {
				t.Errorf("round trip %q → %+v, %v", got.String(), again, err)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "  ", "!A1", "Clients!", "Clients!A", "Clients!A1:", "Clients!:B2", "Clients!A1B",
		"Clients!AAAA1", "Clients!A0", "Clients!A99999999999", "Clients!1:B", "Clients!A1:2", "'Clients", "'Clients'A1",
		"Clients!A1:B2:C3", "Clients!R1C1"} {
		t.Run(in, func(t *testing.T) {
			r, err := Parse(in)
			if err == nil || !errors.Is(err, ErrSyntax) {
				t.Errorf("Parse(%q) = %+v, %v; want a syntax error", in, r, err)
			}
		})
	}
}

func TestColumns(t *testing.T) {
	for _, tc := range []struct {
		n int
		s string
	}{{1, "A"}, {26, "Z"}, {27, "AA"}, {52, "AZ"}, {53, "BA"}, {702, "ZZ"}, {703, "AAA"}, {MaxCols, "ZZZ"}} {
		if got := ColumnLetters(tc.n); got != tc.s {
			t.Errorf("ColumnLetters(%d) = %q, want %q", tc.n, got, tc.s)
		}
		if got := ColumnNumber(tc.s); got != tc.n {
			t.Errorf("ColumnNumber(%q) = %d, want %d", tc.s, got, tc.n)
		}
		if got := ColumnNumber(strings.ToLower(tc.s)); got != tc.n {
			t.Errorf("ColumnNumber(lower %q) = %d", tc.s, got)
		}
	}
	if ColumnLetters(0) != "" || ColumnNumber("") != 0 || ColumnNumber("AAAA") != 0 || ColumnNumber("A1") != 0 {
		t.Error("out of range columns")
	}
}

func TestResolve(t *testing.T) {
	r, err := Range{"T", 2, 1, 0, 0}.Resolve(1000, 26)
	if err != nil || r != Rect("T", 2, 1, 1000, 26) {
		t.Errorf("Resolve = %+v, %v", r, err)
	}
	for _, bad := range []Range{Rect("T", 1, 1, 1001, 2), Rect("T", 1, 1, 2, 27), Cell("T", 1001, 1), {"T", 1, 27, 0, 0}} {
		_, err := bad.Resolve(1000, 26)
		var ge *GridError
		if !errors.As(err, &ge) || !strings.Contains(err.Error(), "1000 rows × 26 columns") || !strings.Contains(err.Error(), "A1:Z1000") {
			t.Errorf("Resolve(%v): %v", bad, err)
		}
	}
}

func TestStringForms(t *testing.T) {
	for _, tc := range []struct {
		r    Range
		want string
	}{
		{Range{"T", 3, 1, 0, 0}, "T!3:10000000"},
		{Range{"T", 1, 3, 0, 0}, "T!C:ZZZ"},
		{Range{"T", 2, 3, 5, 0}, "T!C2:ZZZ5"},
		{Row("T", 4), "T!4:4"},
	} {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.r, got, tc.want)
		}
	}
}

// grid builds the filled map from rows of "x" (value) and "." (empty).
func grid(rows ...string) [][]bool {
	out := make([][]bool, len(rows))
	for i, r := range rows {
		for _, c := range r {
			out[i] = append(out[i], c != '.')
		}
	}
	return out
}

// The example of the Sheets API guide: two tables, A1:C2 and B4:D6.
var guide = grid(
	"xxx..",
	"xxx..",
	".....",
	".xx..",
	"..xx.",
	".xxx.",
)

func TestTables(t *testing.T) {
	got := Tables(guide)
	slices.SortFunc(got, func(a, b Range) int { return a.StartRow - b.StartRow })
	want := []Range{Rect("", 1, 1, 2, 3), Rect("", 4, 2, 6, 4)}
	if !slices.Equal(got, want) {
		t.Errorf("Tables = %+v, want %+v", got, want)
	}
	// Overlapping rectangles merge: an L and a block inside its corner.
	merged := Tables(grid("x...", "x.x.", "xxx.", "...."))
	if len(merged) != 1 || merged[0] != Rect("", 1, 1, 3, 3) {
		t.Errorf("merged = %+v", merged)
	}
	separate := Tables(grid("x.x", "...", "x.."))
	if len(separate) != 3 {
		t.Errorf("diagonal cells are separate tables: %+v", separate)
	}
}

func TestAppendTarget(t *testing.T) {
	tests := []struct {
		rng      string
		row, col int
		found    bool
	}{
		{"S", 7, 2, true},       // the whole tab: the last table
		{"S!B4", 7, 2, true},    // inside B4:D6
		{"S!C5:D5", 7, 2, true}, // inside B4:D6
		{"S!B2:D4", 7, 2, true}, // intersects both: the last
		{"S!A3:G10", 7, 2, true},
		{"S!A1", 3, 1, true},     // inside A1:C2
		{"S!E4", 4, 5, false},    // in no table: written there
		{"S!A4", 4, 1, false},    // in no table
		{"S!F1:G9", 1, 6, false}, // intersects none
		{"S!A:A", 3, 1, true},    // only A1:C2 touches column A
	}
	for _, tc := range tests {
		t.Run(tc.rng, func(t *testing.T) {
			r, err := Parse(tc.rng)
			if err != nil {
				t.Fatal(err)
			}
			row, col, _, found := AppendTarget(guide, r)
			if row != tc.row || col != tc.col || found != tc.found {
				t.Errorf("AppendTarget(%s) = %d,%d found=%v; want %d,%d found=%v", tc.rng, row, col, found, tc.row, tc.col, tc.found)
			}
		})
	}
	row, col, _, found := AppendTarget(nil, Tab("S"))
	if row != 1 || col != 1 || found {
		t.Errorf("empty tab: %d,%d %v", row, col, found)
	}
}

func TestContainsSingle(t *testing.T) {
	r := Range{"T", 2, 2, 0, 3}
	if !r.Contains(1000, 3) || r.Contains(1, 2) || r.Contains(5, 4) || r.Single() || !Cell("T", 1, 1).Single() {
		t.Error("Contains/Single")
	}
}
