package workbook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	sheets "google.golang.org/api/sheets/v4"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/a1"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
	"github.com/mcp-fleet/mcp-fleet/shared/upstream"
)

// DefaultEndpoint is the Sheets API's base URL.
const DefaultEndpoint = "https://sheets.googleapis.com/"

// Scope is the OAuth scope the server asks for: read and write spreadsheets.
const Scope = sheets.SpreadsheetsScope

// GoogleConfig configures a Google workbook.
type GoogleConfig struct {
	SpreadsheetID string
	// Endpoint replaces DefaultEndpoint (a proxy, or a test fake).
	Endpoint string
	// TokenSource gives the OAuth access tokens sent with every request: a
	// service account's, or a user's. It is asked afresh for every attempt.
	TokenSource oauth2.TokenSource
	// Account names the identity for error messages (a service account's
	// e-mail address, which the spreadsheet must be shared with).
	Account string
	// Version goes into the User-Agent.
	Version string
	// Timeout bounds one API request, retries included (default 30s).
	Timeout time.Duration
	// Retry replaces the upstream client's retry policy (tests).
	Retry    retry.Policy
	Logger   *zerolog.Logger
	Redactor *logging.Redactor
}

// Google is a spreadsheet reached through the Sheets API. The Google client
// library does not retry and adds no credentials itself: every request goes
// through the fleet's upstream client, which retries what is safe to retry
// (429, 5xx, and Google's 403 rate limits; an append, which is not safe to
// repeat, is never resent), keeps a circuit breaker and adds the token.
type Google struct {
	id      string
	account string
	up      *upstream.Client
	svc     *sheets.Service
}

// NewGoogle builds the client; it sends no request.
func NewGoogle(ctx context.Context, cfg GoogleConfig) (*Google, error) {
	if cfg.SpreadsheetID == "" {
		return nil, errors.New("workbook: no spreadsheet id")
	}
	if cfg.TokenSource == nil {
		return nil, errors.New("workbook: no token source for the Sheets API")
	}
	endpoint := cfg.Endpoint
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	if !strings.HasSuffix(endpoint, "/") {
		endpoint += "/"
	}
	version := cfg.Version
	if version == "" {
		version = "dev"
	}
	// A user sign-in's token source says itself what to do (run
	// `sheets-mcp auth` again): the hook keeps its words.
	up, err := upstream.New(upstream.Config{
		Name: "google-sheets", Server: "sheets-mcp", Version: version, Timeout: cfg.Timeout, Retry: cfg.Retry,
		RetryableStatus: retry.GoogleRateLimited, Logger: cfg.Logger, Redactor: cfg.Redactor,
		Auth: googleauth.AuthHook(cfg.TokenSource, "check the configured credentials for the Sheets API"),
	})
	if err != nil {
		return nil, err
	}
	svc, err := sheets.NewService(ctx, option.WithHTTPClient(up.HTTPClient()), option.WithEndpoint(endpoint))
	if err != nil {
		return nil, fmt.Errorf("workbook: the Sheets API client: %w", err)
	}
	return &Google{id: cfg.SpreadsheetID, account: cfg.Account, up: up, svc: svc}, nil
}

// Kind implements Workbook.
func (g *Google) Kind() string { return "google" }

// Describe implements Workbook.
func (g *Google) Describe() string { return "Google Sheets spreadsheet " + g.id }

// Upstream returns the HTTP client's upstream, for health checks.
func (g *Google) Upstream() *upstream.Client { return g.up }

// Close releases idle connections.
func (g *Google) Close() { g.up.CloseIdleConnections() }

// Tabs implements Workbook.
func (g *Google) Tabs(ctx context.Context) ([]Tab, error) {
	ss, err := g.svc.Spreadsheets.Get(g.id).Fields("sheets.properties(title,gridProperties(rowCount,columnCount))").Context(ctx).Do()
	if err != nil {
		return nil, g.fail(err, "list the tabs", nil)
	}
	var out []Tab
	for _, sh := range ss.Sheets {
		if sh.Properties == nil {
			continue
		}
		t := Tab{Title: sh.Properties.Title}
		if gp := sh.Properties.GridProperties; gp != nil {
			t.Rows, t.Cols = int(gp.RowCount), int(gp.ColumnCount)
		}
		out = append(out, t)
	}
	return out, nil
}

func dateOption(d Dates) string {
	if d == DatesFormatted {
		return "FORMATTED_STRING"
	}
	return "SERIAL_NUMBER"
}

// Read implements Workbook.
func (g *Google) Read(ctx context.Context, ranges []a1.Range, dates Dates) ([][][]any, error) {
	if len(ranges) == 0 {
		return nil, nil
	}
	if len(ranges) == 1 {
		vr, err := g.svc.Spreadsheets.Values.Get(g.id, ranges[0].String()).ValueRenderOption("UNFORMATTED_VALUE").
			DateTimeRenderOption(dateOption(dates)).MajorDimension("ROWS").Context(ctx).Do()
		if err != nil {
			return nil, g.fail(err, "read "+ranges[0].String(), &ranges[0])
		}
		return [][][]any{vr.Values}, nil
	}
	strs := make([]string, len(ranges))
	for i, r := range ranges {
		strs[i] = r.String()
	}
	res, err := g.svc.Spreadsheets.Values.BatchGet(g.id).Ranges(strs...).ValueRenderOption("UNFORMATTED_VALUE").
		DateTimeRenderOption(dateOption(dates)).MajorDimension("ROWS").Context(ctx).Do()
	if err != nil {
		return nil, g.fail(err, "read "+strings.Join(strs, ", "), nil)
	}
	if len(res.ValueRanges) != len(ranges) {
		return nil, mcperr.New(mcperr.Upstream, "the Sheets API answered %d ranges for %d asked", len(res.ValueRanges), len(ranges))
	}
	out := make([][][]any, len(ranges))
	for i, vr := range res.ValueRanges {
		out[i] = vr.Values
	}
	return out, nil
}

// Write implements Workbook: one values.batchUpdate with valueInputOption
// RAW, neighbouring cells of a row sent as one range. The request is marked
// safe to repeat: it sets fixed cells to fixed values.
func (g *Google) Write(ctx context.Context, tab string, cells []Cell) error {
	if len(cells) == 0 {
		return nil
	}
	var data []*sheets.ValueRange
	for _, run := range runs(cells) {
		vals := make([]any, len(run))
		for i, c := range run {
			vals[i] = c.Value
		}
		first, last := run[0], run[len(run)-1]
		data = append(data, &sheets.ValueRange{Range: a1.Rect(tab, first.Row, first.Col, last.Row, last.Col).String(),
			MajorDimension: "ROWS", Values: [][]any{vals}})
	}
	_, err := g.svc.Spreadsheets.Values.BatchUpdate(g.id, &sheets.BatchUpdateValuesRequest{ValueInputOption: "RAW", Data: data}).
		Context(upstream.MarkIdempotent(ctx)).Do()
	if err != nil {
		return g.fail(err, "write to tab "+tab, nil, upstream.Method(http.MethodPost), upstream.Repeatable())
	}
	return nil
}

// runs groups cells into runs of neighbours in one row, in row order.
func runs(cells []Cell) [][]Cell {
	sorted := append([]Cell(nil), cells...)
	sortCells(sorted)
	var out [][]Cell
	for _, c := range sorted {
		if n := len(out); n > 0 {
			last := out[n-1][len(out[n-1])-1]
			if last.Row == c.Row && last.Col+1 == c.Col {
				out[n-1] = append(out[n-1], c)
				continue
			}
		}
		out = append(out, []Cell{c})
	}
	return out
}

// Append implements Workbook: values.append on the whole tab, RAW,
// INSERT_ROWS. It is not resent after a failure, since a second append
// would add a second row; the caller checks whether the first one landed.
func (g *Google) Append(ctx context.Context, tab string, row []any) (a1.Range, error) {
	res, err := g.svc.Spreadsheets.Values.Append(g.id, a1.Tab(tab).String(), &sheets.ValueRange{MajorDimension: "ROWS", Values: [][]any{row}}).
		ValueInputOption("RAW").InsertDataOption("INSERT_ROWS").Context(ctx).Do()
	if err != nil {
		return a1.Range{}, g.fail(err, "append a row to tab "+tab, nil, upstream.Method(http.MethodPost))
	}
	if res.Updates == nil {
		return a1.Range{}, mcperr.New(mcperr.Upstream, "the Sheets API did not say where the row was appended")
	}
	r, perr := a1.Parse(res.Updates.UpdatedRange)
	if perr != nil {
		return a1.Range{}, mcperr.New(mcperr.Upstream, "the Sheets API answered an unreadable range %q", res.Updates.UpdatedRange)
	}
	return r, nil
}

// Clear implements Workbook.
func (g *Google) Clear(ctx context.Context, r a1.Range) error {
	_, err := g.svc.Spreadsheets.Values.Clear(g.id, r.String(), &sheets.ClearValuesRequest{}).Context(upstream.MarkIdempotent(ctx)).Do()
	if err != nil {
		return g.fail(err, "clear "+r.String(), &r, upstream.Method(http.MethodPost), upstream.Repeatable())
	}
	return nil
}

// AddTabs implements Workbook.
func (g *Google) AddTabs(ctx context.Context, titles []string) error {
	if len(titles) == 0 {
		return nil
	}
	var reqs []*sheets.Request
	for _, t := range titles {
		reqs = append(reqs, &sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: t}}})
	}
	_, err := g.svc.Spreadsheets.BatchUpdate(g.id, &sheets.BatchUpdateSpreadsheetRequest{Requests: reqs}).Context(ctx).Do()
	if err != nil {
		return g.fail(err, "add tabs "+strings.Join(titles, ", "), nil, upstream.Method(http.MethodPost))
	}
	return nil
}

// fail maps a client error to what a caller may see: Google's status with
// its rate-limit reasons, Google's own message for a request it found
// invalid (it names the range, nothing secret), and what to do about access.
//
// req names the request (upstream.Method, upstream.Repeatable): an append
// that failed while Google handled it is not retryable, since repeating it
// may add the row twice.
func (g *Google) fail(err error, what string, rng *a1.Range, req ...upstream.Hint) *mcperr.Error {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return upstream.FromError("google-sheets", err, append(req, upstream.Detail(what))...)
	}
	hints := req
	rate := false
	for _, e := range ge.Errors {
		if e.Reason == "rateLimitExceeded" || e.Reason == "userRateLimitExceeded" {
			rate = true
		}
	}
	if rate {
		hints = append(hints, upstream.RateLimited())
	}
	switch {
	case ge.Code == http.StatusBadRequest && rng != nil:
		e := mcperr.Invalid("range", rng.String(), "an A1 range inside an existing tab", "cannot %s: %s", what, cleanMessage(ge.Message))
		return e.WithCause(err)
	case ge.Code == http.StatusBadRequest:
		hints = append(hints, upstream.Detail(what+": "+cleanMessage(ge.Message)))
	case ge.Code == http.StatusNotFound:
		return mcperr.New(mcperr.NotFound, "spreadsheet %s does not exist or is not visible to %s; check GOOGLE_SHEETS_CLIENT_DATABASE_ID", g.id, g.who()).WithCause(err)
	case ge.Code == http.StatusForbidden && !rate:
		return mcperr.New(mcperr.PermissionDeny, "%s may not %s in spreadsheet %s; share the spreadsheet with %s as an editor", g.who(), what, g.id, g.who()).WithCause(err)
	default:
		hints = append(hints, upstream.Detail(what))
	}
	e := upstream.FromStatus("google-sheets", ge.Code, ge.Header, hints...)
	if errors.Is(e, upstream.ErrOutcomeUnknown) {
		return e.WithCause(fmt.Errorf("%w: %w", upstream.ErrOutcomeUnknown, err))
	}
	return e.WithCause(err)
}

func (g *Google) who() string {
	if g.account != "" {
		return g.account
	}
	return "the configured Google account"
}

// cleanMessage keeps Google's message short and on one line.
func cleanMessage(m string) string {
	m = strings.Join(strings.Fields(m), " ")
	if len(m) > 200 {
		m = m[:200] + "…"
	}
	return m
}
