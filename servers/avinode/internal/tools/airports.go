package tools

import (
	"context"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/airports"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// AirportTools returns search_airports.
func AirportTools(d Deps) []kit.Tool { return []kit.Tool{searchAirports(d)} }

type airportsArgs struct {
	Query  string `json:"query" jsonschema:"an ICAO or IATA code, or words of an airport's name or city, e.g. KTEB, LGW, teterboro, le bourget, new york" mcp:"minLength=2,maxLength=100"`
	Limit  int    `json:"limit,omitempty" jsonschema:"most airports to return" mcp:"min=1,max=50,default=10"`
	Offset int    `json:"offset,omitempty" jsonschema:"best matches to skip: the next_offset of the previous page" mcp:"min=0,max=200"`
}

// Validate: a query is more than blanks.
func (a *airportsArgs) Validate() error {
	if strings.TrimSpace(a.Query) == "" {
		return mcperr.Invalid("query", a.Query, "a code, a name or a city", "the query is blank")
	}
	return nil
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
	page
	// Source says where the airports come from: avinode (the
	// marketplace's search, then the table) or table.
	Source string `json:"source"`
	Note   string `json:"note,omitempty"`
}

func searchAirports(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "search_airports",
		Title: "Find airports",
		Description: "Find airports by ICAO or IATA code, name or city, best match first (accents, case and punctuation " +
			"ignored; St reads as Saint; local names such as München work): ICAO and IATA codes, name, city, country, " +
			"coordinates and size. Use it to turn what the user says (\"Teterboro\", \"Nice\", \"St Barth\", \"LHR\") into " +
			"the ICAO codes create_trip needs. With Avinode credentials it asks Avinode's airport search first (what " +
			"Avinode accepts in a trip), then the built-in table of about 6 850 airports, which includes the " +
			"business-aviation fields (Courchevel, East Hampton, Saanen/Gstaad…).",
		Paging:    "ask for the next matches with offset set to next_offset, or for fewer with limit",
		Effect:    kit.ReadOnly,
		OpenWorld: true,
	}, func(ctx context.Context, c *kit.Call, a airportsArgs) (airportsResult, error) {
		q := strings.TrimSpace(a.Query)
		// One more than the page tells whether another follows.
		want := a.Offset + a.Limit + 1
		out := airportsResult{Query: q, Airports: []airportView{}, Source: "table"}
		var found []airportView
		seen := map[string]bool{}
		add := func(ap airports.Airport) {
			if len(found) < want && !seen[ap.ICAO] {
				seen[ap.ICAO] = true
				found = append(found, viewOf(ap))
			}
		}
		remote, searched, err := d.Market.SearchAirports(ctx, q, want)
		switch {
		case err != nil && ctx.Err() != nil:
			return airportsResult{}, err
		case err != nil:
			// The table still answers; the note says what is missing.
			out.Note = "Avinode's airport search failed (" + mcperr.Wrap(err).Message + "); these airports come from the built-in table only."
		case searched:
			out.Source = "avinode"
			for _, ap := range remote {
				// The table knows an airport's type and elevation;
				// Avinode's answer names it as the marketplace does.
				if known, ok := airports.Lookup(ap.ICAO); ok && known.ICAO == ap.ICAO {
					known.Name, known.City = ap.Name, ap.City
					ap = known
				}
				add(ap)
			}
		}
		for _, ap := range airports.Search(q, want) {
			add(ap)
		}
		if out.Airports, out.page, err = pageOf(c, found, a.Offset, a.Limit, out); err != nil {
			return airportsResult{}, err
		}
		out.Total = len(out.Airports)
		return out, nil
	})
}
