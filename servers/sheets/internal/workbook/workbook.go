// Package workbook is the spreadsheet under the client database, behind one
// small interface with two implementations: Google, a Google Sheets
// spreadsheet through the Sheets API (google.golang.org/api/sheets/v4), and
// Local, a directory of CSV files, one per tab, that behaves the same way.
//
// A Workbook reads and writes cells by position, as the Sheets API does;
// people may reorder rows between any two calls, so callers find rows by an
// identifier each time and check what they wrote (package clientdb does).
// Values are written RAW: text stays text, so "=IMPORTXML(…)" is stored as
// those characters and never becomes a formula.
package workbook

import (
	"context"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/a1"
)

// Tab is one tab (sheet) of a workbook and its grid.
type Tab struct {
	Title string `json:"title"`
	Rows  int    `json:"rows"`
	Cols  int    `json:"columns"`
}

// Dates says how a read returns cells that hold dates.
type Dates int

const (
	// DatesSerial returns dates as serial numbers (days since 1899-12-30),
	// which is unambiguous whatever the sheet's locale.
	DatesSerial Dates = iota
	// DatesFormatted returns dates as the sheet displays them.
	DatesFormatted
)

// Cell is one value to write at a row and column (1-based). Value is a
// string (stored as text, "" empties the cell), an int, a float64 or a bool.
type Cell struct {
	Row, Col int
	Value    any
}

// Workbook is a spreadsheet's values. Read values are string, float64 or
// bool, nil for an empty cell; each returned row starts at the range's
// first column, rows start at its first row, and trailing empty rows and
// cells are left out; callers must not modify them. Every error is an
// *mcperr.Error a client may see.
type Workbook interface {
	// Kind is "google" or "local".
	Kind() string
	// Describe names the workbook for people: the spreadsheet id or the
	// directory.
	Describe() string
	// Tabs lists the tabs in order.
	Tabs(ctx context.Context) ([]Tab, error)
	// Read returns the values of each range, in one request.
	Read(ctx context.Context, ranges []a1.Range, dates Dates) ([][][]any, error)
	// Write sets cells of one tab in one request: all of them or none.
	Write(ctx context.Context, tab string, cells []Cell) error
	// Append adds one row below the tab's table (see package a1), inserting
	// a row so nothing is overwritten, and returns where it landed.
	Append(ctx context.Context, tab string, row []any) (a1.Range, error)
	// Clear empties a range.
	Clear(ctx context.Context, r a1.Range) error
	// AddTabs creates tabs.
	AddTabs(ctx context.Context, titles []string) error
}

// Locker is implemented by workbooks that can keep other processes from
// writing while a caller reads, decides and writes (the local workbook does,
// with a lock file); a Google spreadsheet has no such lock.
type Locker interface {
	Lock(ctx context.Context) (unlock func(), err error)
}

// Text renders a read value as the text it shows: numbers without exponent
// or trailing zeros, booleans as TRUE/FALSE, nil as "".
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	case float64:
		return formatFloat(x)
	case int:
		return formatFloat(float64(x))
	}
	return ""
}
