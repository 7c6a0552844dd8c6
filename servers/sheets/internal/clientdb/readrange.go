package clientdb

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/a1"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// MaxRangeColumns bounds the columns read_sheet reads at once.
const MaxRangeColumns = 100

// rangeWindow is how many rows past a page ReadRange looks for more data.
const rangeWindow = 1000

// RangeRequest reads rows of any tab.
type RangeRequest struct {
	// Range is A1 notation: "Tab!A1:F100", "Tab!A:F", or a tab name.
	Range string
	// HeaderRow is the row whose cells name the columns (0: none, the
	// column letters name them).
	HeaderRow int
	Offset    int
	Limit     int
}

// Column of a range.
type Column struct {
	Letter string `json:"letter"`
	Name   string `json:"name"`
}

// SheetRow is one row read, keyed by column name; empty cells are left out.
type SheetRow struct {
	Row    int            `json:"row"`
	Values map[string]any `json:"values"`
}

// RangeRows is one page of a range.
type RangeRows struct {
	Tab       string     `json:"tab"`
	Range     string     `json:"range"`
	HeaderRow int        `json:"header_row"`
	Columns   []Column   `json:"columns"`
	Rows      []SheetRow `json:"rows"`
	Offset    int        `json:"offset"`
	// NextOffset is set when the range holds more rows with data.
	NextOffset *int `json:"next_offset,omitempty"`
	// Truncated: the page was ended before Limit rows to fit a result
	// budget (see Cut).
	Truncated bool `json:"truncated"`

	// first is the row offset 0 stands for; cols are the range's columns.
	first, startCol, endCol int
}

// Cut keeps the first n rows of the page, for a caller whose result must
// fit a budget: Range, NextOffset and Truncated then say where the page
// ends and where the next begins.
func (r *RangeRows) Cut(n int) {
	if n >= len(r.Rows) {
		return
	}
	next := r.Rows[n].Row - r.first
	r.NextOffset, r.Truncated = &next, true
	r.Range = a1.Rect(r.Tab, r.first+r.Offset, r.startCol, r.Rows[n].Row-1, r.endCol).String()
	r.Rows = r.Rows[:n]
}

// ReadRange returns up to Limit rows of a range that hold data, skipping
// Offset rows of the range (the header row, when inside it, is not a data
// row). Values are as the sheet holds them: numbers, booleans, text, dates
// as displayed.
func (db *DB) ReadRange(ctx context.Context, req RangeRequest) (RangeRows, error) {
	r, err := a1.Parse(strings.TrimSpace(req.Range))
	if err != nil {
		return RangeRows{}, mcperr.Invalid("range", req.Range, "A1 notation such as Clients!A1:F100, Clients!A:F or a tab name", "%v", err)
	}
	tabs, err := db.wb.Tabs(ctx)
	if err != nil {
		return RangeRows{}, err
	}
	var tab *workbook.Tab
	var names []string
	for i := range tabs {
		names = append(names, tabs[i].Title)
		if strings.EqualFold(tabs[i].Title, r.Sheet) && (tab == nil || tabs[i].Title == r.Sheet) {
			tab = &tabs[i]
		}
	}
	if tab == nil {
		return RangeRows{}, mcperr.Invalid("range", req.Range, "a range on one of the tabs "+strings.Join(names, ", "), "there is no tab %q (tabs: %s)", r.Sheet, strings.Join(names, ", "))
	}
	r.Sheet = tab.Title
	res, err := r.Resolve(tab.Rows, tab.Cols)
	if err != nil {
		var ge *a1.GridError
		if errors.As(err, &ge) {
			return RangeRows{}, mcperr.Invalid("range", req.Range, "a range inside A1:"+a1.ColumnLetters(tab.Cols)+itoa(tab.Rows), "range %s is outside tab %s, which has %d rows and %d columns (A1:%s%d)",
				req.Range, tab.Title, tab.Rows, tab.Cols, a1.ColumnLetters(tab.Cols), tab.Rows)
		}
		return RangeRows{}, err
	}
	if width := res.EndCol - res.StartCol + 1; width > MaxRangeColumns {
		return RangeRows{}, mcperr.Invalid("range", req.Range, "at most "+itoa(MaxRangeColumns)+" columns", "range %s spans %d columns; read at most %d at a time", req.Range, width, MaxRangeColumns)
	}
	if req.HeaderRow > tab.Rows {
		return RangeRows{}, mcperr.Invalid("header_row", req.HeaderRow, "a row of the tab (1–"+itoa(tab.Rows)+") or 0", "tab %s has %d rows", tab.Title, tab.Rows)
	}
	first := res.StartRow
	if req.HeaderRow == first {
		first++
	}
	out := RangeRows{Tab: tab.Title, HeaderRow: req.HeaderRow, Offset: req.Offset, Rows: []SheetRow{},
		first: first, startCol: res.StartCol, endCol: res.EndCol}
	for c := res.StartCol; c <= res.EndCol; c++ {
		out.Columns = append(out.Columns, Column{Letter: a1.ColumnLetters(c), Name: a1.ColumnLetters(c)})
	}
	start := first + req.Offset
	// Read the page and a window after it: trailing empty rows are not
	// sent, so what comes back tells whether more data follows the page
	// within the window. Past the window the next page simply starts after
	// it.
	end := min(res.EndRow, start+req.Limit+rangeWindow-1)
	ranges := []a1.Range{}
	if req.HeaderRow > 0 {
		ranges = append(ranges, a1.Rect(tab.Title, req.HeaderRow, res.StartCol, req.HeaderRow, res.EndCol))
	}
	if start <= end {
		ranges = append(ranges, a1.Rect(tab.Title, start, res.StartCol, end, res.EndCol))
	}
	out.Range = a1.Rect(tab.Title, min(start, res.EndRow), res.StartCol, min(end, res.EndRow), res.EndCol).String()
	if len(ranges) == 0 || start > end {
		return out, nil
	}
	vals, err := db.wb.Read(ctx, ranges, workbook.DatesFormatted)
	if err != nil {
		return RangeRows{}, err
	}
	if req.HeaderRow > 0 {
		seen := map[string]bool{}
		if len(vals[0]) > 0 {
			for i, h := range vals[0][0] {
				name := strings.TrimSpace(workbook.Text(h))
				if name != "" && !seen[name] {
					out.Columns[i].Name = name
					seen[name] = true
				}
			}
		}
		vals = vals[1:]
	}
	if len(vals) == 0 {
		return out, nil
	}
	// The limit counts rows with data; empty rows are skipped, not counted.
	consumed := end - start + 1
	for i, row := range vals[0] {
		values := map[string]any{}
		for j, v := range row {
			if workbook.Text(v) != "" || isFalse(v) {
				values[out.Columns[j].Name] = v
			}
		}
		if len(values) == 0 {
			continue
		}
		if len(out.Rows) == req.Limit {
			consumed = i
			next := req.Offset + i
			out.NextOffset = &next
			break
		}
		out.Rows = append(out.Rows, SheetRow{Row: start + i, Values: values})
	}
	if out.NextOffset == nil && end < res.EndRow {
		next := req.Offset + consumed
		out.NextOffset = &next
	}
	out.Range = a1.Rect(tab.Title, start, res.StartCol, start+consumed-1, res.EndCol).String()
	return out, nil
}

func isFalse(v any) bool { b, ok := v.(bool); return ok && !b }

func itoa(n int) string { return strconv.Itoa(n) }
