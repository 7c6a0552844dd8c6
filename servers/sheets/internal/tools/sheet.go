package tools

import (
	"context"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/clientdb"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/schema"
)

// SheetTools returns read_sheet.
func SheetTools(d Deps) []kit.Tool { return []kit.Tool{readSheet(d)} }

type readArgs struct {
	Range     string `json:"range" jsonschema:"A1 notation: Tab!A1:F100, Tab!A:F, Tab!A2:F, or a tab name for the whole tab; quote tab names with spaces ('My Tab'!A1:B9)" mcp:"minLength=1,maxLength=200"`
	HeaderRow *int   `json:"header_row,omitempty" jsonschema:"row whose cells name the columns (0: none; columns are then named by letter)" mcp:"min=0,default=1"`
	Offset    int    `json:"offset,omitempty" jsonschema:"rows of the range to skip (use next_offset of the previous page)" mcp:"min=0"`
	Limit     int    `json:"limit,omitempty" jsonschema:"most rows returned, at most {maxRows}" mcp:"min=1,max={maxRows},default=100"`
}

func readSheet(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "read_sheet",
		Title: "Read a range of the spreadsheet",
		Description: "Read rows of any tab of the client database spreadsheet as objects keyed by the header row's names " +
			"(row numbers included; empty rows and cells left out), a page at a time. Values as the sheet holds them: numbers, " +
			"booleans, text, dates as displayed. Returns tab, range (the part of the range this page covers), columns, rows, next_offset " +
			"when more rows may follow (pass it as offset) and truncated (the page was ended before limit to fit the result budget). " +
			"A range outside the tab's grid or on a tab that does not exist is a VALIDATION_ERROR naming the tabs and their size.",
		Vars:      schema.Vars{"maxRows": d.ReadMaxRows},
		Paging:    "read fewer rows with limit, or fewer columns with a narrower range, and go on with offset",
		Effect:    kit.ReadOnly,
		OpenWorld: d.OpenWorld,
	}, func(ctx context.Context, c *kit.Call, a readArgs) (kit.Fenced[*clientdb.RangeRows], error) {
		var none kit.Fenced[*clientdb.RangeRows]
		header := 1
		if a.HeaderRow != nil {
			header = *a.HeaderRow
		}
		r, err := d.DB.ReadRange(ctx, clientdb.RangeRequest{Range: a.Range, HeaderRow: header, Offset: a.Offset, Limit: a.Limit})
		if err != nil {
			return none, err
		}
		// Fit the rows in what the rest leaves, with room for a range and
		// a next_offset that a cut changes.
		rows, rng, next := r.Rows, r.Range, r.NextOffset
		big := 1 << 30
		r.Rows, r.NextOffset, r.Range = nil, &big, rng+rng
		n, err := kit.FitItems(rows, c.Room()-kit.CostOf(r))
		if err != nil {
			return none, err
		}
		r.Rows, r.NextOffset, r.Range = rows, next, rng
		if n == 0 && len(rows) > 0 {
			return none, mcperr.Invalid("range", a.Range, "fewer columns",
				"row %d alone is larger than this server's result budget (--max-result-bytes); read fewer columns at a time", rows[0].Row)
		}
		r.Cut(n)
		return rowsOf(d, r.Range, r, nil)
	})
}
