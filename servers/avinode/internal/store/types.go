package store

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Trip statuses.
const (
	TripOpen      = "open"
	TripCancelled = "cancelled"
)

// RFQ statuses: the seller has not answered, has quoted, has declined, or
// the buyer cancelled the trip.
const (
	RFQUnanswered = "unanswered"
	RFQQuoted     = "quoted"
	RFQDeclined   = "declined"
	RFQCancelled  = "cancelled"
)

// Quote statuses as stored; a quote whose valid_until has passed is reported
// as expired when read.
const (
	QuoteActive    = "active"
	QuoteExpired   = "expired"
	QuoteCancelled = "cancelled"
)

// Message directions.
const (
	FromBuyer  = "buyer"
	FromSeller = "seller"
)

// Segment is one leg of a trip.
type Segment struct {
	From       string    `json:"departure_airport"`
	To         string    `json:"arrival_airport"`
	Departure  time.Time `json:"departure_date"`
	Passengers int       `json:"passengers"`
}

// Links are the trip's deep links into the Avinode web application.
type Links struct {
	SearchInAvinode string `json:"search_in_avinode,omitempty"`
	ViewInAvinode   string `json:"view_in_avinode,omitempty"`
	Cancel          string `json:"cancel,omitempty"`
}

// Trip is a charter request: its legs, its deep links and its status.
type Trip struct {
	ID                string    `json:"trip_id"`
	DisplayID         string    `json:"display_id,omitempty"`
	ExternalReference string    `json:"external_reference,omitempty"`
	Status            string    `json:"status"`
	AircraftCategory  string    `json:"aircraft_category,omitempty"`
	Notes             string    `json:"notes,omitempty"`
	Segments          []Segment `json:"segments"`
	Links             Links     `json:"deep_links"`
	CancelReason      string    `json:"cancel_reason,omitempty"`
	CancelMessage     string    `json:"cancel_message,omitempty"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

// Lift is one aircraft an RFQ asks a seller about.
type Lift struct {
	ID               string `json:"lift_id"`
	AircraftType     string `json:"aircraft_type"`
	AircraftCategory string `json:"aircraft_category,omitempty"`
	AircraftTail     string `json:"aircraft_tail,omitempty"`
	Capacity         int    `json:"capacity,omitempty"`
}

// RFQ is a request for quote sent to one seller (operator) for a trip. Its
// Quotes are saved with it; reads return them separately.
type RFQ struct {
	ID             string     `json:"rfq_id"`
	TripID         string     `json:"trip_id"`
	SellerID       string     `json:"seller_id,omitempty"`
	SellerName     string     `json:"seller_name"`
	SellerCountry  string     `json:"seller_country,omitempty"`
	Status         string     `json:"status"`
	DeclineReason  string     `json:"decline_reason,omitempty"`
	DeclineMessage string     `json:"decline_message,omitempty"`
	Lifts          []Lift     `json:"lifts"`
	CreatedAt      time.Time  `json:"sent_at"`
	RespondedAt    *time.Time `json:"responded_at,omitempty"`
	UpdatedAt      time.Time  `json:"updated_at"`
	Quotes         []Quote    `json:"-"`
}

// Money is an amount in cents of its currency; JSON shows it in units with
// two decimals.
type Money int64

// MarshalJSON writes the amount as a number such as 48200.00.
func (m Money) MarshalJSON() ([]byte, error) {
	neg := m < 0
	if neg {
		m = -m
	}
	b := make([]byte, 0, 24)
	if neg {
		b = append(b, '-')
	}
	b = strconv.AppendInt(b, int64(m)/100, 10)
	b = append(b, '.')
	c := int64(m) % 100
	if c < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, c, 10), nil
}

// UnmarshalJSON reads an amount in units, rounded to the cent.
func (m *Money) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("amount %s: not a number", b)
	}
	*m = Money(math.Round(f * 100))
	return nil
}

// Float returns the amount in units.
func (m Money) Float() float64 { return float64(m) / 100 }

// PriceLine is one line of a quote's price breakdown.
type PriceLine struct {
	Label string `json:"label"`
	// Kind is flight, positioning, fee or tax.
	Kind   string `json:"kind"`
	Amount Money  `json:"amount"`
}

// Quote is a seller's price for a trip.
type Quote struct {
	ID               string      `json:"quote_id"`
	RFQID            string      `json:"rfq_id"`
	TripID           string      `json:"trip_id"`
	LiftID           string      `json:"lift_id,omitempty"`
	OperatorID       string      `json:"operator_id,omitempty"`
	OperatorName     string      `json:"operator_name"`
	AircraftType     string      `json:"aircraft_type"`
	AircraftCategory string      `json:"aircraft_category,omitempty"`
	AircraftTail     string      `json:"aircraft_tail,omitempty"`
	AircraftCapacity int         `json:"aircraft_capacity,omitempty"`
	YearOfMake       int         `json:"year_of_make,omitempty"`
	Currency         string      `json:"currency"`
	Base             Money       `json:"base_price"`
	TaxesFees        Money       `json:"taxes_fees"`
	Total            Money       `json:"total_price"`
	Breakdown        []PriceLine `json:"breakdown,omitempty"`
	ValidUntil       *time.Time  `json:"valid_until,omitempty"`
	Status           string      `json:"status"`
	SellerMessage    string      `json:"seller_message,omitempty"`
	ReceivedAt       time.Time   `json:"received_at"`
	UpdatedAt        time.Time   `json:"updated_at"`
}

// Message is one chat message in an RFQ's thread between buyer and seller.
type Message struct {
	ID        string    `json:"message_id"`
	RFQID     string    `json:"rfq_id"`
	TripID    string    `json:"trip_id"`
	Direction string    `json:"from"`
	Sender    string    `json:"sender,omitempty"`
	Text      string    `json:"text"`
	SentAt    time.Time `json:"sent_at"`
}

// Watch is an empty-leg watch: a route (either end optional) and aircraft
// category whose empty legs the account wants to hear about.
type Watch struct {
	ID               string    `json:"watch_id"`
	Name             string    `json:"name"`
	From             string    `json:"departure_airport,omitempty"`
	To               string    `json:"arrival_airport,omitempty"`
	AircraftCategory string    `json:"aircraft_category,omitempty"`
	DaysOut          int       `json:"days_out,omitempty"`
	Active           bool      `json:"active"`
	CreatedAt        time.Time `json:"created_at"`
}

// Change says what a committed write changed, so the server can tell
// subscribed clients. Quotes covers RFQ statuses and quotes; Messages the
// RFQ threads; Trip the trip itself.
type Change struct {
	TripID   string
	Trip     bool
	Quotes   bool
	Messages bool
}
