// Package tools defines the sheets server's tools and its client resource,
// one file per family: each tool's definition (schema, annotations,
// description) beside its handler. Handlers get the client database
// explicitly through Deps.
package tools

import (
	"net/url"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/clientdb"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

// Deps is what the sheets tools need.
type Deps struct {
	DB *clientdb.DB
	// ReadMaxRows caps the rows read_sheet returns per call.
	ReadMaxRows int
	// OpenWorld: the workbook is a spreadsheet others share (Google
	// Sheets), not local files.
	OpenWorld bool
}

// DefaultReadMaxRows is the default cap of read_sheet.
const DefaultReadMaxRows = 500

// Names of every tool, for the resource template's family and the ACL.
var Names = []string{"list_clients", "search_clients", "get_client", "create_client", "update_client",
	"add_flight_history", "read_sheet"}

// All returns every tool.
func All(d Deps) []kit.Tool {
	if d.ReadMaxRows <= 0 {
		d.ReadMaxRows = DefaultReadMaxRows
	}
	out := ClientTools(d)
	out = append(out, FlightTools(d)...)
	out = append(out, SheetTools(d)...)
	return out
}

// ClientURI is the resource URI of a client's record.
func ClientURI(clientID string) string {
	return "sheets://clients/" + url.PathEscape(clientID)
}

// rowsOf returns v, made of rows of tab, fenced as outside content that
// names where it comes from — or err, when reading or writing them failed.
func rowsOf[T any](d Deps, tab string, v T, err error) (kit.Fenced[*T], error) {
	if err != nil {
		return kit.Fenced[*T]{}, err
	}
	return kit.Fenced[*T]{Source: "rows of tab " + tab + " (" + d.DB.Workbook().Describe() + ")", Value: &v}, nil
}

// clientsTab is the name of the tab of client records.
func clientsTab(d Deps) string {
	ct, _ := d.DB.Tabs()
	return ct
}
