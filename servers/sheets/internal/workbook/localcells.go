package workbook

import (
	"context"
	"slices"
	"sort"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/a1"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

func gridOf(rows [][]string) (int, int) {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	return max(LocalMinRows, len(rows)), max(LocalMinCols, cols)
}

// Read implements Workbook. Dates are text in CSV files, so both Dates
// settings read the same. The rows returned are shared with later reads of
// the unchanged file: callers must not modify them.
func (l *Local) Read(ctx context.Context, ranges []a1.Range, _ Dates) ([][][]any, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([][][]any, len(ranges))
	for i, rg := range ranges {
		c, _, err := l.loadCached(rg.Sheet)
		if err != nil {
			return nil, err
		}
		rows := c.rows
		gr, gc := gridOf(rows)
		res, gerr := rg.Resolve(gr, gc)
		if gerr != nil {
			return nil, mcperr.Invalid("range", rg.String(), "an A1 range inside the tab's grid", "%v", gerr)
		}
		if c.vals == nil {
			c.vals = make([][]any, len(rows))
			for r, row := range rows {
				vals := make([]any, len(row))
				for j, s := range row {
					if v := value(s); v != nil {
						vals[j] = v
					} else {
						vals[j] = ""
					}
				}
				c.vals[r] = trimEmpty(vals)
			}
		}
		var vals [][]any
		lastRow := 0
		for r := res.StartRow; r <= res.EndRow && r <= len(c.vals); r++ {
			row := c.vals[r-1]
			lo, hi := min(res.StartCol-1, len(row)), min(res.EndCol, len(row))
			cut := trimEmpty(row[lo:hi:hi])
			vals = append(vals, cut)
			if len(cut) > 0 {
				lastRow = len(vals)
			}
		}
		out[i] = vals[:lastRow]
	}
	return out, nil
}

// Write implements Workbook.
func (l *Local) Write(ctx context.Context, tab string, cells []Cell) error {
	if len(cells) == 0 {
		return nil
	}
	texts := make([]string, len(cells))
	for i, c := range cells {
		t, err := rawText(c.Value)
		if err != nil {
			return mcperr.New(mcperr.Internal, "cell %s: %v", a1.Cell(tab, c.Row, c.Col), err)
		}
		texts[i] = t
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.modify(tab, func(rows [][]string) ([][]string, error) {
		gr, gc := gridOf(rows)
		for _, c := range cells {
			if c.Row < 1 || c.Col < 1 || c.Row > gr || c.Col > gc {
				return nil, mcperr.Invalid("range", a1.Cell(tab, c.Row, c.Col).String(), "a cell inside the tab's grid",
					"cell %s is outside the grid of tab %q (%d rows × %d columns)", a1.Cell(tab, c.Row, c.Col), tab, gr, gc)
			}
		}
		for i, c := range cells {
			rows = setText(rows, c.Row, c.Col, texts[i])
		}
		return trimRows(rows), nil
	})
}

func setText(rows [][]string, row, col int, s string) [][]string {
	for len(rows) < row {
		rows = append(rows, nil)
	}
	for len(rows[row-1]) < col {
		rows[row-1] = append(rows[row-1], "")
	}
	rows[row-1][col-1] = s
	return rows
}

func trimRows(rows [][]string) [][]string {
	for i, r := range rows {
		n := len(r)
		for n > 0 && r[n-1] == "" {
			n--
		}
		rows[i] = r[:n]
	}
	for len(rows) > 0 && len(rows[len(rows)-1]) == 0 {
		rows = rows[:len(rows)-1]
	}
	return rows
}

// Append implements Workbook, with the Sheets API's table detection on the
// whole tab and an inserted row.
func (l *Local) Append(ctx context.Context, tab string, row []any) (a1.Range, error) {
	texts := make([]string, len(row))
	for i, v := range row {
		t, err := rawText(v)
		if err != nil {
			return a1.Range{}, mcperr.New(mcperr.Internal, "appended cell %d: %v", i+1, err)
		}
		texts[i] = t
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var landed a1.Range
	err := l.modify(tab, func(rows [][]string) ([][]string, error) {
		filled := make([][]bool, len(rows))
		for i, r := range rows {
			filled[i] = make([]bool, len(r))
			for j, f := range r {
				filled[i][j] = f != ""
			}
		}
		title, _ := l.title(tab)
		at, col, _, _ := a1.AppendTarget(filled, a1.Tab(title))
		if at-1 < len(rows) {
			rows = slices.Insert(rows, at-1, []string(nil))
		}
		for i, s := range texts {
			rows = setText(rows, at, col+i, s)
		}
		landed = a1.Rect(title, at, col, at, col+max(len(texts), 1)-1)
		return trimRows(rows), nil
	})
	return landed, err
}

// Clear implements Workbook.
func (l *Local) Clear(ctx context.Context, r a1.Range) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.modify(r.Sheet, func(rows [][]string) ([][]string, error) {
		gr, gc := gridOf(rows)
		res, gerr := r.Resolve(gr, gc)
		if gerr != nil {
			return nil, mcperr.Invalid("range", r.String(), "an A1 range inside the tab's grid", "%v", gerr)
		}
		for row := res.StartRow; row <= res.EndRow && row <= len(rows); row++ {
			for col := res.StartCol; col <= res.EndCol && col <= len(rows[row-1]); col++ {
				rows[row-1][col-1] = ""
			}
		}
		return trimRows(rows), nil
	})
}

func sortCells(cells []Cell) {
	sort.SliceStable(cells, func(i, j int) bool {
		if cells[i].Row != cells[j].Row {
			return cells[i].Row < cells[j].Row
		}
		return cells[i].Col < cells[j].Col
	})
}
