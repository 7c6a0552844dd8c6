// Package a1 reads and writes A1 notation ("Clients!A2:F100", "'Flight
// History'!A:C", "Clients") and holds the sheet geometry the Google Sheets
// API defines on it: resolving a range against a tab's grid, and the "table"
// that values.append looks for. The local workbook and the test fake of the
// Sheets API use the same rules, so both behave as the real service does.
package a1

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Limits of a Google spreadsheet: columns up to ZZZ, at most ten million
// cells (so no tab has more rows than that).
const (
	MaxCols = 18278
	MaxRows = 10_000_000
)

// Range is a rectangle of one tab. Rows and columns are 1-based; an End of 0
// is unbounded (to the last row or column of the tab), and a Start is never
// 0 once parsed.
type Range struct {
	Sheet    string
	StartRow int
	StartCol int
	EndRow   int
	EndCol   int
}

// Tab is the whole of a tab.
func Tab(sheet string) Range { return Range{Sheet: sheet, StartRow: 1, StartCol: 1} }

// Row is one whole row of a tab.
func Row(sheet string, row int) Range {
	return Range{Sheet: sheet, StartRow: row, StartCol: 1, EndRow: row}
}

// Cell is one cell.
func Cell(sheet string, row, col int) Range {
	return Range{Sheet: sheet, StartRow: row, StartCol: col, EndRow: row, EndCol: col}
}

// Rect is a bounded rectangle.
func Rect(sheet string, r1, c1, r2, c2 int) Range {
	return Range{Sheet: sheet, StartRow: r1, StartCol: c1, EndRow: r2, EndCol: c2}
}

// ErrSyntax is wrapped by every Parse error.
var ErrSyntax = errors.New("not A1 notation")

// Parse reads "Tab!A1:B2", "Tab!A:B", "Tab!2:5", "Tab!A2:B", "Tab!A1" or a
// bare tab name (the whole tab). A tab name with characters other than
// letters, digits and underscores is written in single quotes, a quote
// inside doubled ('It”s'!A1). Column letters may be lower case. A reversed
// rectangle (B2:A1) is put in order, as the Sheets API does.
func Parse(s string) (Range, error) {
	if strings.TrimSpace(s) == "" {
		return Range{}, fmt.Errorf("%w: empty range", ErrSyntax)
	}
	sheet, cells, hasCells, err := splitSheet(s)
	if err != nil {
		return Range{}, err
	}
	if sheet == "" {
		return Range{}, fmt.Errorf("%w: %q names no tab (write Tab!A1:B2, or the tab name alone)", ErrSyntax, s)
	}
	r := Tab(sheet)
	if !hasCells {
		return r, nil
	}
	first, second, pair := strings.Cut(cells, ":")
	c1, r1, err := parseRef(first)
	if err != nil {
		return Range{}, fmt.Errorf("%w: %q: %v", ErrSyntax, s, err)
	}
	if !pair {
		if c1 == 0 || r1 == 0 {
			return Range{}, fmt.Errorf("%w: %q: a single reference must name a cell such as A1 (use A:A for a column, 1:1 for a row)", ErrSyntax, s)
		}
		return Cell(sheet, r1, c1), nil
	}
	c2, r2, err := parseRef(second)
	if err != nil {
		return Range{}, fmt.Errorf("%w: %q: %v", ErrSyntax, s, err)
	}
	// A:B (columns), 2:5 (rows), A2:B (to the end of the columns), A1:B2.
	switch {
	case (c1 == 0) != (c2 == 0):
		return Range{}, fmt.Errorf("%w: %q mixes a whole row with a column", ErrSyntax, s)
	case c1 == 0 && r1 == 0:
		return Range{}, fmt.Errorf("%w: %q: empty reference before ':'", ErrSyntax, s)
	}
	r.StartCol, r.EndCol = max(c1, 1), c2
	r.StartRow, r.EndRow = max(r1, 1), r2
	if c1 == 0 { // 2:5
		r.EndCol = 0
	}
	if r.EndCol != 0 && r.EndCol < r.StartCol {
		r.StartCol, r.EndCol = r.EndCol, r.StartCol
	}
	if r.EndRow != 0 && r.EndRow < r.StartRow {
		if r1 == 0 { // A:B5 is A1:B5
			r.StartRow = 1
		} else {
			r.StartRow, r.EndRow = r.EndRow, r.StartRow
		}
	}
	return r, nil
}

// splitSheet separates the tab name from the cell part.
func splitSheet(s string) (sheet, cells string, hasCells bool, err error) {
	if strings.HasPrefix(s, "'") {
		var b strings.Builder
		i := 1
		for {
			if i >= len(s) {
				return "", "", false, fmt.Errorf("%w: %q: unclosed quote in the tab name", ErrSyntax, s)
			}
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i += 2
					continue
				}
				i++
				break
			}
			b.WriteByte(s[i])
			i++
		}
		rest := s[i:]
		if rest == "" {
			return b.String(), "", false, nil
		}
		if rest[0] != '!' {
			return "", "", false, fmt.Errorf("%w: %q: expected ! after the quoted tab name", ErrSyntax, s)
		}
		return b.String(), rest[1:], true, nil
	}
	i := strings.LastIndexByte(s, '!')
	if i < 0 {
		return s, "", false, nil
	}
	return s[:i], s[i+1:], true, nil
}

// parseRef reads "AB12", "AB" or "12"; 0 stands for a missing part.
func parseRef(s string) (col, row int, err error) {
	if s == "" {
		return 0, 0, errors.New("empty reference")
	}
	i := 0
	for i < len(s) && isLetter(s[i]) {
		i++
	}
	if i > 3 {
		return 0, 0, fmt.Errorf("column %q is beyond ZZZ", s[:i])
	}
	if i > 0 {
		col = ColumnNumber(s[:i])
	}
	if i < len(s) {
		digits := s[i:]
		for j := 0; j < len(digits); j++ {
			if digits[j] < '0' || digits[j] > '9' {
				return 0, 0, fmt.Errorf("%q is not a cell, column or row reference", s)
			}
		}
		if len(digits) > 8 {
			return 0, 0, fmt.Errorf("row %s is beyond the limit of %d rows", digits, MaxRows)
		}
		row, _ = strconv.Atoi(digits)
		if row < 1 || row > MaxRows {
			return 0, 0, fmt.Errorf("row %s is outside 1…%d", digits, MaxRows)
		}
	}
	return col, row, nil
}

func digitsOnly(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

func isLetter(c byte) bool { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') }

// ColumnNumber converts letters to a 1-based column: A=1, Z=26, AA=27. It
// returns 0 for anything but one to three letters.
func ColumnNumber(letters string) int {
	if len(letters) == 0 || len(letters) > 3 {
		return 0
	}
	n := 0
	for i := 0; i < len(letters); i++ {
		c := letters[i]
		if !isLetter(c) {
			return 0
		}
		n = n*26 + int(c|0x20-'a'+1)
	}
	return n
}

// ColumnLetters converts a 1-based column to letters (1 → A, 27 → AA).
func ColumnLetters(col int) string {
	if col < 1 {
		return ""
	}
	var b [8]byte
	i := len(b)
	for col > 0 {
		col--
		i--
		b[i] = byte('A' + col%26)
		col /= 26
	}
	return string(b[i:])
}

// QuoteSheet writes a tab name as A1 notation needs it: as is when it is a
// plain identifier that cannot be read as a cell, else in single quotes.
func QuoteSheet(name string) string {
	if plainSheet(name) {
		return name
	}
	return "'" + strings.ReplaceAll(name, "'", "''") + "'"
}

func plainSheet(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isLetter(c) && c != '_' && (c < '0' || c > '9') {
			return false
		}
	}
	if name[0] >= '0' && name[0] <= '9' {
		return false
	}
	// "AB12" or "R1C1" would be read as a cell.
	i := 0
	for i < len(name) && isLetter(name[i]) {
		i++
	}
	if i > 0 && i <= 3 && i < len(name) {
		if _, err := strconv.Atoi(name[i:]); err == nil {
			return false
		}
	}
	up := strings.ToUpper(name)
	if rc, ok := strings.CutPrefix(up, "R"); ok {
		if r, c, ok := strings.Cut(rc, "C"); ok && digitsOnly(r) && digitsOnly(c) {
			return false
		}
	}
	return up != "TRUE" && up != "FALSE"
}

// String writes r in A1 notation, its tab name quoted when needed.
func (r Range) String() string {
	s := QuoteSheet(r.Sheet)
	if r.StartRow <= 1 && r.StartCol <= 1 && r.EndRow == 0 && r.EndCol == 0 {
		return s
	}
	return s + "!" + r.Cells()
}

// Cells writes the cell part alone: "A1:B2", "A:B", "2:5", "A2:B", "A1".
func (r Range) Cells() string {
	switch {
	case r.EndCol == 0 && r.EndRow == 0 && r.StartCol <= 1:
		return strconv.Itoa(max(r.StartRow, 1)) + ":" + strconv.Itoa(MaxRows)
	case r.EndCol == 0 && r.StartCol <= 1:
		return strconv.Itoa(r.StartRow) + ":" + strconv.Itoa(r.EndRow)
	case r.EndRow == 0 && r.StartRow <= 1:
		return ColumnLetters(r.StartCol) + ":" + r.endColLetters()
	case r.EndRow == 0:
		return ColumnLetters(r.StartCol) + strconv.Itoa(r.StartRow) + ":" + r.endColLetters()
	case r.EndCol == 0:
		return ColumnLetters(r.StartCol) + strconv.Itoa(r.StartRow) + ":" + r.endColLetters() + strconv.Itoa(r.EndRow)
	case r.StartRow == r.EndRow && r.StartCol == r.EndCol:
		return ColumnLetters(r.StartCol) + strconv.Itoa(r.StartRow)
	}
	return ColumnLetters(r.StartCol) + strconv.Itoa(r.StartRow) + ":" + ColumnLetters(r.EndCol) + strconv.Itoa(r.EndRow)
}

func (r Range) endColLetters() string {
	if r.EndCol == 0 {
		return ColumnLetters(MaxCols)
	}
	return ColumnLetters(r.EndCol)
}

// GridError says a range reaches past a tab's grid.
type GridError struct {
	Range      Range
	Rows, Cols int
}

func (e *GridError) Error() string {
	return fmt.Sprintf("range %s exceeds the grid of tab %q (%d rows × %d columns, A1:%s%d)",
		e.Range, e.Range.Sheet, e.Rows, e.Cols, ColumnLetters(e.Cols), e.Rows)
}

// Resolve fixes the unbounded ends of r to a grid of rows × cols and checks
// that r lies inside it, as the Sheets API does for reads and updates.
func (r Range) Resolve(rows, cols int) (Range, error) {
	out := r
	if out.EndRow == 0 {
		out.EndRow = rows
	}
	if out.EndCol == 0 {
		out.EndCol = cols
	}
	if out.StartRow > rows || out.StartCol > cols || out.EndRow > rows || out.EndCol > cols {
		return Range{}, &GridError{Range: r, Rows: rows, Cols: cols}
	}
	return out, nil
}

// Contains reports whether the cell (row, col) lies in r (unbounded ends
// reach to infinity).
func (r Range) Contains(row, col int) bool {
	return row >= r.StartRow && col >= r.StartCol &&
		(r.EndRow == 0 || row <= r.EndRow) && (r.EndCol == 0 || col <= r.EndCol)
}

// Single reports whether r is one cell.
func (r Range) Single() bool {
	return r.EndRow == r.StartRow && r.EndCol == r.StartCol
}
