package tools

import (
	"context"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/clientdb"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// ClientTools returns list_clients, search_clients, get_client,
// create_client and update_client.
func ClientTools(d Deps) []kit.Tool {
	return []kit.Tool{listClients(d), searchClients(d), getClient(d), createClient(d), updateClient(d)}
}

// recordShape tells the model what a client record holds.
const recordShape = "A client record: client_id, name, email, phone, company, preferences {aircraft_category, catering, special_needs}, " +
	"history {total_flights (integer), last_flight_date (YYYY-MM-DD or null), preferred_operators (list)}, vip_status " +
	"(standard|silver|gold|platinum), created_at and updated_at (RFC 3339), version (changes whenever any cell of the row changes, " +
	"by anyone), and problems (cells that do not fit their column), if any."

type listArgs struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"clients per page" mcp:"min=1,max=100,default=25"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page" mcp:"maxLength=64"`
}

func listClients(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "list_clients",
		Title: "List clients",
		Description: "List clients in client_id order, a page at a time (the order does not change when people sort the sheet). " +
			"Each entry: client_id, name, email, company, vip_status, total_flights, last_flight_date, version. Returns clients, total, " +
			"next_cursor (pass it as cursor for the next page; absent on the last), truncated (the page was ended early to fit the result " +
			"budget), warnings (e.g. duplicate client ids) and " +
			"rows_without_client_id (rows a person added without a client_id: row, name, email, company, warning).",
		Paging:    "ask for fewer clients with limit and go on with cursor",
		Effect:    kit.ReadOnly,
		OpenWorld: d.OpenWorld,
	}, func(ctx context.Context, c *kit.Call, a listArgs) (kit.Fenced[*clientdb.Page], error) {
		p, err := d.DB.List(ctx, a.Cursor, a.Limit)
		if err != nil {
			return kit.Fenced[*clientdb.Page]{}, err
		}
		// Fit the clients in what the rest leaves, keeping room for the
		// longest cursor a cut can add (maxLength of cursor).
		clients, cursor := p.Clients, p.NextCursor
		p.Clients, p.NextCursor = nil, strings.Repeat("x", 64)
		n, err := kit.FitItems(clients, c.Room()-kit.CostOf(p))
		if err != nil {
			return kit.Fenced[*clientdb.Page]{}, err
		}
		p.Clients, p.NextCursor = clients, cursor
		p.Cut(max(n, 1))
		return rowsOf(d, clientsTab(d), p, nil)
	})
}

type searchFilters struct {
	VIPStatus          string `json:"vip_status,omitempty" jsonschema:"only this tier" mcp:"enum=standard|silver|gold|platinum"`
	MinFlights         *int   `json:"min_flights,omitempty" jsonschema:"only clients with at least this many flights" mcp:"min=0"`
	AircraftPreference string `json:"aircraft_preference,omitempty" jsonschema:"only clients preferring this category" mcp:"enum=light|midsize|heavy|ultra-long-range"`
}

type searchArgs struct {
	Query   string         `json:"query,omitempty" jsonschema:"words to find in name, email and company, without regard to case; every word must match" mcp:"maxLength=200"`
	Filters *searchFilters `json:"filters,omitempty"`
	Limit   int            `json:"limit,omitempty" jsonschema:"most clients returned" mcp:"min=1,max=100,default=10"`
	Offset  int            `json:"offset,omitempty" jsonschema:"matches to skip, in order: next_offset of the previous call" mcp:"min=0"`
}

func searchClients(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "search_clients",
		Title: "Search clients",
		Description: "Find clients by words in their name, email or company, and/or by filters (vip_status, min_flights, " +
			"aircraft_preference). A query that is a client_id finds that client; exact email or client_id matches come first, then names " +
			"starting with the query. Returns clients (as list_clients), total_matches, truncated (more match: pass next_offset as offset for " +
			"them) and rows_without_client_id (matching rows that have no client_id). Use get_client for a whole record.",
		Paging:    "ask for fewer clients with limit and go on with offset",
		Effect:    kit.ReadOnly,
		OpenWorld: d.OpenWorld,
	}, func(ctx context.Context, c *kit.Call, a searchArgs) (kit.Fenced[*clientdb.Found], error) {
		q := clientdb.Query{Text: a.Query, Limit: a.Limit, Offset: a.Offset}
		if f := a.Filters; f != nil {
			q.VIPStatus, q.MinFlights, q.AircraftPreference = f.VIPStatus, f.MinFlights, f.AircraftPreference
		}
		found, err := d.DB.Search(ctx, q)
		if err != nil {
			return kit.Fenced[*clientdb.Found]{}, err
		}
		clients, next := found.Clients, found.NextOffset
		found.Clients, found.NextOffset, found.Truncated = nil, &found.Matches, true
		n, err := kit.FitItems(clients, c.Room()-kit.CostOf(found))
		if err != nil {
			return kit.Fenced[*clientdb.Found]{}, err
		}
		found.Clients, found.NextOffset, found.Truncated = clients, next, next != nil
		found.Cut(max(n, 1), a.Offset)
		return rowsOf(d, clientsTab(d), found, nil)
	})
}

type getArgs struct {
	Identifier  string `json:"identifier" jsonschema:"the client's email address or client_id" mcp:"minLength=1,maxLength=320"`
	SearchField string `json:"search_field,omitempty" jsonschema:"what identifier is; default: email when it contains @, else client_id" mcp:"enum=email|client_id"`
}

func getClient(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:        "get_client",
		Title:       "Get a client",
		Description: "Get one client's full record by email or client_id. " + recordShape + " Keep version to pass as expected_version to update_client.",
		Effect:      kit.ReadOnly,
		OpenWorld:   d.OpenWorld,
	}, func(ctx context.Context, c *kit.Call, a getArgs) (kit.Fenced[*clientdb.Client], error) {
		r, err := d.DB.Get(ctx, a.Identifier, a.SearchField)
		return rowsOf(d, clientsTab(d), r, err)
	})
}

// fields are the client fields an agent may set.
type fields struct {
	Name               *string   `json:"name,omitempty" mcp:"minLength=1,maxLength=200"`
	Email              *string   `json:"email,omitempty" mcp:"format=email,maxLength=254"`
	Phone              *string   `json:"phone,omitempty" mcp:"maxLength=50"`
	Company            *string   `json:"company,omitempty" mcp:"maxLength=200"`
	AircraftPreference *string   `json:"aircraft_preference,omitempty" jsonschema:"preferences.aircraft_category in the record (\"\" empties it)" mcp:"enum=light|midsize|heavy|ultra-long-range|"`
	CateringPreference *string   `json:"catering_preference,omitempty" jsonschema:"preferences.catering in the record" mcp:"maxLength=500"`
	SpecialNeeds       *string   `json:"special_needs,omitempty" jsonschema:"preferences.special_needs in the record" mcp:"maxLength=1000"`
	VIPStatus          *string   `json:"vip_status,omitempty" mcp:"enum=standard|silver|gold|platinum"`
	PreferredOperators *[]string `json:"preferred_operators,omitempty" jsonschema:"operator ids, replacing the list" mcp:"maxItems=20"`
}

func (f fields) db() clientdb.Fields {
	return clientdb.Fields{Name: f.Name, Email: f.Email, Phone: f.Phone, Company: f.Company,
		AircraftPreference: f.AircraftPreference, CateringPreference: f.CateringPreference, SpecialNeeds: f.SpecialNeeds,
		VIPStatus: f.VIPStatus, PreferredOperators: f.PreferredOperators}
}

type createArgs struct {
	Name               string    `json:"name" mcp:"minLength=1,maxLength=200"`
	Email              string    `json:"email" jsonschema:"must not belong to another client" mcp:"format=email,maxLength=254"`
	Phone              *string   `json:"phone,omitempty" mcp:"maxLength=50"`
	Company            *string   `json:"company,omitempty" mcp:"maxLength=200"`
	AircraftPreference *string   `json:"aircraft_preference,omitempty" mcp:"enum=light|midsize|heavy|ultra-long-range"`
	CateringPreference *string   `json:"catering_preference,omitempty" mcp:"maxLength=500"`
	SpecialNeeds       *string   `json:"special_needs,omitempty" mcp:"maxLength=1000"`
	VIPStatus          *string   `json:"vip_status,omitempty" jsonschema:"default standard" mcp:"enum=standard|silver|gold|platinum"`
	PreferredOperators *[]string `json:"preferred_operators,omitempty" jsonschema:"operator ids" mcp:"maxItems=20"`
}

func createClient(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "create_client",
		Title: "Create a client",
		Description: "Add a new client; the server assigns the next client_id (CL-001, CL-002, …) and sets created_at, updated_at " +
			"and total_flights 0. An email that another client already has is a CONFLICT naming that client, so repeating a call " +
			"never creates a client twice. Values are stored as plain text, never as formulas. Returns client (the record) and notes.",
		Effect:    kit.Additive,
		OpenWorld: d.OpenWorld,
	}, func(ctx context.Context, c *kit.Call, a createArgs) (kit.Fenced[*clientdb.Created], error) {
		f := clientdb.Fields{Name: &a.Name, Email: &a.Email, Phone: a.Phone, Company: a.Company,
			AircraftPreference: a.AircraftPreference, CateringPreference: a.CateringPreference,
			SpecialNeeds: a.SpecialNeeds, VIPStatus: a.VIPStatus, PreferredOperators: a.PreferredOperators}
		r, err := d.DB.Create(ctx, f)
		return rowsOf(d, clientsTab(d), r, err)
	})
}

type updateArgs struct {
	ClientID          string `json:"client_id" mcp:"minLength=1,maxLength=64"`
	Updates           fields `json:"updates" jsonschema:"the fields to change; the others stay as they are" mcp:"minProperties=1"`
	ExpectedVersion   string `json:"expected_version,omitempty" jsonschema:"the version you read (get_client, search_clients, list_clients); if any cell of the client changed since, by anyone, nothing is written and the result is CONFLICT" mcp:"maxLength=100"`
	ExpectedUpdatedAt string `json:"expected_updated_at,omitempty" jsonschema:"the updated_at you read; CONFLICT if this server changed the client since. A person's edit in the sheet does not change updated_at: use expected_version to see those too" mcp:"format=date-time"`
}

// Validate: an update changes something. (The schema's minProperties says
// so too, but hosts that take only the portable subset drop it.)
func (a *updateArgs) Validate() error {
	if a.Updates == (fields{}) {
		return mcperr.Invalid("updates", nil, "at least one field to change", "updates names no field to change")
	}
	return nil
}

func updateClient(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "update_client",
		Title: "Update a client",
		Description: "Change some fields of one client, found by its client_id just before writing, whatever order the rows are in; " +
			"only that row's cells change, and updated_at is set. total_flights and last_flight_date change through add_flight_history only. " +
			"Pass expected_version (the version you read) to refuse the change (CONFLICT) if anyone changed the client since you read it, " +
			"in the sheet or through this server. " +
			"Values are stored as plain text, never as formulas. Returns client (the updated record), changed (the fields that changed) and notes.",
		Effect:     kit.Destructive,
		Idempotent: true,
		OpenWorld:  d.OpenWorld,
	}, func(ctx context.Context, c *kit.Call, a updateArgs) (kit.Fenced[*clientdb.Changed], error) {
		r, err := d.DB.UpdateIf(ctx, a.ClientID, a.Updates.db(), clientdb.Expect{UpdatedAt: a.ExpectedUpdatedAt, Version: a.ExpectedVersion})
		return rowsOf(d, clientsTab(d), r, err)
	})
}
