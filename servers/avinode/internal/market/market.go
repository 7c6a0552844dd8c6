// Package market is what the avinode tools stand on: the Backend interface
// that both the Avinode API client (Live) and the simulated marketplace
// implement, the requests they take, and the Avinode vocabularies (aircraft
// categories, cancel and decline reasons, id prefixes) the tools validate
// against.
//
// A backend's writes go to the marketplace (Avinode, or the simulation) and
// then to the local store; its Sync methods bring the store up to date for
// one trip, RFQ, quote, thread or message. Tools call a Sync method, then read
// the store, so every answer comes from the one place that webhooks and other
// processes also write to; the webhook processor fetches what a notification
// points at with SyncRFQ and SyncMessage.
package market

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/airports"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/upstream"
)

// Modes of a backend.
const (
	ModeMock = "mock"
	ModeLive = "avinode"
)

// Aircraft categories a trip or watch may ask for.
const (
	Light          = "light"
	Midsize        = "midsize"
	Heavy          = "heavy"
	UltraLongRange = "ultra-long-range"
)

// Categories lists the aircraft categories, smallest first.
var Categories = []string{Light, Midsize, Heavy, UltraLongRange}

// avinodeCategories are Avinode's names of the categories.
var avinodeCategories = map[string]string{
	Light: "Light jet", Midsize: "Midsize jet", Heavy: "Heavy jet", UltraLongRange: "Ultra long range",
}

// AvinodeCategory returns Avinode's name of a category ("" for "").
func AvinodeCategory(c string) string { return avinodeCategories[c] }

// CategoryFromAvinode maps an Avinode aircraft category name ("Super
// midsize jet", "Heavy jet"…) to ours; unknown names map to "".
func CategoryFromAvinode(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "ultra") || strings.Contains(n, "long range"):
		return UltraLongRange
	case strings.Contains(n, "heavy") || strings.Contains(n, "large") || strings.Contains(n, "airliner"):
		return Heavy
	case strings.Contains(n, "mid"):
		return Midsize
	case strings.Contains(n, "light") || strings.Contains(n, "turbo") || strings.Contains(n, "piston"):
		return Light
	}
	return ""
}

// CancelReasons are the reasons Avinode accepts for cancelling a trip.
var CancelReasons = []string{"BY_CLIENT", "CHANGED", "BOOKED", "OTHER"}

// DeclineReasons are the reasons a seller gives when declining an RFQ.
var DeclineReasons = []string{"AIRCRAFT_NOT_AVAILABLE", "CABOTAGE", "CREW_NOT_AVAILABLE", "OWNER_DECLINED",
	"UNATTRACTIVE_TRIP", "UNKNOWN", "OTHER"}

// TripRequest is a validated trip to create: its legs in order, and the
// optional aircraft category, notes and the caller's own reference.
type TripRequest struct {
	Segments          []store.Segment
	AircraftCategory  string
	Notes             string
	ExternalReference string
}

// EmptyLegQuery asks for empty legs near a route (either end may be empty)
// around a date.
type EmptyLegQuery struct {
	From, To   string
	Date       time.Time
	FlexDays   int
	Passengers int
	Category   string
	Limit      int
}

// EmptyLeg is an aircraft flying empty that sells the flight cheaply.
type EmptyLeg struct {
	ID               string       `json:"empty_leg_id"`
	From             string       `json:"departure_airport"`
	To               string       `json:"arrival_airport"`
	EarliestDepart   time.Time    `json:"earliest_departure"`
	LatestDepart     time.Time    `json:"latest_departure"`
	AircraftType     string       `json:"aircraft_type"`
	AircraftCategory string       `json:"aircraft_category,omitempty"`
	Capacity         int          `json:"capacity,omitempty"`
	OperatorName     string       `json:"operator_name,omitempty"`
	Price            *store.Money `json:"price,omitempty"`
	Currency         string       `json:"currency,omitempty"`
	DistanceNM       int          `json:"distance_nm,omitempty"`
}

// WatchRequest is an empty-leg watch to create.
type WatchRequest struct {
	Name, From, To, Category string
	DaysOut                  int
}

// WatchName names a watch after its route and category when the caller
// gave no name: watch names are unique, so two watches that differ only in
// category need different default names.
func WatchName(r WatchRequest) string {
	from, to := r.From, r.To
	if from == "" {
		from = "anywhere"
	}
	if to == "" {
		to = "anywhere"
	}
	name := "Empty legs " + from + " to " + to
	if r.Category != "" {
		name += " (" + r.Category + ")"
	}
	return name
}

// Backend is a marketplace: Avinode itself, or the simulation.
type Backend interface {
	// Mode is ModeMock or ModeLive.
	Mode() string
	// CreateTrip creates the trip in the marketplace and stores it.
	CreateTrip(ctx context.Context, r TripRequest) (*store.Trip, error)
	// SyncTrip brings the stored trip, its RFQs and quotes up to date;
	// NOT_FOUND (field trip_id) if the marketplace has no such trip.
	SyncTrip(ctx context.Context, tripID string) error
	// SyncRFQ brings one RFQ and its quotes up to date (field rfq_id).
	SyncRFQ(ctx context.Context, rfqID string) error
	// SyncQuote brings one quote up to date (field quote_id).
	SyncQuote(ctx context.Context, quoteID string) error
	// SyncThread brings an RFQ's chat messages up to date (field rfq_id).
	SyncThread(ctx context.Context, rfqID string) error
	// SyncMessage brings one trip message — a chat line, or the notice of a
	// seller's quote or decline — and its RFQ up to date (field
	// message_id). It and SyncRFQ are what a webhook pointer is fetched
	// with.
	SyncMessage(ctx context.Context, id string) error
	// BaseURL is the root of the marketplace's API: the webhook pointers it
	// sends point under it.
	BaseURL() string
	// CancelTrip cancels the trip and all its RFQs, telling the sellers.
	CancelTrip(ctx context.Context, tripID, reason, message string) error
	// SendMessage posts a message to the seller of an RFQ and stores it.
	SendMessage(ctx context.Context, rfqID, text string) (*store.Message, error)
	// LookupAirport finds an airport the embedded table lacks; ok false
	// when the marketplace does not know it either.
	LookupAirport(ctx context.Context, icao string) (a airports.Airport, ok bool, err error)
	// SearchAirports is the marketplace's own airport search by code, name
	// or city; searched false when it has none (the simulation), and the
	// embedded table answers alone.
	SearchAirports(ctx context.Context, query string, limit int) (found []airports.Airport, searched bool, err error)
	SearchEmptyLegs(ctx context.Context, q EmptyLegQuery) ([]EmptyLeg, error)
	CreateWatch(ctx context.Context, r WatchRequest) (*store.Watch, error)
	// SyncWatches brings the stored watches up to date.
	SyncWatches(ctx context.Context) error
	// DeleteWatch stops a watch and forgets it. A watch that is not there,
	// or already stopped, is not an error: found and wasActive say so.
	DeleteWatch(ctx context.Context, id string) (w *store.Watch, wasActive bool, err error)
}

// NotFound is the error for an id the marketplace does not know; field is
// the argument that named it.
func NotFound(field, id, what string) *mcperr.Error {
	return &mcperr.Error{Code: mcperr.NotFound, Field: field, Value: id,
		Message: "no " + what + " " + id + " exists in the marketplace"}
}

// StoreNotFound maps store.ErrNotFound to NotFound and passes other errors.
func StoreNotFound(err error, field, id, what string) error {
	if errors.Is(err, store.ErrNotFound) {
		return NotFound(field, id, what)
	}
	return err
}

// ErrOutcomeUnknown is in the chain of an error from a request that may have
// taken effect although no answer said so: a POST that failed with a 5xx,
// timed out or lost its connection after it was sent. Repeating such a
// request may do it twice (a second trip, duplicate RFQs), so the error is
// not retryable and callers say how to check first. It is the upstream
// mapping's own sentinel.
var ErrOutcomeUnknown = upstream.ErrOutcomeUnknown

// Conflict is the error for an action the current state forbids.
func Conflict(format string, args ...any) *mcperr.Error {
	return mcperr.New(mcperr.Conflict, format, args...)
}

// TripURI and QuotesURI are the MCP resources of a trip: what the tools
// list and read, and what the change feed tells subscribers of.
func TripURI(id string) string   { return "avinode://trips/" + id }
func QuotesURI(id string) string { return "avinode://trips/" + id + "/quotes" }
