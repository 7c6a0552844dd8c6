package tools

import (
	"context"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/airports"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/schema"
)

// AirportTools returns search_airports.
func AirportTools(d Deps) []kit.Tool { return []kit.Tool{searchAirports(d)} }

type airportsArgs struct {
	Query string `json:"query" jsonschema:"an ICAO or IATA code, or words of an airport's name or city, e.g. KTEB, LGW, teterboro, le bourget, new york" mcp:"minLength=2,maxLength=100"`
	Limit int    `json:"limit,omitempty" jsonschema:"most airports to return" mcp:"min=1,max=50,default=10"`
}

// airportView is an airport as the tool shows it; an airport found only
// in the marketplace has no type.
type airportView struct {
	ICAO        string  `json:"icao"`
	IATA        string  `json:"iata,omitempty"`
	Name        string  `json:"name"`
	City        string  `json:"city,omitempty"`
	Country     string  `json:"country"`
	Latitude    float64 `json:"latitude"`
	Longitude   float64 `json:"longitude"`
	ElevationFt int     `json:"elevation_ft,omitempty"`
	Type        string  `json:"type,omitempty"`
	Scheduled   bool    `json:"scheduled_service"`
}

func viewOf(a airports.Airport) airportView {
	v := airportView{ICAO: a.ICAO, IATA: a.IATA, Name: a.Name, City: a.City, Country: a.Country, Latitude: a.Latitude,
		Longitude: a.Longitude, ElevationFt: a.ElevationFt, Scheduled: a.Scheduled}
	if a.Kind != 0 {
		v.Type = a.Kind.String()
	}
	return v
}

type airportsResult struct {
	Query    string        `json:"query"`
	Airports []airportView `json:"airports"`
	Total    int           `json:"total"`
}

func searchAirports(d Deps) kit.Tool {
	return kit.Tool{
		Name:  "search_airports",
		Title: "Find airports",
		Description: "Find airports by ICAO or IATA code, name or city, best match first (accents and case ignored): ICAO and " +
			"IATA codes, name, city, country, coordinates and size. Use it to turn what the user says (\"Teterboro\", \"Nice\", " +
			"\"LHR\") into the ICAO codes create_trip needs.",
		InputSchema: schema.MustFor[airportsArgs](),
		Effect:      kit.ReadOnly,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a airportsArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			q := strings.TrimSpace(a.Query)
			if q == "" {
				return nil, mcperr.Invalid("query", a.Query, "a code, a name or a city", "the query is blank")
			}
			if a.Limit == 0 {
				a.Limit = 10
			}
			found := airports.Search(q, a.Limit)
			if len(found) == 0 && len(q) == 4 && strings.ToUpper(q) == q {
				// An ICAO code the table lacks: ask the marketplace.
				ap, ok, err := d.Market.LookupAirport(ctx, q)
				if err != nil {
					return nil, err
				}
				if ok {
					found = append(found, ap)
				}
			}
			out := airportsResult{Query: q, Airports: []airportView{}, Total: len(found)}
			for _, ap := range found {
				out.Airports = append(out.Airports, viewOf(ap))
			}
			return out, nil
		},
	}
}
