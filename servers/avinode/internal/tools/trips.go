package tools

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/airports"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// TripTools returns create_trip, find_trips, get_trip and cancel_trip.
func TripTools(d Deps) []kit.Tool {
	return []kit.Tool{createTrip(d), findTrips(d), getTrip(d), cancelTrip(d)}
}

// Limits of a trip.
const (
	maxExtraSegments = 8
	maxDaysAhead     = 730
)

// Timing of a trip's legs. A leg cannot depart before the previous one can
// have landed and turned around; the estimate errs short (a fast cruise, no
// taxi or climb), so that only impossible schedules are refused.
const (
	// MinLeadTime is how far ahead the first departure must be: the least
	// time operators need to quote, crew and position an aircraft.
	MinLeadTime = 2 * time.Hour
	// CruiseKnots is the ground speed the block time is estimated with:
	// faster than most business jets cruise.
	CruiseKnots = 500
	// MinTurnaround is the least time between a leg's landing and the next
	// departure: deplaning, refuelling, boarding.
	MinTurnaround = time.Hour
)

// legRule states the timing rule for descriptions and errors.
var legRule = fmt.Sprintf("The first departure must be at least %s from now; each later leg must depart no earlier than the "+
	"previous leg's departure plus its estimated block time (great-circle distance at %d knots) plus %s turnaround.",
	duration(MinLeadTime), CruiseKnots, duration(MinTurnaround))

// blockTime estimates a leg's time in the air; zero when an airport's
// position is unknown (a marketplace airport without coordinates).
func blockTime(from, to airports.Airport) time.Duration {
	if (from.Latitude == 0 && from.Longitude == 0) || (to.Latitude == 0 && to.Longitude == 0) {
		return 0
	}
	_, nm := airports.Distance(from, to)
	return time.Duration(nm / CruiseKnots * float64(time.Hour))
}

// ceilMinute rounds up to a whole minute, the precision dates are shown in.
func ceilMinute(t time.Time) time.Time {
	if r := t.Truncate(time.Minute); !r.Equal(t) {
		return r.Add(time.Minute)
	}
	return t
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// duration renders whole hours and minutes: "2h", "1h30m".
func duration(d time.Duration) string {
	s := d.Round(time.Minute).String()
	s = strings.TrimSuffix(s, "0s")
	return strings.TrimSuffix(strings.Replace(s, "h0m", "h", 1), "h0m")
}

type segmentArgs struct {
	DepartureAirport string `json:"departure_airport" jsonschema:"ICAO code of this leg's departure airport" pattern:"^[A-Z]{4}$"`
	ArrivalAirport   string `json:"arrival_airport" jsonschema:"ICAO code of this leg's arrival airport" pattern:"^[A-Z]{4}$"`
	DepartureDate    string `json:"departure_date" jsonschema:"departure of this leg, ISO 8601 date-time with time zone; no earlier than the previous leg's departure plus its flight time and turnaround" mcp:"format=date-time"`
	Passengers       int    `json:"passengers,omitempty" jsonschema:"passengers on this leg (default: the trip's passengers)" mcp:"min=1,max=19"`
}

type createTripArgs struct {
	DepartureAirport  string        `json:"departure_airport" jsonschema:"ICAO code of the departure airport: 4 upper-case letters, e.g. KTEB for Teterboro (search_airports finds codes)" pattern:"^[A-Z]{4}$"`
	ArrivalAirport    string        `json:"arrival_airport" jsonschema:"ICAO code of the arrival airport, e.g. KVNY for Van Nuys" pattern:"^[A-Z]{4}$"`
	Passengers        int           `json:"passengers" jsonschema:"number of passengers, 1 to 19" mcp:"min=1,max=19"`
	DepartureDate     string        `json:"departure_date" jsonschema:"departure date and time, ISO 8601 with a time zone, e.g. 2026-05-01T14:00:00Z; at least two hours from now, within two years" mcp:"format=date-time"`
	ReturnDate        string        `json:"return_date,omitempty" jsonschema:"for a round trip: departure of the return leg (arrival airport back to the departure airport), no earlier than the last outbound leg's departure plus its flight time and turnaround" mcp:"format=date-time"`
	Segments          []segmentArgs `json:"segments,omitempty" jsonschema:"further legs of a multi-leg trip, flown after the first leg and before any return leg, in order" mcp:"maxItems=8"`
	AircraftCategory  string        `json:"aircraft_category,omitempty" jsonschema:"aircraft category to ask for (default: any)" mcp:"enum=light|midsize|heavy|ultra-long-range"`
	Notes             string        `json:"notes,omitempty" jsonschema:"notes kept with the trip in this server, e.g. the client's preferences (to tell operators something, use send_message)" mcp:"maxLength=2000"`
	ExternalReference string        `json:"external_reference,omitempty" jsonschema:"your own reference for the trip, unique per trip (sent to Avinode as its external trip id; default: one is generated); find_trips finds the trip by it" mcp:"maxLength=64" pattern:"^[A-Za-z0-9][A-Za-z0-9._:/-]*$"`
}

type legView struct {
	store.Segment
	FromName   string `json:"departure_name,omitempty"`
	ToName     string `json:"arrival_name,omitempty"`
	DistanceNM int    `json:"distance_nm,omitempty"`
}

func legViews(segs []store.Segment) []legView {
	out := make([]legView, 0, len(segs))
	for _, s := range segs {
		v := legView{Segment: s}
		a, ok1 := airports.Lookup(s.From)
		b, ok2 := airports.Lookup(s.To)
		if ok1 {
			v.FromName = a.Name
		}
		if ok2 {
			v.ToName = b.Name
		}
		if ok1 && ok2 {
			_, nm := airports.Distance(a, b)
			v.DistanceNM = int(math.Round(nm))
		}
		out = append(out, v)
	}
	return out
}

type createTripResult struct {
	TripID            string       `json:"trip_id"`
	DisplayID         string       `json:"display_id,omitempty"`
	Status            string       `json:"status"`
	NextAction        string       `json:"next_action"`
	DeepLink          string       `json:"deep_link"`
	DeepLinks         store.Links  `json:"deep_links"`
	Message           string       `json:"message"`
	Marketplace       string       `json:"marketplace"`
	Segments          []legView    `json:"segments"`
	AircraftCategory  string       `json:"aircraft_category,omitempty"`
	ExternalReference string       `json:"external_reference,omitempty"`
	OperatorsAsked    int          `json:"operators_asked"`
	Resources         resourceURIs `json:"resources"`
}

// Validate checks the rules between legs that need no lookup: every leg
// goes somewhere.
func (a *createTripArgs) Validate() error {
	type leg struct{ from, to, field string }
	legs := []leg{{a.DepartureAirport, a.ArrivalAirport, "arrival_airport"}}
	for i, s := range a.Segments {
		legs = append(legs, leg{s.DepartureAirport, s.ArrivalAirport, fmt.Sprintf("segments[%d].arrival_airport", i)})
	}
	if a.ReturnDate != "" {
		legs = append(legs, leg{legs[len(legs)-1].to, a.DepartureAirport, "return_date"})
	}
	for _, l := range legs {
		if l.from == l.to {
			return mcperr.Invalid(l.field, l.to, "an airport other than "+l.from, "the leg %s → %s goes nowhere", l.from, l.to)
		}
	}
	return nil
}

func createTrip(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "create_trip",
		Title: "Create a charter trip in Avinode",
		Description: "Create a private-jet charter trip in Avinode and get its deep link: hand deep_link to the user " +
			"(next_action OPEN_AVINODE), who picks operators and sends requests for quote (RFQs) in Avinode. Quotes arrive " +
			"over time: get_quotes with the trip_id, or subscribe to avinode://trips/{trip_id}/quotes. One leg needs " +
			"departure_airport, arrival_airport (ICAO codes; search_airports finds them), passengers and departure_date; add " +
			"return_date for a round trip or segments for more legs. " + legRule + " " +
			"After an error whose retryable is false, never call create_trip again for the same trip: it may exist and " +
			"RFQs may be out. Call find_trips with the external_reference first; a reused external_reference is refused with CONFLICT.",
		Effect:    kit.Additive,
		OpenWorld: true,
		// Notes hold the client's preferences: personal data, not intent.
		AuditOmit: []string{"notes"},
	}, func(ctx context.Context, c *kit.Call, a createTripArgs) (createTripResult, error) {
		req, err := d.tripRequest(ctx, a)
		if err != nil {
			return createTripResult{}, err
		}
		trip, err := d.createRecorded(ctx, req)
		if err != nil {
			return createTripResult{}, err
		}
		rfqs, err := d.Store.TripRFQs(ctx, trip.ID)
		if err != nil {
			return createTripResult{}, err
		}
		res := createTripResult{TripID: trip.ID, DisplayID: trip.DisplayID, Status: "created", NextAction: "OPEN_AVINODE",
			DeepLink: trip.Links.SearchInAvinode, DeepLinks: trip.Links, Marketplace: d.Market.Mode(),
			Segments: legViews(trip.Segments), AircraftCategory: trip.AircraftCategory, ExternalReference: trip.ExternalReference,
			OperatorsAsked: len(rfqs), Resources: urisOf(trip.ID)}
		if res.DeepLink == "" {
			res.DeepLink = trip.Links.ViewInAvinode
		}
		res.Message = createdMessage(d.Market.Mode(), trip, len(rfqs))
		return res, nil
	})
}

// createRecorded creates the trip with a durable record of the attempt,
// written before the marketplace is asked and completed after: if the
// request's outcome is unknown, find_trips shows the attempt and what to
// check, and the same reference cannot create a second trip.
func (d Deps) createRecorded(ctx context.Context, req market.TripRequest) (*store.Trip, error) {
	if req.ExternalReference == "" {
		req.ExternalReference = newReference(d.now())
	}
	ref := req.ExternalReference
	prev, err := d.Store.BeginTripAttempt(ctx, ref, req.Segments)
	if errors.Is(err, store.ErrReferenceTaken) {
		return nil, referenceTaken(prev)
	}
	if err != nil {
		return nil, err
	}
	trip, err := d.Market.CreateTrip(ctx, req)
	// The outcome is recorded even when the call's context has ended.
	rec := context.WithoutCancel(ctx)
	if err != nil {
		if errors.Is(err, market.ErrOutcomeUnknown) {
			e := mcperr.Wrap(err)
			_ = d.Store.FinishTripAttempt(rec, ref, store.AttemptUnknown, "", e.Message)
			return nil, mcperr.New(e.Code, "%s. The trip with external_reference %s may exist in Avinode now: do not call "+
				"create_trip again for it. Call find_trips with external_reference %s; Avinode's API cannot search trips by "+
				"reference, so if find_trips still reports the outcome as unknown, look for reference %s in Avinode's trip "+
				"list (the web application) and create the trip again only if it is not there, with a new external_reference.",
				strings.TrimSuffix(e.Message, "."), ref, ref, ref).WithRetryable(false).WithCause(err)
		}
		if ferr := d.Store.FinishTripAttempt(rec, ref, store.AttemptFailed, "", mcperr.Wrap(err).Message); ferr != nil {
			return nil, errors.Join(err, ferr)
		}
		return nil, err
	}
	if err := d.Store.FinishTripAttempt(rec, ref, store.AttemptCreated, trip.ID, ""); err != nil {
		return nil, err
	}
	return trip, nil
}

// newReference makes an external reference for a trip the caller gave none:
// every trip has one, so that find_trips can tell whether it exists.
func newReference(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("mcp-%s-%x", now.Format("20060102T150405"), b)
}

func referenceTaken(prev *store.TripAttempt) error {
	if prev.TripID != "" {
		return mcperr.New(mcperr.Conflict, "external_reference %s already belongs to trip %s; read it with get_trip, or give "+
			"another external_reference for a new trip", prev.Reference, prev.TripID)
	}
	return mcperr.New(mcperr.Conflict, "a create_trip with external_reference %s was made at %s and its outcome is unknown (%s): "+
		"the trip may exist in Avinode. Look for the reference in Avinode's trip list; only if it is not there, create the trip "+
		"with another external_reference", prev.Reference, prev.CreatedAt.Format(time.RFC3339), prev.State)
}

type findTripsArgs struct {
	ExternalReference string `json:"external_reference,omitempty" jsonschema:"the exact external reference given to (or generated by) create_trip" mcp:"maxLength=64" pattern:"^[A-Za-z0-9][A-Za-z0-9._:/-]*$"`
	Since             string `json:"since,omitempty" jsonschema:"only trips created at or after this ISO 8601 date-time" mcp:"format=date-time"`
	Limit             int    `json:"limit,omitempty" jsonschema:"most trips to return, newest first" mcp:"min=1,max=50,default=10"`
	Offset            int    `json:"offset,omitempty" jsonschema:"trips to skip, newest first: the next_offset of the previous page" mcp:"min=0,max=10000"`
}

type foundTrip struct {
	TripID            string      `json:"trip_id"`
	DisplayID         string      `json:"display_id,omitempty"`
	ExternalReference string      `json:"external_reference,omitempty"`
	Status            string      `json:"status"`
	Segments          []legView   `json:"segments"`
	DeepLinks         store.Links `json:"deep_links"`
	CreatedAt         time.Time   `json:"created_at"`
}

type findTripsResult struct {
	Trips []foundTrip `json:"trips"`
	// Unconfirmed are attempts with no trip known here: their outcome
	// is unknown, or they failed.
	Unconfirmed []store.TripAttempt `json:"unconfirmed"`
	Total       int                 `json:"total"`
	page
	Note string `json:"note"`
}

func findTrips(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "find_trips",
		Title: "Find trips by reference",
		Description: "Find the trips this server created, by external_reference or since a date-time, newest first: trip " +
			"id, status, legs and deep links. Use it before repeating a create_trip that failed, to see whether the trip " +
			"exists. unconfirmed lists attempts with no known trip: outcome_unknown means the request reached Avinode but no " +
			"answer came back (the trip may exist; check Avinode's trip list for the reference before creating it again), " +
			"failed means no trip was created. Avinode's API has no search by reference, so this reads the server's own " +
			"record of the trips it created and of those webhooks brought.",
		Paging: "ask for the next page with offset set to next_offset, or for fewer trips with limit",
		Effect: kit.ReadOnly,
	}, func(ctx context.Context, c *kit.Call, a findTripsArgs) (findTripsResult, error) {
		// One more than asked tells whether another page follows.
		f := store.TripFilter{Reference: a.ExternalReference, Limit: a.Offset + a.Limit + 1}
		if a.Since != "" {
			at, err := parseDateTime("since", a.Since)
			if err != nil {
				return findTripsResult{}, err
			}
			f.Since = at
		}
		trips, attempts, err := d.Store.FindTrips(ctx, f)
		if err != nil {
			return findTripsResult{}, err
		}
		res := findTripsResult{Trips: []foundTrip{}, Unconfirmed: []store.TripAttempt{}}
		for _, at := range attempts {
			if at.State == store.AttemptPending {
				// Still waiting, or the server stopped before the
				// answer came: for the caller, the same as unknown.
				at.State = store.AttemptUnknown
			}
			res.Unconfirmed = append(res.Unconfirmed, at)
		}
		switch {
		case len(trips) > 0:
			res.Note = "These trips exist; do not create them again."
		case len(attempts) > 0:
			res.Note = "No trip is known here for these attempts. For one whose state is outcome_unknown, look for its " +
				"external_reference in Avinode's trip list before creating it again (with a new external_reference)."
		default:
			res.Note = "No trip or attempt matches: no create_trip with this reference reached the marketplace from this server."
		}
		var found []foundTrip
		for _, t := range trips {
			found = append(found, foundTrip{TripID: t.ID, DisplayID: t.DisplayID, ExternalReference: t.ExternalReference,
				Status: t.Status, Segments: legViews(t.Segments), DeepLinks: t.Links, CreatedAt: t.CreatedAt})
		}
		res.Trips, res.page, err = pageOf(c, found, a.Offset, a.Limit, res)
		res.Total = len(res.Trips)
		return res, err
	})
}

func createdMessage(mode string, trip *store.Trip, asked int) string {
	ref := trip.ID
	if trip.DisplayID != "" {
		ref += " (" + trip.DisplayID + ")"
	}
	if mode == market.ModeMock {
		msg := fmt.Sprintf("Trip %s was created in the simulated marketplace (no Avinode credentials are configured): %s. ", ref, describeLegs(trip.Segments))
		if asked == 0 {
			return msg + "No simulated operator has an aircraft for this trip; try another aircraft category or fewer passengers."
		}
		return msg + fmt.Sprintf("It was sent to %d operators, who answer over the next minutes; the deep link is a placeholder. "+
			"Tell the user, then call get_quotes with trip_id %s (or subscribe to %s) to see the quotes as they arrive.",
			asked, trip.ID, market.QuotesURI(trip.ID))
	}
	return fmt.Sprintf("Trip %s was created in Avinode: %s. Give the user the deep_link now: it opens Avinode's marketplace "+
		"search for this trip, where they choose operators and send the requests for quote. Quotes arrive as operators answer; "+
		"call get_quotes with trip_id %s (or subscribe to %s) to see them.", ref, describeLegs(trip.Segments), trip.ID, market.QuotesURI(trip.ID))
}

// tripRequest checks a create_trip call beyond its schema: airports exist,
// dates are in the future and in order.
func (d Deps) tripRequest(ctx context.Context, a createTripArgs) (market.TripRequest, error) {
	now := d.now()
	req := market.TripRequest{AircraftCategory: a.AircraftCategory, Notes: strings.TrimSpace(a.Notes), ExternalReference: a.ExternalReference}
	type legIn struct {
		from, to, date, fromField, toField, dateField string
		pax                                           int
	}
	legs := []legIn{{a.DepartureAirport, a.ArrivalAirport, a.DepartureDate, "departure_airport", "arrival_airport", "departure_date", a.Passengers}}
	for i, s := range a.Segments {
		p := fmt.Sprintf("segments[%d].", i)
		pax := s.Passengers
		if pax == 0 {
			pax = a.Passengers
		}
		legs = append(legs, legIn{s.DepartureAirport, s.ArrivalAirport, s.DepartureDate, p + "departure_airport", p + "arrival_airport", p + "departure_date", pax})
	}
	if a.ReturnDate != "" {
		last := legs[len(legs)-1]
		legs = append(legs, legIn{last.to, a.DepartureAirport, a.ReturnDate, "return_date", "return_date", "return_date", a.Passengers})
	}
	var prevAt, earliest time.Time
	var prevLeg string
	for i, l := range legs {
		from, err := resolveAirport(ctx, d, l.fromField, l.from)
		if err != nil {
			return req, err
		}
		to, err := resolveAirport(ctx, d, l.toField, l.to)
		if err != nil {
			return req, err
		}
		at, err := parseDateTime(l.dateField, l.date)
		if err != nil {
			return req, err
		}
		switch first := now.Add(MinLeadTime); {
		case !at.After(now):
			return req, mcperr.Invalid(l.dateField, l.date, "a date-time at or after "+stamp(ceilMinute(first))+" (now is "+now.Format(time.RFC3339)+")",
				"%s is in the past", l.dateField)
		case i == 0 && at.Before(first):
			return req, mcperr.Invalid(l.dateField, l.date, "a date-time at or after "+stamp(ceilMinute(first)),
				"%s is less than %s from now: operators need at least that long to quote, crew and position an aircraft",
				l.dateField, duration(MinLeadTime))
		case at.After(now.AddDate(0, 0, maxDaysAhead)):
			return req, mcperr.Invalid(l.dateField, l.date, "a date-time within two years", "%s is too far ahead", l.dateField)
		case i > 0 && at.Before(earliest):
			return req, mcperr.Invalid(l.dateField, l.date, "a date-time at or after "+stamp(earliest),
				"%s is too soon after the previous leg (%s departing %s): %s", l.dateField, prevLeg, stamp(prevAt), legRule)
		}
		prevAt, prevLeg = at, l.from+" → "+l.to
		earliest = ceilMinute(at.Add(blockTime(from, to) + MinTurnaround))
		req.Segments = append(req.Segments, store.Segment{From: l.from, To: l.to, Departure: at, Passengers: l.pax})
	}
	return req, nil
}

type tripArgs struct {
	TripID string `json:"trip_id" jsonschema:"the trip's id as create_trip returned it, e.g. atrip-64956153" pattern:"^atrip-[0-9]{1,19}$"`
}

// rfqSummaryRow is one RFQ of a trip, in brief.
type rfqSummaryRow struct {
	RFQID         string `json:"rfq_id"`
	SellerName    string `json:"seller_name"`
	Status        string `json:"status"`
	DeclineReason string `json:"decline_reason,omitempty"`
	AircraftType  string `json:"aircraft_type,omitempty"`
	Quotes        int    `json:"quotes"`
	Messages      int    `json:"messages"`
}

type tripView struct {
	store.Trip
	Segments    []legView       `json:"segments"`
	Marketplace string          `json:"marketplace"`
	QuoteStatus quoteSummary    `json:"quote_status"`
	RFQs        []rfqSummaryRow `json:"rfqs"`
	Resources   resourceURIs    `json:"resources"`
}

// tripView syncs and reads a trip with a summary of its RFQs.
func (d Deps) tripView(ctx context.Context, id string) (*tripView, error) {
	if err := d.Market.SyncTrip(ctx, id); err != nil {
		return nil, err
	}
	trip, err := d.Store.Trip(ctx, id)
	if err != nil {
		return nil, market.StoreNotFound(err, "trip_id", id, "trip")
	}
	rfqs, err := d.Store.TripRFQs(ctx, id)
	if err != nil {
		return nil, err
	}
	quotes, err := d.Store.Quotes(ctx, store.QuoteFilter{TripID: id}, d.now())
	if err != nil {
		return nil, err
	}
	counts, err := d.Store.MessageCounts(ctx, id)
	if err != nil {
		return nil, err
	}
	perRFQ := map[string]int{}
	for _, q := range quotes {
		perRFQ[q.RFQID]++
	}
	v := &tripView{Trip: *trip, Segments: legViews(trip.Segments), Marketplace: d.Market.Mode(),
		QuoteStatus: summarize(rfqs, quotes), RFQs: []rfqSummaryRow{}, Resources: urisOf(id)}
	for _, r := range rfqs {
		row := rfqSummaryRow{RFQID: r.ID, SellerName: r.SellerName, Status: r.Status, DeclineReason: r.DeclineReason,
			Quotes: perRFQ[r.ID], Messages: counts[r.ID]}
		if len(r.Lifts) > 0 {
			row.AircraftType = r.Lifts[0].AircraftType
		}
		v.RFQs = append(v.RFQs, row)
	}
	return v, nil
}

func getTrip(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "get_trip",
		Title: "Get a trip",
		Description: "Read a trip: its legs, status (open or cancelled), deep links, and each RFQ sent for it with the seller, " +
			"its status (unanswered, quoted, declined, cancelled) and how many quotes and messages it has, plus a summary of the " +
			"answers so far. For the quotes themselves use get_quotes.",
		Effect:    kit.ReadOnly,
		OpenWorld: true,
	}, func(ctx context.Context, c *kit.Call, a tripArgs) (tripView, error) {
		v, err := d.tripView(ctx, a.TripID)
		if err != nil {
			return tripView{}, err
		}
		return *v, nil
	})
}

type cancelTripArgs struct {
	TripID           string `json:"trip_id" jsonschema:"the trip to cancel" pattern:"^atrip-[0-9]{1,19}$"`
	Reason           string `json:"reason" jsonschema:"why: BY_CLIENT (the client cancelled), CHANGED (the plans changed), BOOKED (booked elsewhere), OTHER" mcp:"enum=BY_CLIENT|CHANGED|BOOKED|OTHER"`
	MessageToSellers string `json:"message_to_sellers,omitempty" jsonschema:"message sent to every operator that received an RFQ for the trip" mcp:"maxLength=2000"`
}

type cancelTripResult struct {
	tripView
	AlreadyCancelled bool   `json:"already_cancelled"`
	Message          string `json:"message"`
}

func cancelTrip(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "cancel_trip",
		Title: "Cancel a trip",
		Description: "Cancel a trip and every RFQ sent for it; the operators are told, with your message. Their quotes can no " +
			"longer be booked. Cancelling a cancelled trip changes nothing. Ask the user before cancelling.",
		Effect:     kit.Destructive,
		Idempotent: true,
		OpenWorld:  true,
		AuditOmit:  []string{"message_to_sellers"},
	}, func(ctx context.Context, c *kit.Call, a cancelTripArgs) (cancelTripResult, error) {
		already := false
		if t, err := d.Store.Trip(ctx, a.TripID); err == nil {
			already = t.Status == store.TripCancelled
		} else if !errors.Is(err, store.ErrNotFound) {
			return cancelTripResult{}, err
		}
		if !already {
			if err := d.Market.CancelTrip(ctx, a.TripID, a.Reason, strings.TrimSpace(a.MessageToSellers)); err != nil {
				return cancelTripResult{}, err
			}
		}
		v, err := d.tripView(ctx, a.TripID)
		if err != nil {
			return cancelTripResult{}, err
		}
		res := cancelTripResult{tripView: *v, AlreadyCancelled: already}
		if already {
			res.Message = fmt.Sprintf("Trip %s was already cancelled; nothing changed.", a.TripID)
		} else {
			res.Message = fmt.Sprintf("Trip %s is cancelled (%s); its RFQs are cancelled and the operators were told.", a.TripID, a.Reason)
		}
		return res, nil
	})
}
