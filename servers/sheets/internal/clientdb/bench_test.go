package clientdb_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/oauth2"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/clientdb"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/sheetsfake"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
)

const benchRows = 5000

var surnames = []string{"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez"}

// bigSheet is a Clients tab of benchRows clients.
func bigSheet() [][]any {
	rows := [][]any{make([]any, len(clientdb.Columns))}
	for i, c := range clientdb.Columns {
		rows[0][i] = c
	}
	for i := 1; i <= benchRows; i++ {
		name := fmt.Sprintf("Client%d %s", i, surnames[i%len(surnames)])
		rows = append(rows, []any{fmt.Sprintf("CL-%04d", i), name, fmt.Sprintf("client%d@example.com", i), "+1-555-0100",
			fmt.Sprintf("Company %d", i%300), []string{"light", "midsize", "heavy"}[i%3], "", "", clientdb.VIPStatuses[i%4],
			float64(i % 40), "2025-09-15", "OP-001, OP-002", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00.000Z"})
	}
	return rows
}

func benchDBs(b *testing.B) map[string]*clientdb.DB {
	rows := bigSheet()
	f := sheetsfake.New(b)
	f.AddToken("tok")
	f.AddSpreadsheet(sid, "Clients", "Flight_History")
	f.SetRows(sid, "Clients", rows)
	g, err := workbook.NewGoogle(ctx, workbook.GoogleConfig{SpreadsheetID: sid, Endpoint: f.URL,
		TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok"})})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	for _, r := range rows {
		rec := make([]string, len(r))
		for i, v := range r {
			rec[i] = workbook.Text(v)
			if i == 3 {
				rec[i] = "'" + rec[i] // the local workbook's escape of a leading +
			}
		}
		if err := w.Write(rec); err != nil {
			b.Fatal(err)
		}
	}
	w.Flush()
	if err := os.WriteFile(filepath.Join(dir, "Clients.csv"), buf.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	l, err := workbook.OpenLocal(workbook.LocalConfig{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	return map[string]*clientdb.DB{"local": clientdb.New(l, clientdb.Options{}), "google-fake-api": clientdb.New(g, clientdb.Options{})}
}

// BenchmarkGetClient: get_client on a 5 000-row Clients tab, by client_id
// and by email (the whole tab is read on every call: rows move).
func BenchmarkGetClient(b *testing.B) {
	for name, db := range benchDBs(b) {
		b.Run(name+"/client_id", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				c, err := db.Get(ctx, fmt.Sprintf("CL-%04d", 1+i%benchRows), "client_id")
				if err != nil || c.ClientID == "" {
					b.Fatal(c, err)
				}
			}
		})
		b.Run(name+"/email", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := db.Get(ctx, fmt.Sprintf("client%d@example.com", 1+i%benchRows), "email"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSearchClients: search_clients on a 5 000-row Clients tab: free
// text, and text with filters.
func BenchmarkSearchClients(b *testing.B) {
	ten := 10
	for name, db := range benchDBs(b) {
		b.Run(name+"/text", func(b *testing.B) {
			for b.Loop() {
				f, err := db.Search(ctx, clientdb.Query{Text: "smith", Limit: 10})
				if err != nil || f.Matches != benchRows/len(surnames) {
					b.Fatal(f.Matches, err)
				}
			}
		})
		b.Run(name+"/filters", func(b *testing.B) {
			for b.Loop() {
				f, err := db.Search(ctx, clientdb.Query{Text: "company 1", VIPStatus: "gold", MinFlights: &ten, Limit: 100})
				if err != nil || f.Matches == 0 {
					b.Fatal(f.Matches, err)
				}
			}
		})
	}
}
