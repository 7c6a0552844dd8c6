package tools

import (
	"context"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/clientdb"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

// FlightTools returns add_flight_history.
func FlightTools(d Deps) []kit.Tool { return []kit.Tool{addFlightHistory(d)} }

type flightDetails struct {
	FlightID string   `json:"flight_id,omitempty" jsonschema:"your reference for the flight (booking or trip id); a flight_id is recorded once, and the same flight_id with other details is a CONFLICT. Default: derived from the other details" pattern:"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$"`
	Date     string   `json:"date" jsonschema:"day of the flight, YYYY-MM-DD; not in the future (at most tomorrow, UTC)" mcp:"format=date"`
	Route    string   `json:"route" jsonschema:"e.g. KTEB-KVNY" mcp:"minLength=1,maxLength=100"`
	Aircraft string   `json:"aircraft,omitempty" mcp:"maxLength=100"`
	Operator string   `json:"operator,omitempty" jsonschema:"operator id or name" mcp:"maxLength=100"`
	Price    *float64 `json:"price,omitempty" mcp:"min=0"`
}

type flightArgs struct {
	ClientID      string        `json:"client_id" mcp:"minLength=1,maxLength=64"`
	FlightDetails flightDetails `json:"flight_details"`
}

func addFlightHistory(d Deps) kit.Tool {
	_, ht := d.DB.Tabs()
	return kit.NewTool(kit.Tool{
		Name:  "add_flight_history",
		Title: "Record a completed flight",
		Description: "Record a client's completed flight: the flight is appended to the " + ht + " tab, then the client's total_flights " +
			"and last_flight_date are brought up to date, as one logical operation. A flight (by flight_id) is recorded once: " +
			"calling again with the same flight records nothing new and completes the totals if an earlier call could not; " +
			"the same flight_id with other details is a CONFLICT naming them. A date in the future is refused. " +
			"If only the first step succeeds the error says so (data.value lists what was and was not written); retry the same call. " +
			"Returns flight, client (the updated record), already_recorded, totals_updated and notes.",
		Effect:     kit.Additive,
		Idempotent: true,
		OpenWorld:  d.OpenWorld,
	}, func(ctx context.Context, c *kit.Call, a flightArgs) (kit.Fenced[*clientdb.Recorded], error) {
		f := a.FlightDetails
		r, err := d.DB.AddFlight(ctx, a.ClientID, clientdb.FlightInput{FlightID: f.FlightID, Date: f.Date, Route: f.Route,
			Aircraft: f.Aircraft, Operator: f.Operator, Price: f.Price})
		return rowsOf(d, ht, r, err)
	})
}
