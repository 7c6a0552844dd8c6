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
	Offset           int    `json:"offset,omitempty" jsonschema:"best matches to skip: the next_offset of the previous page" mcp:"min=0,max=200"`
}

// Validate: the search is near at least one airport.
func (a *emptyLegsArgs) Validate() error {
	return needAnEnd(a.DepartureAirport, a.ArrivalAirport, "give at least one airport to search near")
}

type emptyLegsResult struct {
	EmptyLegs []market.EmptyLeg `json:"empty_legs"`
	Total     int               `json:"total"`
	page
	Note string `json:"note"`
}

func searchEmptyLegs(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "search_empty_legs",
		Title: "Search empty legs",
		Description: "Find empty legs — aircraft repositioning without passengers, sold at a discount — that could fly the " +
			"route: legs starting or ending near the given airports, or passing close by, within the days of flexibility around " +
			"date. Give departure_airport, arrival_airport or both. Times and routes of empty legs are flexible and must be " +
			"confirmed with the operator.",
		Paging:    "ask for the next matches with offset set to next_offset, or for fewer with limit",
		Effect:    kit.ReadOnly,
		OpenWorld: true,
	}, func(ctx context.Context, c *kit.Call, a emptyLegsArgs) (emptyLegsResult, error) {
		if err := d.resolveEnds(ctx, a.DepartureAirport, a.ArrivalAirport); err != nil {
			return emptyLegsResult{}, err
		}
		day, err := time.Parse(time.DateOnly, a.Date)
		if err != nil {
			return emptyLegsResult{}, mcperr.Invalid("date", a.Date, "a date YYYY-MM-DD", "date is not a date")
		}
		if day.Before(d.now().Truncate(24 * time.Hour)) {
			return emptyLegsResult{}, mcperr.Invalid("date", a.Date, "today or a later day", "date is in the past")
		}
		// One more than the page tells whether another follows.
		q := market.EmptyLegQuery{From: a.DepartureAirport, To: a.ArrivalAirport, Date: day, FlexDays: 3,
			Passengers: max(a.Passengers, 1), Category: a.AircraftCategory, Limit: a.Offset + a.Limit + 1}
		if a.FlexibilityDays != nil {
			q.FlexDays = *a.FlexibilityDays
		}
		legs, err := d.Market.SearchEmptyLegs(ctx, q)
		if err != nil {
			return emptyLegsResult{}, err
		}
		res := emptyLegsResult{EmptyLegs: []market.EmptyLeg{},
			Note: "Empty-leg times and routes are flexible and not scheduled flights; confirm with the operator before promising them."}
		if res.EmptyLegs, res.page, err = pageOf(c, legs, a.Offset, a.Limit, res); err != nil {
			return emptyLegsResult{}, err
		}
		res.Total = len(res.EmptyLegs)
		return res, nil
	})
}

// needAnEnd refuses, with msg, a route with neither a departure nor an
// arrival airport.
func needAnEnd(from, to, msg string) error {
	if from == "" && to == "" {
		return mcperr.Invalid("departure_airport", nil, "departure_airport, arrival_airport or both", "%s", msg)
	}
	return nil
}

// resolveEnds checks that the given airports (either may be empty) exist.
func (d Deps) resolveEnds(ctx context.Context, from, to string) error {
	for _, e := range []struct{ field, code string }{{"departure_airport", from}, {"arrival_airport", to}} {
		if e.code == "" {
			continue
		}
		if _, err := resolveAirport(ctx, d, e.field, e.code); err != nil {
			return err
		}
	}
	return nil
}

type createWatchArgs struct {
	DepartureAirport string `json:"departure_airport,omitempty" jsonschema:"ICAO code where watched empty legs start" pattern:"^[A-Z]{4}$"`
	ArrivalAirport   string `json:"arrival_airport,omitempty" jsonschema:"ICAO code where watched empty legs end" pattern:"^[A-Z]{4}$"`
	AircraftCategory string `json:"aircraft_category,omitempty" jsonschema:"only empty legs of this aircraft category" mcp:"enum=light|midsize|heavy|ultra-long-range"`
	Name             string `json:"name,omitempty" jsonschema:"a unique name for the watch (default: made from the route)" mcp:"maxLength=100"`
	DaysOut          int    `json:"days_out,omitempty" jsonschema:"how many days ahead to watch" mcp:"min=1,max=60,default=7"`
}

// Validate: a watch needs at least one airport.
func (a *createWatchArgs) Validate() error {
	return needAnEnd(a.DepartureAirport, a.ArrivalAirport, "a watch needs at least one airport")
}

func createWatch(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "create_watch",
		Title: "Watch for empty legs",
		Description: "Create an empty-leg watch: Avinode then reports empty legs matching the route (an airport at either end or " +
			"both) and aircraft category as operators publish them. list_watches shows the watches; delete_watch stops one. " +
			"Names are unique: repeating an identical create_watch returns the existing watch (already_existed true) instead " +
			"of a second one, and a name already used by a watch with other criteria is refused with CONFLICT.",
		Effect:     kit.Additive,
		Idempotent: true,
		OpenWorld:  true,
	}, func(ctx context.Context, c *kit.Call, a createWatchArgs) (watchResult, error) {
		if err := d.resolveEnds(ctx, a.DepartureAirport, a.ArrivalAirport); err != nil {
			return watchResult{}, err
		}
		r := market.WatchRequest{Name: strings.TrimSpace(a.Name), From: a.DepartureAirport,
			To: a.ArrivalAirport, Category: a.AircraftCategory, DaysOut: a.DaysOut}
		if r.Name == "" {
			r.Name = market.WatchName(r)
		}
		if err := d.Market.SyncWatches(ctx); err != nil {
			return watchResult{}, err
		}
		ws, err := d.Store.Watches(ctx)
		if err != nil {
			return watchResult{}, err
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
				return watchResult{}, &mcperr.Error{Code: mcperr.Conflict, Field: "name", Value: r.Name,
					Message: fmt.Sprintf("the stopped watch %s still holds the name %q in Avinode; choose another name", w.ID, w.Name)}
			}
			return watchResult{}, &mcperr.Error{Code: mcperr.Conflict, Field: "name", Value: r.Name,
				Message: fmt.Sprintf("watch %s is already named %q with other criteria (%s → %s, %s, %d days ahead); "+
					"choose another name, or delete_watch it first", w.ID, w.Name, orAnywhere(w.From), orAnywhere(w.To),
					orAny(w.AircraftCategory), w.DaysOut)}
		}
		w, err := d.Market.CreateWatch(ctx, r)
		if err != nil {
			return watchResult{}, err
		}
		return watchResult{Watch: *w, Message: fmt.Sprintf("Watch %q was created (%s).", w.Name, w.ID)}, nil
	})
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

type listWatchesArgs struct {
	Limit  int `json:"limit,omitempty" jsonschema:"most watches to return, oldest first" mcp:"min=1,max=500,default=100"`
	Offset int `json:"offset,omitempty" jsonschema:"watches to skip: the next_offset of the previous page" mcp:"min=0,max=10000"`
}

type watchesResult struct {
	Watches []store.Watch `json:"watches"`
	Total   int           `json:"total"`
	page
}

func listWatches(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:        "list_watches",
		Title:       "List empty-leg watches",
		Description: "List the account's empty-leg watches, oldest first: id, name, route, aircraft category, days ahead and whether active.",
		Paging:      "ask for the next page with offset set to next_offset, or for fewer watches with limit",
		Effect:      kit.ReadOnly,
		OpenWorld:   true,
	}, func(ctx context.Context, c *kit.Call, a listWatchesArgs) (watchesResult, error) {
		if err := d.Market.SyncWatches(ctx); err != nil {
			return watchesResult{}, err
		}
		ws, err := d.Store.Watches(ctx)
		if err != nil {
			return watchesResult{}, err
		}
		res := watchesResult{Watches: []store.Watch{}}
		if res.Watches, res.page, err = pageOf(c, ws, a.Offset, a.Limit, res); err != nil {
			return watchesResult{}, err
		}
		res.Total = len(res.Watches)
		return res, nil
	})
}

type deleteWatchArgs struct {
	WatchID string `json:"watch_id" jsonschema:"the watch to stop, as list_watches shows it" pattern:"^[a-z]{1,32}-[0-9]{1,19}$"`
}

func deleteWatch(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "delete_watch",
		Title: "Stop an empty-leg watch",
		Description: "Stop an empty-leg watch: Avinode deactivates it and this server forgets it. It cannot be undone; create a new watch instead. " +
			"Deleting a watch that is already stopped or gone succeeds with deleted false and already_absent true.",
		Effect:     kit.Destructive,
		Idempotent: true,
		OpenWorld:  true,
	}, func(ctx context.Context, c *kit.Call, a deleteWatchArgs) (deleteWatchResult, error) {
		w, was, err := d.Market.DeleteWatch(ctx, a.WatchID)
		if err != nil {
			return deleteWatchResult{}, err
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
	})
}

type deleteWatchResult struct {
	WatchID       string       `json:"watch_id"`
	Deleted       bool         `json:"deleted"`
	AlreadyAbsent bool         `json:"already_absent"`
	Watch         *store.Watch `json:"watch,omitempty"`
	Message       string       `json:"message"`
}
