package tools

import (
	"context"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/clientdb"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
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
	return kit.Tool{
		Name:  "read_sheet",
		Title: "Read a range of the spreadsheet",
		Description: "Read rows of any tab of the client database spreadsheet as objects keyed by the header row's names " +
			"(row numbers included; empty rows and cells left out), a page at a time. Values as the sheet holds them: numbers, " +
			"booleans, text, dates as displayed. Returns tab, range (the part of the range this page covers), columns, rows, and next_offset " +
			"when more rows may follow (pass it as offset). " +
			"A range outside the tab's grid or on a tab that does not exist is a VALIDATION_ERROR naming the tabs and their size.",
		InputSchema: schema.MustFor[readArgs](schema.Vars{"maxRows": d.ReadMaxRows}),
		Effect:      kit.ReadOnly,
		OpenWorld:   d.OpenWorld,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			a := readArgs{Limit: 100}
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			header := 1
			if a.HeaderRow != nil {
				header = *a.HeaderRow
			}
			r, err := d.DB.ReadRange(ctx, clientdb.RangeRequest{Range: a.Range, HeaderRow: header, Offset: a.Offset, Limit: a.Limit})
			if err != nil {
				return nil, err
			}
			return kit.Untrusted{Source: rowsSource(d, r.Range), Value: r}, nil
		},
	}
}
