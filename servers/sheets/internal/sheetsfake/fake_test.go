package sheetsfake_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	sheets "google.golang.org/api/sheets/v4"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/sheetsfake"
)

const id = "sheet-1"

func newService(t *testing.T, f *sheetsfake.Server, token string) *sheets.Service {
	t.Helper()
	hc := oauth2.NewClient(context.Background(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}))
	svc, err := sheets.NewService(context.Background(), option.WithHTTPClient(hc), option.WithEndpoint(f.URL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func setup(t *testing.T) (*sheetsfake.Server, *sheets.Service) {
	f := sheetsfake.New(t)
	f.AddToken("good")
	f.AddSpreadsheet(id, "Clients", "Flight History")
	return f, newService(t, f, "good")
}

func status(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}

func TestRawStoresTextUserEnteredParses(t *testing.T) {
	f, svc := setup(t)
	vals := [][]any{{"=1+1", "12", "TRUE", "2025-09-15", "'quoted", "=IMPORTXML(\"http://x\",\"//a\")"}}
	if _, err := svc.Spreadsheets.Values.Update(id, "Clients!A1:F1", &sheets.ValueRange{Values: vals}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Spreadsheets.Values.Update(id, "Clients!A2:F2", &sheets.ValueRange{Values: vals}).ValueInputOption("USER_ENTERED").Do(); err != nil {
		t.Fatal(err)
	}
	raw := []sheetsfake.CellInfo{
		{Kind: "text", Value: "=1+1"}, {Kind: "text", Value: "12"}, {Kind: "text", Value: "TRUE"},
		{Kind: "text", Value: "2025-09-15"}, {Kind: "text", Value: "'quoted"}, {Kind: "text", Value: vals[0][5]},
	}
	user := []sheetsfake.CellInfo{
		{Kind: "formula", Value: 2.0, Formula: "=1+1"}, {Kind: "number", Value: 12.0}, {Kind: "bool", Value: true},
		{Kind: "number", Value: 45915.0, Date: true}, {Kind: "text", Value: "quoted"},
		{Kind: "formula", Value: "#NAME?", Formula: vals[0][5].(string)},
	}
	for c := range raw {
		if got := f.Cell(id, "Clients", 1, c+1); got != raw[c] {
			t.Errorf("RAW column %d: %+v, want %+v", c+1, got, raw[c])
		}
		if got := f.Cell(id, "Clients", 2, c+1); got != user[c] {
			t.Errorf("USER_ENTERED column %d: %+v, want %+v", c+1, got, user[c])
		}
	}
	// The three renderings of the same row.
	get := func(render, dates string) []any {
		call := svc.Spreadsheets.Values.Get(id, "Clients!A2:F2").ValueRenderOption(render)
		if dates != "" {
			call = call.DateTimeRenderOption(dates)
		}
		vr, err := call.Do()
		if err != nil {
			t.Fatal(err)
		}
		return vr.Values[0]
	}
	if got := get("FORMATTED_VALUE", ""); got[0] != "2" || got[1] != "12" || got[2] != "TRUE" || got[3] != "2025-09-15" {
		t.Errorf("formatted: %v", got)
	}
	if got := get("UNFORMATTED_VALUE", ""); got[0] != 2.0 || got[1] != 12.0 || got[2] != true || got[3] != 45915.0 {
		t.Errorf("unformatted: %v", got)
	}
	if got := get("UNFORMATTED_VALUE", "FORMATTED_STRING"); got[3] != "2025-09-15" {
		t.Errorf("unformatted with formatted dates: %v", got)
	}
	if got := get("FORMULA", ""); got[0] != "=1+1" {
		t.Errorf("formula: %v", got)
	}
	if _, err := svc.Spreadsheets.Values.Update(id, "Clients!A3", &sheets.ValueRange{Values: [][]any{{"x"}}}).Do(); status(err) != 400 ||
		!strings.Contains(err.Error(), "valueInputOption") {
		t.Errorf("update without valueInputOption: %v", err)
	}
}

func TestReadShapes(t *testing.T) {
	f, svc := setup(t)
	f.SetRows(id, "Clients", [][]any{{"client_id", "name"}, {"CL-001", "Ann"}, nil, {nil, "Bob", nil}})
	vr, err := svc.Spreadsheets.Values.Get(id, "Clients").Do()
	if err != nil {
		t.Fatal(err)
	}
	if vr.Range != "Clients!A1:Z1000" || len(vr.Values) != 4 || len(vr.Values[2]) != 0 || len(vr.Values[3]) != 2 || vr.Values[3][0] != "" {
		t.Errorf("whole tab: %s %v", vr.Range, vr.Values)
	}
	vr, err = svc.Spreadsheets.Values.Get(id, "Clients!C1:D3").Do()
	if err != nil || vr.Values != nil || vr.Range != "Clients!C1:D3" {
		t.Errorf("empty range: %+v %v", vr, err)
	}
	batch, err := svc.Spreadsheets.Values.BatchGet(id).Ranges("Clients!A1:A2", "'Flight History'").Do()
	if err != nil || len(batch.ValueRanges) != 2 || batch.ValueRanges[0].Values[1][0] != "CL-001" || batch.ValueRanges[1].Range != "'Flight History'!A1:Z1000" {
		t.Errorf("batchGet: %+v %v", batch, err)
	}
	for _, bad := range []string{"Nope!A1", "Clients!A1:A1001", "Clients!AA1", "Clients!A0"} {
		if _, err := svc.Spreadsheets.Values.Get(id, bad).Do(); status(err) != 400 {
			t.Errorf("get %s: %v", bad, err)
		}
	}
	_, err = svc.Spreadsheets.Values.Get(id, "Clients!A1:A1001").Do()
	if !strings.Contains(err.Error(), "exceeds grid limits. Max rows: 1000, max columns: 26") {
		t.Errorf("grid error text: %v", err)
	}
	// A range without a tab is in the first tab.
	vr, err = svc.Spreadsheets.Values.Get(id, "A2").Do()
	if err != nil || vr.Values[0][0] != "CL-001" {
		t.Errorf("A2: %+v %v", vr, err)
	}
}

func TestWrites(t *testing.T) {
	f, svc := setup(t)
	f.SetRows(id, "Clients", [][]any{{"a", "b", "c"}, {"1", "2", "3"}})
	res, err := svc.Spreadsheets.Values.BatchUpdate(id, &sheets.BatchUpdateValuesRequest{ValueInputOption: "RAW", Data: []*sheets.ValueRange{
		{Range: "Clients!B2", Values: [][]any{{"two"}}},
		{Range: "Clients!A2:C2", Values: [][]any{{nil, nil, 3.5}}},
	}}).Do()
	if err != nil || res.TotalUpdatedCells != 2 {
		t.Fatalf("batchUpdate: %+v %v", res, err)
	}
	if got := f.Rows(id, "Clients")[1]; got[0] != "1" || got[1] != "two" || got[2] != 3.5 {
		t.Errorf("row 2: %v", got)
	}
	// All or nothing: one bad range rejects the batch.
	_, err = svc.Spreadsheets.Values.BatchUpdate(id, &sheets.BatchUpdateValuesRequest{ValueInputOption: "RAW", Data: []*sheets.ValueRange{
		{Range: "Clients!A2", Values: [][]any{{"changed"}}},
		{Range: "Clients!A2", Values: [][]any{{"x", "too wide"}}},
	}}).Do()
	if status(err) != 400 || f.Rows(id, "Clients")[1][0] != "1" {
		t.Errorf("bad batch: %v, row %v", err, f.Rows(id, "Clients")[1])
	}
	if _, err := svc.Spreadsheets.Values.Update(id, "Clients!A2:A3", &sheets.ValueRange{Values: [][]any{{"x"}, {"y"}, {"z"}}}).ValueInputOption("RAW").Do(); status(err) != 400 {
		t.Errorf("rows beyond the range: %v", err)
	}
	if _, err := svc.Spreadsheets.Values.Update(id, "Clients!A1001", &sheets.ValueRange{Values: [][]any{{"x"}}}).ValueInputOption("RAW").Do(); status(err) != 400 {
		t.Errorf("beyond the grid: %v", err)
	}
	if _, err := svc.Spreadsheets.Values.Clear(id, "Clients!B2:C2", &sheets.ClearValuesRequest{}).Do(); err != nil {
		t.Fatal(err)
	}
	if got := f.Rows(id, "Clients")[1]; len(got) != 3 || got[1] != nil || got[2] != nil {
		t.Errorf("after clear: %v", got)
	}
	// "" empties a cell.
	if _, err := svc.Spreadsheets.Values.Update(id, "Clients!A2", &sheets.ValueRange{Values: [][]any{{""}}}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	if got := f.Cell(id, "Clients", 2, 1); got.Kind != "empty" {
		t.Errorf("after writing \"\": %+v", got)
	}
}

func TestAppend(t *testing.T) {
	f, svc := setup(t)
	// Two tables, as in the API guide: A1:C2 and B4:D6.
	f.SetRows(id, "Clients", [][]any{{"x", "x", "x"}, {"x", "x", "x"}, nil, {nil, "x", "x"}, {nil, nil, "x", "x"}, {nil, "x", "x", "x"}})
	app := func(rng, insert string) *sheets.AppendValuesResponse {
		t.Helper()
		call := svc.Spreadsheets.Values.Append(id, rng, &sheets.ValueRange{Values: [][]any{{"new", "=1+1"}}}).ValueInputOption("RAW")
		if insert != "" {
			call = call.InsertDataOption(insert)
		}
		res, err := call.Do()
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := app("Clients", "INSERT_ROWS")
	if res.TableRange != "Clients!B4:D6" || res.Updates.UpdatedRange != "Clients!B7:C7" {
		t.Errorf("whole tab: table %s, updated %s", res.TableRange, res.Updates.UpdatedRange)
	}
	if c := f.Cell(id, "Clients", 7, 3); c.Kind != "text" || c.Value != "=1+1" {
		t.Errorf("RAW append stored %+v", c)
	}
	res = app("Clients!A1", "INSERT_ROWS")
	if res.TableRange != "Clients!A1:C2" || res.Updates.UpdatedRange != "Clients!A3:B3" {
		t.Errorf("A1: table %s, updated %s", res.TableRange, res.Updates.UpdatedRange)
	}
	// INSERT_ROWS shifted the second table down by one row.
	if got := f.Rows(id, "Clients"); len(got) != 8 || got[4][1] != "x" || len(got[3]) != 0 {
		t.Errorf("after inserting at row 3: %v", got)
	}
	res = app("Clients!F2", "")
	if res.TableRange != "" || res.Updates.UpdatedRange != "Clients!F2:G2" {
		t.Errorf("outside any table: table %q, updated %s", res.TableRange, res.Updates.UpdatedRange)
	}
	// OVERWRITE past the grid grows it.
	f.SetRows(id, "Flight History", [][]any{{"h"}})
	for i := 0; i < 1000; i++ {
		f.SetCell(id, "Flight History", i+1, 1, "v")
	}
	res = app("'Flight History'", "OVERWRITE")
	if rows, _ := f.Grid(id, "Flight History"); res.Updates.UpdatedRange != "'Flight History'!A1001:B1001" || rows != 1001 {
		t.Errorf("append past the grid: %s, %d rows", res.Updates.UpdatedRange, rows)
	}
	if _, err := svc.Spreadsheets.Values.Append(id, "Clients", &sheets.ValueRange{Values: [][]any{{"x"}}}).ValueInputOption("RAW").InsertDataOption("SIDEWAYS").Do(); status(err) != 400 {
		t.Errorf("bad insertDataOption: %v", err)
	}
}

func TestSpreadsheetsGetAndAddSheet(t *testing.T) {
	_, svc := setup(t)
	ss, err := svc.Spreadsheets.Get(id).Fields("sheets.properties").Do()
	if err != nil || len(ss.Sheets) != 2 || ss.Sheets[1].Properties.Title != "Flight History" || ss.Sheets[0].Properties.GridProperties.RowCount != 1000 {
		t.Fatalf("get: %+v %v", ss, err)
	}
	res, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "Preferences"}}},
	}}).Do()
	if err != nil || res.Replies[0].AddSheet.Properties.Title != "Preferences" {
		t.Fatalf("addSheet: %+v %v", res, err)
	}
	_, err = svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "clients"}}},
	}}).Do()
	if status(err) != 400 || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("duplicate tab: %v", err)
	}
	if _, err := svc.Spreadsheets.Get("nope").Do(); status(err) != 404 {
		t.Errorf("unknown spreadsheet: %v", err)
	}
}

func TestAuthDenyAndFaults(t *testing.T) {
	f, svc := setup(t)
	if _, err := newService(t, f, "bad").Spreadsheets.Values.Get(id, "Clients").Do(); status(err) != 401 {
		t.Errorf("bad token: %v", err)
	}
	f.Deny(id, true)
	if _, err := svc.Spreadsheets.Values.Get(id, "Clients").Do(); status(err) != 403 {
		t.Errorf("denied: %v", err)
	}
	f.Deny(id, false)
	f.Fail(sheetsfake.OpGet, 429, 1, sheetsfake.RetryAfter("7"))
	_, err := svc.Spreadsheets.Values.Get(id, "Clients").Do()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != 429 || ge.Header.Get("Retry-After") != "7" || ge.Errors[0].Reason != "rateLimitExceeded" {
		t.Errorf("429: %v", err)
	}
	if _, err := svc.Spreadsheets.Values.Get(id, "Clients").Do(); err != nil {
		t.Errorf("after the fault: %v", err)
	}
	f.Fail(sheetsfake.OpUpdate, 403, 1, sheetsfake.Reason("userRateLimitExceeded"))
	_, err = svc.Spreadsheets.Values.Update(id, "Clients!A1", &sheets.ValueRange{Values: [][]any{{"x"}}}).ValueInputOption("RAW").Do()
	if !errors.As(err, &ge) || ge.Code != 403 || ge.Errors[0].Reason != "userRateLimitExceeded" || f.Cell(id, "Clients", 1, 1).Kind != "empty" {
		t.Errorf("403 rate limit: %v", err)
	}
	f.Fail(sheetsfake.OpAppend, 503, 1, sheetsfake.AfterApply())
	_, err = svc.Spreadsheets.Values.Append(id, "Clients", &sheets.ValueRange{Values: [][]any{{"landed"}}}).ValueInputOption("RAW").Do()
	if status(err) != 503 || f.Cell(id, "Clients", 1, 1).Value != "landed" {
		t.Errorf("after-apply fault: %v, cell %+v", err, f.Cell(id, "Clients", 1, 1))
	}
	var ops []string
	for _, r := range f.Requests() {
		ops = append(ops, r.Op+"/"+r.ValueInputOption)
	}
	if got := strings.Join(ops, " "); !strings.Contains(got, "values.append/RAW") || !strings.Contains(got, "values.update/RAW") {
		t.Errorf("requests: %s", got)
	}
	f.ResetRequests()
	if len(f.Requests()) != 0 {
		t.Error("ResetRequests")
	}
}

func TestHumanEdits(t *testing.T) {
	f, _ := setup(t)
	rows := [][]any{{"id", "name"}, {"CL-003", "Cy"}, {"CL-001", "Ann"}, {"CL-002", "Bo"}}
	f.SetRows(id, "Clients", rows)
	f.Sort(id, "Clients", 1, false)
	if got := f.Rows(id, "Clients"); got[0][0] != "id" || got[1][0] != "CL-001" || got[3][0] != "CL-003" {
		t.Errorf("sorted: %v", got)
	}
	f.Sort(id, "Clients", 2, true)
	if got := f.Rows(id, "Clients"); got[1][1] != "Cy" || got[3][1] != "Ann" {
		t.Errorf("sorted by name, descending: %v", got)
	}
	f.Shuffle(id, "Clients", 42)
	seen := map[any]bool{}
	for _, r := range f.Rows(id, "Clients")[1:] {
		seen[r[0]] = true
	}
	if len(seen) != 3 || f.Rows(id, "Clients")[0][0] != "id" {
		t.Errorf("shuffle lost rows: %v", f.Rows(id, "Clients"))
	}
	f.InsertRow(id, "Clients", 2)
	if got := f.Rows(id, "Clients"); len(got) != 5 || got[1] != nil {
		t.Errorf("after InsertRow: %v", got)
	}
	f.SetDate(id, "Clients", 6, 1, time.Date(2025, 9, 15, 0, 0, 0, 0, time.UTC))
	if c := f.Cell(id, "Clients", 6, 1); c.Value != 45915.0 || !c.Date {
		t.Errorf("date cell %+v", c)
	}
	var hooked []string
	f.OnRequest(func(op string) { hooked = append(hooked, op) })
	_, svc := f, newService(t, f, "good")
	if _, err := svc.Spreadsheets.Values.Get(id, "Clients").Do(); err != nil {
		t.Fatal(err)
	}
	f.OnRequest(nil)
	if len(hooked) != 1 || hooked[0] != sheetsfake.OpGet {
		t.Errorf("hook saw %v", hooked)
	}
}

func TestServiceAccountTokens(t *testing.T) {
	f, _ := setup(t)
	key := f.ServiceAccountKey(t, "agent@project.iam.gserviceaccount.com")
	conf, err := google.JWTConfigFromJSON(key, sheetsfake.SpreadsheetsScope)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := sheets.NewService(context.Background(), option.WithHTTPClient(conf.Client(context.Background())), option.WithEndpoint(f.URL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Spreadsheets.Values.Get(id, "Clients").Do(); err != nil {
		t.Fatalf("with a service account token: %v", err)
	}
	if f.Issued() != 1 {
		t.Errorf("issued %d tokens", f.Issued())
	}
	// Wrong scope, unknown account.
	conf2, _ := google.JWTConfigFromJSON(key, "https://www.googleapis.com/auth/drive")
	if _, err := conf2.TokenSource(context.Background()).Token(); err == nil || !strings.Contains(err.Error(), "invalid_scope") {
		t.Errorf("wrong scope: %v", err)
	}
	other := sheetsfake.New(t).ServiceAccountKey(t, "stranger@x.iam.gserviceaccount.com")
	conf3, _ := google.JWTConfigFromJSON(other, sheetsfake.SpreadsheetsScope)
	conf3.TokenURL = f.URL + "/token"
	conf3.Audience = f.URL + "/token"
	if _, err := conf3.TokenSource(context.Background()).Token(); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Errorf("unknown account: %v", err)
	}
	f.Fail(sheetsfake.OpToken, 503, 1)
	conf4, _ := google.JWTConfigFromJSON(key, sheetsfake.SpreadsheetsScope)
	if _, err := conf4.TokenSource(context.Background()).Token(); err == nil {
		t.Error("injected token failure")
	}
	resp, err := http.Get(f.URL + "/token")
	if err != nil || resp.StatusCode != 400 {
		t.Errorf("GET /token: %v %v", resp, err)
	}
	resp.Body.Close()
}
