package clientdb

import (
	"context"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/a1"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Setup is what Init did.
type Setup struct {
	Workbook string `json:"workbook"`
	// AddedTabs were created; HeadersWritten got their header row; Ready
	// already had every column.
	AddedTabs      []string `json:"added_tabs"`
	HeadersWritten []string `json:"headers_written"`
	Ready          []string `json:"ready"`
}

// Init makes the workbook ready: it adds the Clients and history tabs when
// they are missing and writes the header row of each empty one. A tab that
// holds data but lacks columns is reported, never changed.
func (db *DB) Init(ctx context.Context) (Setup, error) {
	unlock, err := db.lock(ctx)
	if err != nil {
		return Setup{}, err
	}
	defer unlock()
	out := Setup{Workbook: db.wb.Describe(), AddedTabs: []string{}, HeadersWritten: []string{}, Ready: []string{}}
	tabs, err := db.wb.Tabs(ctx)
	if err != nil {
		return out, err
	}
	want := []struct {
		title string
		cols  []string
	}{{db.opt.ClientsTab, Columns}, {db.opt.HistoryTab, HistoryColumns}}
	var missing []string
	for _, w := range want {
		found := false
		for _, t := range tabs {
			if strings.EqualFold(t.Title, w.title) {
				found = true
			}
		}
		if !found {
			missing = append(missing, w.title)
		}
	}
	if len(missing) > 0 {
		if err := db.wb.AddTabs(ctx, missing); err != nil {
			return out, err
		}
		out.AddedTabs = missing
	}
	for _, w := range want {
		v, err := db.wb.Read(ctx, []a1.Range{a1.Tab(w.title)}, workbook.DatesSerial)
		if err != nil {
			return out, err
		}
		if len(v[0]) == 0 {
			cells := make([]workbook.Cell, len(w.cols))
			for i, c := range w.cols {
				cells[i] = workbook.Cell{Row: 1, Col: i + 1, Value: c}
			}
			if err := db.wb.Write(ctx, w.title, cells); err != nil {
				return out, err
			}
			out.HeadersWritten = append(out.HeadersWritten, w.title)
			continue
		}
		if _, err := db.parseTable(w.title, v[0], w.cols); err != nil {
			return out, mcperr.Wrap(err)
		}
		out.Ready = append(out.Ready, w.title)
	}
	return out, nil
}
