package avinode

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The documents below are the parts of Avinode's resources this server
// reads and writes. Decoding ignores every other field, so new fields in
// Avinode's answers change nothing here.

// AirportRef names an airport by code.
type AirportRef struct {
	ICAO string `json:"icao,omitempty"`
	IATA string `json:"iata,omitempty"`
	Name string `json:"name,omitempty"`
}

// DateTime is a segment's date and time; Local false means UTC.
type DateTime struct {
	Date      string `json:"date"`
	Time      string `json:"time"`
	Departure bool   `json:"departure"`
	Local     bool   `json:"local"`
}

// Segment is one leg of a trip.
type Segment struct {
	StartAirport AirportRef `json:"startAirport"`
	EndAirport   AirportRef `json:"endAirport"`
	DateTime     DateTime   `json:"dateTime"`
	PaxCount     string     `json:"paxCount"`
	PaxSegment   bool       `json:"paxSegment"`
	PaxTBD       bool       `json:"paxTBD"`
	TimeTBD      bool       `json:"timeTBD"`
}

// LiftCriterion asks for an aircraft category.
type LiftCriterion struct {
	AircraftCategory string `json:"aircraftCategory"`
}

// Criteria are a trip's requirements on the aircraft.
type Criteria struct {
	RequiredLift           []LiftCriterion `json:"requiredLift,omitempty"`
	IncludeLiftUpgrades    bool            `json:"includeLiftUpgrades"`
	MaxFuelStopsPerSegment int             `json:"maxFuelStopsPerSegment"`
}

// TripInput is the body of POST /trips.
type TripInput struct {
	ExternalTripID string    `json:"externalTripId,omitempty"`
	Sourcing       bool      `json:"sourcing"`
	Segments       []Segment `json:"segments"`
	Criteria       *Criteria `json:"criteria,omitempty"`
}

// Action is a deep link into the Avinode web application.
type Action struct {
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
	Href        string `json:"href"`
}

// Trip is a trip as Avinode returns it.
type Trip struct {
	ID             string    `json:"id"`
	Href           string    `json:"href"`
	TripID         string    `json:"tripId"`
	ExternalTripID string    `json:"externalTripId"`
	Status         string    `json:"status"`
	Canceled       bool      `json:"canceled"`
	Segments       []Segment `json:"segments"`
	Actions        struct {
		SearchInAvinode *Action `json:"searchInAvinode"`
		ViewInAvinode   *Action `json:"viewInAvinode"`
		Cancel          *Action `json:"cancel"`
	} `json:"actions"`
}

// Ref is a link to another resource.
type Ref struct {
	ID   string `json:"id"`
	Href string `json:"href,omitempty"`
}

// Company is a buyer or seller company.
type Company struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	DisplayName string `json:"displayName"`
	CountryCode string `json:"countryCode"`
}

// Label is the company's display name, or its name.
func (c *Company) Label() string {
	if c == nil {
		return ""
	}
	if c.DisplayName != "" {
		return c.DisplayName
	}
	return c.Name
}

// Price is an amount in a currency.
type Price struct {
	Price    float64 `json:"price"`
	Currency string  `json:"currency"`
}

// LineItem is one line of a quote breakdown.
type LineItem struct {
	Description string `json:"description"`
	// Type is FLIGHT, POSITIONING, FEE or TAX.
	Type  string `json:"type"`
	Price Price  `json:"price"`
}

// Breakdown is a quote's price in sections of line items.
type Breakdown struct {
	Sections []struct {
		Name      string     `json:"name"`
		LineItems []LineItem `json:"lineItems"`
	} `json:"sections"`
}

// Quote is a seller's quote.
type Quote struct {
	ID            string     `json:"id"`
	CreatedOn     string     `json:"createdOn"`
	UpdatedOn     string     `json:"updatedOn"`
	ValidUntil    string     `json:"validUntil"`
	Status        string     `json:"status"`
	SellerPrice   *Price     `json:"sellerPrice"`
	SellerMessage string     `json:"sellerMessage"`
	Breakdown     *Breakdown `json:"quoteBreakdown"`
	RFQ           *Ref       `json:"rfq"`
	Lift          *Lift      `json:"lift"`
	SellerCompany *Company   `json:"sellerCompany"`
}

// Lift is an aircraft requested in an RFQ, with the seller's answer.
type Lift struct {
	ID                    string `json:"id"`
	AircraftType          string `json:"aircraftType"`
	AircraftCategory      string `json:"aircraftCategory"`
	AircraftTail          string `json:"aircraftTail"`
	MaxPax                int    `json:"maxPax"`
	YearOfMake            int    `json:"yearOfMake"`
	SourcingDisplayStatus string `json:"sourcingDisplayStatus"`
	DeclineReason         string `json:"declineReason"`
	DeclineMessage        string `json:"declineMessage"`
	Links                 struct {
		Quotes []Ref `json:"quotes"`
	} `json:"links"`
	LatestQuote *Quote `json:"latestQuote"`
}

// Message is a trip message: a chat line in an RFQ's thread, or the notice
// of a seller's response (a quote or a decline) to it.
type Message struct {
	ID      string `json:"id"`
	Message string `json:"message"`
	// MessageType says what the message is (CHAT for a chat line); absent
	// on plain chat messages.
	MessageType   string   `json:"messageType"`
	CreatedOn     string   `json:"createdOn"`
	SellerCompany *Company `json:"sellerCompany"`
	BuyerCompany  *Company `json:"buyerCompany"`
	RFQ           *Ref     `json:"rfq"`
}

// RFQ is a request for quote to one seller.
type RFQ struct {
	ID             string    `json:"id"`
	Href           string    `json:"href"`
	CreatedOn      string    `json:"createdOn"`
	UpdatedOn      string    `json:"updatedOn"`
	Status         string    `json:"status"`
	Trip           *Ref      `json:"trip"`
	SellerCompany  *Company  `json:"sellerCompany"`
	SellerLift     []Lift    `json:"sellerLift"`
	BuyerMessages  []Message `json:"buyerMessages"`
	SellerMessages []Ref     `json:"sellerMessages"`
}

// Airport is an airport of GET /airports/search.
type Airport struct {
	ID      string `json:"id"`
	ICAO    string `json:"icao"`
	IATA    string `json:"iata"`
	Name    string `json:"name"`
	City    string `json:"city"`
	Country struct {
		Code string `json:"code"`
	} `json:"country"`
	Coordinates struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
	} `json:"coordinates"`
}

// EmptyLegSearch is the body of POST /emptylegs/search.
type EmptyLegSearch struct {
	StartAirport            *AirportRef `json:"startAirport,omitempty"`
	EndAirport              *AirportRef `json:"endAirport,omitempty"`
	Date                    string      `json:"date"`
	NumberOfDaysFlexibility string      `json:"numberOfDaysFlexibility"`
	Passengers              string      `json:"passengers"`
	RequiredPartnerships    []string    `json:"requiredPartnerships"`
}

// EmptyLeg is one empty leg found.
type EmptyLeg struct {
	ID                string     `json:"id"`
	StartAirport      AirportRef `json:"startAirport"`
	EndAirport        AirportRef `json:"endAirport"`
	EarliestDeparture string     `json:"earliestDeparture"`
	LatestDeparture   string     `json:"latestDeparture"`
	AircraftType      string     `json:"aircraftType"`
	AircraftCategory  string     `json:"aircraftCategory"`
	MaxPax            int        `json:"maxPax"`
	Price             *Price     `json:"price"`
	SellerCompany     *Company   `json:"sellerCompany"`
}

// WatchPoint is one end of a watched segment: an airport or a country.
type WatchPoint struct {
	Airport     *AirportRef `json:"airport,omitempty"`
	CountryCode string      `json:"countryCode,omitempty"`
}

// WatchedSegment is a route an empty-leg watch covers.
type WatchedSegment struct {
	Start WatchPoint `json:"start"`
	End   WatchPoint `json:"end"`
}

// WatchLift is an aircraft category a watch covers.
type WatchLift struct {
	AircraftCategory string `json:"aircraftCategory"`
	PriceExpectation int    `json:"priceExpectation"`
}

// Watch is an empty-leg watch configuration.
type Watch struct {
	ID              string           `json:"id,omitempty"`
	UniqueName      string           `json:"uniqueName"`
	Active          bool             `json:"active"`
	WatchedSegments []WatchedSegment `json:"watchedSegments"`
	Lifts           []WatchLift      `json:"lifts,omitempty"`
	Priced          bool             `json:"priced"`
	Verified        bool             `json:"verified"`
	DaysOut         int              `json:"daysOut,omitempty"`
}

// CreateTrip is POST /trips. A POST that may have reached Avinode is never
// resent: a timeout is reported, not retried.
func (c *Client) CreateTrip(ctx context.Context, in TripInput) (*Trip, error) {
	var out Trip
	return &out, c.call(ctx, http.MethodPost, "/trips", nil, in, &out, false)
}

// Trip is GET /trips/{id}.
func (c *Client) Trip(ctx context.Context, id string) (*Trip, error) {
	var out Trip
	return &out, c.call(ctx, http.MethodGet, "/trips/"+escape(id), nil, nil, &out, false)
}

// CancelTrip is PUT /trips/{id}/cancel: the trip and all its RFQs.
func (c *Client) CancelTrip(ctx context.Context, id, reason, message string) (*Trip, error) {
	body := struct {
		ID              string `json:"id"`
		MessageToSeller string `json:"messageToSeller,omitempty"`
		Reason          string `json:"reason"`
	}{id, message, reason}
	var out Trip
	return &out, c.call(ctx, http.MethodPut, "/trips/"+escape(id)+"/cancel", nil, body, &out, false)
}

// rfqDetails asks for the latest quote of each lift with its breakdown.
func rfqDetails(messages bool) url.Values {
	q := url.Values{"latestquote": {"true"}, "quotebreakdown": {"true"}, "taildetails": {"true"}}
	if messages {
		q.Set("buyermessages", "true")
		q.Set("sellermessagelinks", "true")
	}
	return q
}

// TripRFQs is GET /rfqs/{tripId}: every RFQ of a trip.
func (c *Client) TripRFQs(ctx context.Context, tripID string) ([]RFQ, error) {
	var out []RFQ
	return out, c.call(ctx, http.MethodGet, "/rfqs/"+escape(tripID), rfqDetails(false), nil, &out, false)
}

// RFQ is GET /rfqs/{id}, with its thread's message links when asked.
func (c *Client) RFQ(ctx context.Context, id string, messages bool) (*RFQ, error) {
	var out RFQ
	return &out, c.call(ctx, http.MethodGet, "/rfqs/"+escape(id), rfqDetails(messages), nil, &out, false)
}

// Quote is GET /quotes/{id}.
func (c *Client) Quote(ctx context.Context, id string) (*Quote, error) {
	var out Quote
	return &out, c.call(ctx, http.MethodGet, "/quotes/"+escape(id), url.Values{"quotebreakdown": {"true"}}, nil, &out, false)
}

// SendMessage is POST /tripmsgs/{rfqId}/chat.
func (c *Client) SendMessage(ctx context.Context, rfqID, text string) (*Message, error) {
	var out Message
	body := struct {
		Message string `json:"message"`
	}{text}
	return &out, c.call(ctx, http.MethodPost, "/tripmsgs/"+escape(rfqID)+"/chat", nil, body, &out, false)
}

// Message is GET /tripmsgs/{id}.
func (c *Client) Message(ctx context.Context, id string) (*Message, error) {
	var out Message
	return &out, c.call(ctx, http.MethodGet, "/tripmsgs/"+escape(id), nil, nil, &out, false)
}

// SearchAirports is GET /airports/search.
func (c *Client) SearchAirports(ctx context.Context, filter string, limit int) ([]Airport, error) {
	var out []Airport
	q := url.Values{"filter": {filter}, "page[size]": {strconv.Itoa(limit)}}
	return out, c.call(ctx, http.MethodGet, "/airports/search", q, nil, &out, false)
}

// SearchEmptyLegs is POST /emptylegs/search; it only reads, so it is
// retried like a GET.
func (c *Client) SearchEmptyLegs(ctx context.Context, in EmptyLegSearch) ([]EmptyLeg, error) {
	var out []EmptyLeg
	return out, c.call(ctx, http.MethodPost, "/emptylegs/search", nil, in, &out, true)
}

// CreateWatch is POST /emptylegs/watches.
func (c *Client) CreateWatch(ctx context.Context, w Watch) (*Watch, error) {
	var out Watch
	return &out, c.call(ctx, http.MethodPost, "/emptylegs/watches", nil, w, &out, false)
}

// Watches is GET /emptylegs/watches.
func (c *Client) Watches(ctx context.Context) ([]Watch, error) {
	var out []Watch
	return out, c.call(ctx, http.MethodGet, "/emptylegs/watches", nil, nil, &out, false)
}

// UpdateWatch is PUT /emptylegs/watches/{id}.
func (c *Client) UpdateWatch(ctx context.Context, w Watch) (*Watch, error) {
	var out Watch
	return &out, c.call(ctx, http.MethodPut, "/emptylegs/watches/"+escape(w.ID), nil, w, &out, false)
}

// parseTime reads Avinode's timestamps: ISO 8601 with or without a zone
// (UTC assumed), or a date alone.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
