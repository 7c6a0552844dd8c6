package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/schema"
)

// EmptyLegTools returns search_empty_legs and the empty-leg watch tools.
func EmptyLegTools(d Deps) []kit.Tool {
	return []kit.Tool{searchEmptyLegs(d), createWatch(d), listWatches(d), deleteWatch(d)}
}

type emptyLegsArgs struct {
	DepartureAirport string `json:"departure_airport,omitempty" jsonschema:"ICAO code near which the flight should start" pattern:"^[A-Z]{4}$"`
	ArrivalAirport   string `json:"arrival_airport,omitempty" jsonschema:"ICAO code near which the flight should end" pattern:"^[A-Z]{4}$"`
	Date             string `json:"date" jsonschema:"the day to fly, YYYY-MM-DD, today or later" mcp:"format=date"`
	FlexibilityDays  *int   `json:"flexibility_days,omitempty" jsonschema:"days before and after date to include" mcp:"min=0,max=7,default=3"`
	Passengers       int    `json:"passengers,omitempty" jsonschema:"seats needed" mcp:"min=1,max=19,default=1"`
	AircraftCategory string `json:"aircraft_category,omitempty" jsonschema:"only this aircraft category" mcp:"enum=light|midsize|heavy|ultra-long-range"`
	Limit            int    `json:"limit,omitempty" jsonschema:"most empty legs to return" mcp:"min=1,max=50,default=20"`
}

type emptyLegsResult struct {
	EmptyLegs []market.EmptyLeg `json:"empty_legs"`
	Total     int               `json:"total"`
	Note      string            `json:"note"`
}

func searchEmptyLegs(d Deps) kit.Tool {
	return kit.Tool{
		Name:  "search_empty_legs",
		Title: "Search empty legs",
		Description: "Find empty legs — aircraft repositioning without passengers, sold at a discount — that could fly the " +
			"route: legs starting or ending near the given airports, or passing close by, within the days of flexibility around " +
			"date. Give departure_airport, arrival_airport or both. Times and routes of empty legs are flexible and must be " +
			"confirmed with the operator.",
		InputSchema: schema.MustFor[emptyLegsArgs](),
		Effect:      kit.ReadOnly,
		OpenWorld:   true,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a emptyLegsArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			if a.DepartureAirport == "" && a.ArrivalAirport == "" {
				return nil, mcperr.Invalid("departure_airport", nil, "departure_airport, arrival_airport or both",
					"give at least one airport to search near")
			}
			for field, code := range map[string]string{"departure_airport": a.DepartureAirport, "arrival_airport": a.ArrivalAirport} {
				if code == "" {
					continue
				}
				if _, err := resolveAirport(ctx, d, field, code); err != nil {
					return nil, err
				}
			}
			day, err := time.Parse(time.DateOnly, a.Date)
			if err != nil {
				return nil, mcperr.Invalid("date", a.Date, "a date YYYY-MM-DD", "date is not a date")
			}
			if day.Before(d.now().Truncate(24 * time.Hour)) {
				return nil, mcperr.Invalid("date", a.Date, "today or a later day", "date is in the past")
			}
			q := market.EmptyLegQuery{From: a.DepartureAirport, To: a.ArrivalAirport, Date: day, FlexDays: 3,
				Passengers: max(a.Passengers, 1), Category: a.AircraftCategory, Limit: a.Limit}
			if a.FlexibilityDays != nil {
				q.FlexDays = *a.FlexibilityDays
			}
			if q.Limit == 0 {
				q.Limit = 20
			}
			legs, err := d.Market.SearchEmptyLegs(ctx, q)
			if err != nil {
				return nil, err
			}
			if legs == nil {
				legs = []market.EmptyLeg{}
			}
			return emptyLegsResult{EmptyLegs: legs, Total: len(legs),
				Note: "Empty-leg times and routes are flexible and not scheduled flights; confirm with the operator before promising them."}, nil
		},
	}
}

type createWatchArgs struct {
	DepartureAirport string `json:"departure_airport,omitempty" jsonschema:"ICAO code where watched empty legs start" pattern:"^[A-Z]{4}$"`
	ArrivalAirport   string `json:"arrival_airport,omitempty" jsonschema:"ICAO code where watched empty legs end" pattern:"^[A-Z]{4}$"`
	AircraftCategory string `json:"aircraft_category,omitempty" jsonschema:"only empty legs of this aircraft category" mcp:"enum=light|midsize|heavy|ultra-long-range"`
	Name             string `json:"name,omitempty" jsonschema:"a unique name for the watch (default: made from the route)" mcp:"maxLength=100"`
	DaysOut          int    `json:"days_out,omitempty" jsonschema:"how many days ahead to watch" mcp:"min=1,max=60,default=7"`
}

func createWatch(d Deps) kit.Tool {
	return kit.Tool{
		Name:  "create_watch",
		Title: "Watch for empty legs",
		Description: "Create an empty-leg watch: Avinode then reports empty legs matching the route (an airport at either end or " +
			"both) and aircraft category as operators publish them. list_watches shows the watches; delete_watch stops one. " +
			"Names are unique: repeating an identical create_watch returns the existing watch (already_existed true) instead " +
			"of a second one, and a name already used by a watch with other criteria is refused with CONFLICT.",
		InputSchema: schema.MustFor[createWatchArgs](),
		Effect:      kit.Additive,
		Idempotent:  true,
		OpenWorld:   true,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a createWatchArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			if a.DepartureAirport == "" && a.ArrivalAirport == "" {
				return nil, mcperr.Invalid("departure_airport", nil, "departure_airport, arrival_airport or both",
					"a watch needs at least one airport")
			}
			for field, code := range map[string]string{"departure_airport": a.DepartureAirport, "arrival_airport": a.ArrivalAirport} {
				if code == "" {
					continue
				}
				if _, err := resolveAirport(ctx, d, field, code); err != nil {
					return nil, err
				}
			}
			if a.DaysOut == 0 {
				a.DaysOut = 7
			}
			r := market.WatchRequest{Name: strings.TrimSpace(a.Name), From: a.DepartureAirport,
				To: a.ArrivalAirport, Category: a.AircraftCategory, DaysOut: a.DaysOut}
			if r.Name == "" {
				r.Name = market.WatchName(r)
			}
			if err := d.Market.SyncWatches(ctx); err != nil {
				return nil, err
			}
			ws, err := d.Store.Watches(ctx)
			if err != nil {
				return nil, err
			}
			for _, w := range ws {
				if w.Name != r.Name {
					continue
				}
				if w.Active && w.From == r.From && w.To == r.To && w.AircraftCategory == r.Category && w.DaysOut == r.DaysOut {
					return watchResult{Watch: w, AlreadyExisted: true,
						Message: fmt.Sprintf("An identical watch %q already exists (%s); nothing was created.", w.Name, w.ID)}, nil
				}
				if !w.Active {
					return nil, &mcperr.Error{Code: mcperr.Conflict, Field: "name", Value: r.Name,
						Message: fmt.Sprintf("the stopped watch %s still holds the name %q in Avinode; choose another name", w.ID, w.Name)}
				}
				return nil, &mcperr.Error{Code: mcperr.Conflict, Field: "name", Value: r.Name,
					Message: fmt.Sprintf("watch %s is already named %q with other criteria (%s → %s, %s, %d days ahead); "+
						"choose another name, or delete_watch it first", w.ID, w.Name, orAnywhere(w.From), orAnywhere(w.To),
						orAny(w.AircraftCategory), w.DaysOut)}
			}
			w, err := d.Market.CreateWatch(ctx, r)
			if err != nil {
				return nil, err
			}
			return watchResult{Watch: *w, Message: fmt.Sprintf("Watch %q was created (%s).", w.Name, w.ID)}, nil
		},
	}
}

// watchResult is a watch create_watch made or found.
type watchResult struct {
	store.Watch
	AlreadyExisted bool   `json:"already_existed"`
	Message        string `json:"message"`
}

func orAnywhere(icao string) string {
	if icao == "" {
		return "anywhere"
	}
	return icao
}

func orAny(category string) string {
	if category == "" {
		return "any category"
	}
	return category
}

type noArgs struct{}

type watchesResult struct {
	Watches []store.Watch `json:"watches"`
	Total   int           `json:"total"`
}

func listWatches(d Deps) kit.Tool {
	return kit.Tool{
		Name:        "list_watches",
		Title:       "List empty-leg watches",
		Description: "List the account's empty-leg watches: id, name, route, aircraft category, days ahead and whether active.",
		InputSchema: withProperties(schema.MustFor[noArgs]()),
		Effect:      kit.ReadOnly,
		OpenWorld:   true,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			if err := d.Market.SyncWatches(ctx); err != nil {
				return nil, err
			}
			ws, err := d.Store.Watches(ctx)
			if err != nil {
				return nil, err
			}
			if ws == nil {
				ws = []store.Watch{}
			}
			return watchesResult{Watches: ws, Total: len(ws)}, nil
		},
	}
}

type deleteWatchArgs struct {
	WatchID string `json:"watch_id" jsonschema:"the watch to stop, as list_watches shows it" pattern:"^[a-z]{1,32}-[0-9]{1,19}$"`
}

func deleteWatch(d Deps) kit.Tool {
	return kit.Tool{
		Name:  "delete_watch",
		Title: "Stop an empty-leg watch",
		Description: "Stop an empty-leg watch: Avinode deactivates it and this server forgets it. It cannot be undone; create a new watch instead. " +
			"Deleting a watch that is already stopped or gone succeeds with deleted false and already_absent true.",
		InputSchema: schema.MustFor[deleteWatchArgs](),
		Effect:      kit.Destructive,
		Idempotent:  true,
		OpenWorld:   true,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a deleteWatchArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			w, was, err := d.Market.DeleteWatch(ctx, a.WatchID)
			if err != nil {
				return nil, err
			}
			res := deleteWatchResult{WatchID: a.WatchID, Deleted: was, AlreadyAbsent: !was, Watch: w}
			switch {
			case w == nil:
				res.Message = fmt.Sprintf("No watch %s exists (already deleted, or never created); nothing changed.", a.WatchID)
			case !was:
				res.Message = fmt.Sprintf("Watch %s was already stopped; it is forgotten here.", a.WatchID)
			default:
				res.Message = fmt.Sprintf("Watch %s is stopped.", a.WatchID)
			}
			return res, nil
		},
	}
}

type deleteWatchResult struct {
	WatchID       string       `json:"watch_id"`
	Deleted       bool         `json:"deleted"`
	AlreadyAbsent bool         `json:"already_absent"`
	Watch         *store.Watch `json:"watch,omitempty"`
	Message       string       `json:"message"`
}
