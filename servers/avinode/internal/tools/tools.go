// Package tools defines the avinode server's tools and resources, one file
// per family, each tool's definition beside its handler. Handlers get their
// dependencies through Deps: the marketplace backend (Avinode or the
// simulation) and the store it keeps up to date. A handler that reads asks the
// backend to bring the store up to date for what it reads, then answers from
// the store.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/airports"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Deps is what the tools need.
type Deps struct {
	Store  *store.Store
	Market market.Backend
	// Now is the clock dates are checked against (default: wall clock).
	Now func() time.Time
	// Watch, when set, is the trip resources' Watch: it follows a
	// subscribed trip's changes made by any process (feed.Feed.Watch).
	Watch func(uri string, vars map[string]string) (stop func(), err error)
	// Poke, when set, wakes this process's webhook processor (after a
	// requeue).
	Poke func()
}

func (d Deps) now() time.Time {
	if d.Now != nil {
		return d.Now().UTC()
	}
	return time.Now().UTC()
}

// All returns every tool.
func All(d Deps) []kit.Tool {
	var out []kit.Tool
	out = append(out, TripTools(d)...)
	out = append(out, QuoteTools(d)...)
	out = append(out, MessageTools(d)...)
	out = append(out, AirportTools(d)...)
	out = append(out, EmptyLegTools(d)...)
	out = append(out, WebhookTools(d)...)
	return out
}

// Id patterns: Avinode ids are a lower-case prefix, a dash and a number.
const (
	tripIDPattern = `^atrip-[0-9]{1,19}$`
	icaoPattern   = `^[A-Z]{4}$`
)

// marketSource names the sellers' side for fenced results.
const marketSource = "Avinode sellers (operators' own text)"

// resolveAirport finds an airport by ICAO code: the embedded table first,
// then the marketplace. An unknown code is a VALIDATION_ERROR on field.
func resolveAirport(ctx context.Context, d Deps, field, code string) (airports.Airport, error) {
	if a, ok := airports.Lookup(code); ok && a.ICAO == code {
		return a, nil
	}
	a, ok, err := d.Market.LookupAirport(ctx, code)
	if err != nil {
		return airports.Airport{}, err
	}
	if !ok {
		return airports.Airport{}, mcperr.Invalid(field, code, "the ICAO code of an airport (search_airports finds codes by name or city)",
			"no airport has the ICAO code %s", code)
	}
	return a, nil
}

// parseDateTime reads an RFC 3339 date-time argument.
func parseDateTime(field, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, mcperr.Invalid(field, v, "an ISO 8601 date-time with a time zone, e.g. 2026-05-01T14:00:00Z",
			"%s is not a date-time", field)
	}
	return t.UTC(), nil
}

// jsonText renders v for a resource's contents.
func jsonText(v any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", mcperr.Wrap(err)
	}
	return string(b), nil
}

// minutes rounds a duration to tenths of a minute.
func minutes(d time.Duration) float64 {
	return float64(int64(d.Minutes()*10+0.5)) / 10
}

// resourceURIs tells an agent where to subscribe for a trip's updates.
type resourceURIs struct {
	Trip   string `json:"trip"`
	Quotes string `json:"quotes"`
}

func urisOf(tripID string) resourceURIs {
	return resourceURIs{Trip: market.TripURI(tripID), Quotes: market.QuotesURI(tripID)}
}

// describeLegs renders legs for a message: "KTEB → KVNY on 2026-05-01".
func describeLegs(segs []store.Segment) string {
	var parts []string
	for _, s := range segs {
		parts = append(parts, fmt.Sprintf("%s → %s on %s", s.From, s.To, s.Departure.Format("2006-01-02 15:04 MST")))
	}
	return strings.Join(parts, ", ")
}

// page tells an agent that a list goes on. Truncated: the result budget
// cut the list short. NextOffset, when set, is the offset of the next page:
// more items follow, cut by the budget or past the limit.
type page struct {
	Truncated  bool `json:"truncated"`
	NextOffset int  `json:"next_offset,omitempty"`
}

// pageOf returns the page of items (all of them from the first, at most
// offset+limit+1, so that one more than asked tells whether another page
// follows) that starts at offset, holds at most limit items and fits the
// call's result budget once the rest of the result (rest, with an empty
// list) is paid for.
func pageOf[T any](c *kit.Call, items []T, offset, limit int, rest any) ([]T, page, error) {
	window := items[min(offset, len(items)):]
	more := len(window) > limit
	window = window[:min(limit, len(window))]
	fixed, err := json.Marshal(rest)
	if err != nil {
		return nil, page{}, mcperr.Wrap(err)
	}
	n, err := kit.FitItems(window, c.Room()-kit.CostJSON(fixed))
	if err != nil {
		return nil, page{}, mcperr.Wrap(err)
	}
	var p page
	if n < len(window) {
		p.Truncated = true
	}
	if p.Truncated || more {
		p.NextOffset = offset + n
	}
	return append(make([]T, 0, n), window[:n]...), p, nil
}
