package tools

import (
	"context"
	"regexp"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

var tripIDRE = regexp.MustCompile(tripIDPattern)

// recentTrips bounds resources/list.
const recentTrips = 20

// Templates returns the trip resources: a trip, and its quotes. Agents that
// may call the read-only trip and quote tools may read them; subscribers
// hear notifications/resources/updated whenever a quote, an RFQ status or a
// message of the trip is stored, from any source (with Deps.Watch, from any
// process).
func Templates(d Deps) []kit.ResourceTemplate {
	return []kit.ResourceTemplate{
		// The longer template first: "{id}" alone would also match
		// "atrip-1/quotes".
		{
			URITemplate: "avinode://trips/{id}/quotes", Name: "trip_quotes", Title: "A trip's quotes",
			Description: "Every quote received for the trip and how the operators have answered (what get_quotes returns for the trip). Subscribe to hear of each new quote, decline or status change.",
			MIMEType:    "application/json", Tools: []string{"get_quotes", "get_rfq"}, Watch: d.Watch,
			Read: readTrip(func(ctx context.Context, id string) (*quotesView, error) {
				return d.quotesView(ctx, quotesArgs{TripID: id})
			}),
		},
		{
			URITemplate: "avinode://trips/{id}", Name: "trip", Title: "A trip",
			Description: "The trip, its RFQs and a summary of the answers (what get_trip returns). Subscribe to hear of every change to it.",
			MIMEType:    "application/json", Tools: []string{"get_trip", "get_quotes", "get_rfq"}, Watch: d.Watch,
			Read: readTrip(d.tripView),
			List: func(ctx context.Context, _ string) ([]kit.ResourceInfo, error) {
				trips, err := d.Store.RecentTrips(ctx, recentTrips)
				if err != nil {
					return nil, err
				}
				out := make([]kit.ResourceInfo, 0, len(trips))
				for _, t := range trips {
					name := t.ID
					if t.DisplayID != "" {
						name += " (" + t.DisplayID + ")"
					}
					out = append(out, kit.ResourceInfo{URI: market.TripURI(t.ID), Name: name, Title: "Trip " + describeLegs(t.Segments),
						MIMEType: "application/json"})
				}
				return out, nil
			},
		},
	}
}

// readTrip serves reads of a trip resource: view of the trip the URI names,
// as JSON.
func readTrip[V any](view func(ctx context.Context, id string) (V, error)) func(context.Context, *kit.ReadRequest) ([]kit.Contents, error) {
	return func(ctx context.Context, r *kit.ReadRequest) ([]kit.Contents, error) {
		id := r.Vars["id"]
		if !tripIDRE.MatchString(id) {
			return nil, mcperr.New(mcperr.NotFound, "no such trip resource")
		}
		v, err := view(ctx, id)
		if err != nil {
			return nil, err
		}
		text, err := jsonText(v)
		if err != nil {
			return nil, err
		}
		return []kit.Contents{{URI: r.URI, MIMEType: "application/json", Text: text}}, nil
	}
}
