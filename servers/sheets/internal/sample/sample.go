// Package sample holds the sample client database a new local workbook
// starts with: a dozen realistic clients and some of their flights, with the
// same tabs and columns as the Google Sheets layout (configs/sheets/template/
// holds their header rows).
package sample

import "embed"

//go:embed *.csv
var files embed.FS

// Files returns the sample tabs, one <tab>.csv file each.
func Files() embed.FS { return files }
