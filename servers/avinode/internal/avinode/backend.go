package avinode

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/airports"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// maxMessageFetches bounds the seller messages one thread sync reads.
const maxMessageFetches = 20

// Backend is market.Backend on the Avinode API: each call goes to Avinode,
// and what comes back is written to the store.
type Backend struct {
	c  *Client
	st *store.Store
}

var _ market.Backend = (*Backend)(nil)

// NewBackend returns the backend.
func NewBackend(c *Client, st *store.Store) *Backend { return &Backend{c: c, st: st} }

// Mode reports market.ModeLive.
func (b *Backend) Mode() string { return market.ModeLive }

// notFound turns Avinode's "no such resource" into NOT_FOUND on the field.
func notFound(err error, field, id, what string) error {
	if e, ok := errors.AsType[*mcperr.Error](err); ok && e.Code == mcperr.NotFound {
		return market.NotFound(field, id, what)
	}
	return err
}

// CreateTrip is POST /trips, then the trip is stored with its deep links.
func (b *Backend) CreateTrip(ctx context.Context, r market.TripRequest) (*store.Trip, error) {
	in := TripInput{ExternalTripID: r.ExternalReference, Sourcing: true}
	for _, s := range r.Segments {
		at := s.Departure.UTC()
		in.Segments = append(in.Segments, Segment{StartAirport: AirportRef{ICAO: s.From}, EndAirport: AirportRef{ICAO: s.To},
			DateTime: DateTime{Date: at.Format(time.DateOnly), Time: at.Format("15:04"), Departure: true, Local: false},
			PaxCount: strconv.Itoa(s.Passengers), PaxSegment: true})
	}
	if r.AircraftCategory != "" {
		in.Criteria = &Criteria{RequiredLift: []LiftCriterion{{AircraftCategory: market.AvinodeCategory(r.AircraftCategory)}},
			IncludeLiftUpgrades: true, MaxFuelStopsPerSegment: 1}
	}
	out, err := b.c.CreateTrip(ctx, in)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(out.ID, "atrip-") {
		return nil, mcperr.New(mcperr.Upstream, "Avinode created the trip but answered without its id").WithRetryable(false)
	}
	trip := tripFrom(out, r.Segments)
	trip.AircraftCategory, trip.Notes = r.AircraftCategory, r.Notes
	if trip.ExternalReference == "" {
		trip.ExternalReference = r.ExternalReference
	}
	if err := b.st.Update(ctx, func(tx *store.Tx) error { return tx.SaveTrip(ctx, trip) }); err != nil {
		return nil, err
	}
	return &trip, nil
}

// SyncTrip reads the trip and all its RFQs from Avinode into the store.
func (b *Backend) SyncTrip(ctx context.Context, tripID string) error {
	t, err := b.c.Trip(ctx, tripID)
	if err != nil {
		return notFound(err, "trip_id", tripID, "trip")
	}
	rfqs, err := b.c.TripRFQs(ctx, tripID)
	if err != nil {
		return notFound(err, "trip_id", tripID, "trip")
	}
	return b.st.Update(ctx, func(tx *store.Tx) error {
		trip, err := b.mergeTrip(ctx, tx, t)
		if err != nil {
			return err
		}
		for i := range rfqs {
			r := rfqFrom(&rfqs[i], trip.ID)
			if trip.Status == store.TripCancelled {
				cancelled(&r)
			}
			if _, err := tx.SaveRFQ(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
}

// mergeTrip saves Avinode's trip over the stored one, keeping what only
// the store knows (notes, category, a cancellation made here).
func (b *Backend) mergeTrip(ctx context.Context, tx *store.Tx, t *Trip) (store.Trip, error) {
	var known []store.Segment
	prev, err := tx.Trip(ctx, t.ID)
	if err == nil {
		known = prev.Segments
	} else if !errors.Is(err, store.ErrNotFound) {
		return store.Trip{}, err
	}
	trip := tripFrom(t, known)
	if prev != nil {
		trip.CreatedAt = prev.CreatedAt
		if prev.Status == store.TripCancelled {
			trip.Status = store.TripCancelled
		}
	}
	return trip, tx.SaveTrip(ctx, trip)
}

// ensureRFQ stores the RFQ (and its trip, if the store lacks it).
func (b *Backend) ensureRFQ(ctx context.Context, r *RFQ) (store.RFQ, error) {
	return b.ensureRFQWith(ctx, r, nil)
}

// ensureRFQWith is ensureRFQ, then also runs with (when set) in the same
// transaction: one write for the RFQ and what came with it.
func (b *Backend) ensureRFQWith(ctx context.Context, r *RFQ, with func(tx *store.Tx, rfq store.RFQ) error) (store.RFQ, error) {
	tripID := ""
	if r.Trip != nil {
		tripID = r.Trip.ID
	}
	if tripID == "" {
		if stored, err := b.st.RFQ(ctx, r.ID); err == nil {
			tripID = stored.TripID
		}
	}
	if tripID == "" {
		return store.RFQ{}, mcperr.New(mcperr.Upstream, "Avinode answered RFQ %s without its trip", r.ID).WithRetryable(false)
	}
	var t *Trip
	out := rfqFrom(r, tripID)
	if stored, err := b.st.Trip(ctx, tripID); errors.Is(err, store.ErrNotFound) {
		if t, err = b.c.Trip(ctx, tripID); err != nil {
			return store.RFQ{}, err
		}
	} else if err != nil {
		return store.RFQ{}, err
	} else if stored.Status == store.TripCancelled {
		cancelled(&out)
	}
	err := b.st.Update(ctx, func(tx *store.Tx) error {
		if t != nil {
			trip, err := b.mergeTrip(ctx, tx, t)
			if err != nil {
				return err
			}
			if trip.Status == store.TripCancelled {
				cancelled(&out)
			}
		}
		if _, err := tx.SaveRFQ(ctx, out); err != nil {
			return err
		}
		if with != nil {
			return with(tx, out)
		}
		return nil
	})
	return out, err
}

// SyncRFQ reads one RFQ from Avinode into the store.
func (b *Backend) SyncRFQ(ctx context.Context, rfqID string) error {
	r, err := b.c.RFQ(ctx, rfqID, false)
	if err != nil {
		return notFound(err, "rfq_id", rfqID, "RFQ")
	}
	_, err = b.ensureRFQ(ctx, r)
	return err
}

// SyncQuote reads one quote (and its RFQ when the store lacks it).
func (b *Backend) SyncQuote(ctx context.Context, quoteID string) error {
	q, err := b.c.Quote(ctx, quoteID)
	if err != nil {
		return notFound(err, "quote_id", quoteID, "quote")
	}
	if q.RFQ == nil || q.RFQ.ID == "" {
		return mcperr.New(mcperr.Upstream, "Avinode answered quote %s without its RFQ", quoteID).WithRetryable(false)
	}
	stored, err := b.st.RFQ(ctx, q.RFQ.ID)
	if errors.Is(err, store.ErrNotFound) {
		if err := b.SyncRFQ(ctx, q.RFQ.ID); err != nil {
			return err
		}
		stored, err = b.st.RFQ(ctx, q.RFQ.ID)
	}
	if err != nil {
		return err
	}
	sq := quoteFrom(q, nil, nil)
	sq.RFQID = stored.ID
	if sq.OperatorName == "" {
		sq.OperatorID, sq.OperatorName = stored.SellerID, stored.SellerName
	}
	stored.Quotes = []store.Quote{sq}
	return b.st.Update(ctx, func(tx *store.Tx) error { _, err := tx.SaveRFQ(ctx, *stored); return err })
}

// SyncThread reads an RFQ with its messages: the buyer's come with it, the
// sellers' are read one by one (those not stored yet, at most 20 a call).
func (b *Backend) SyncThread(ctx context.Context, rfqID string) error {
	r, err := b.c.RFQ(ctx, rfqID, true)
	if err != nil {
		return notFound(err, "rfq_id", rfqID, "RFQ")
	}
	rfq, err := b.ensureRFQ(ctx, r)
	if err != nil {
		return err
	}
	var msgs []store.Message
	for _, m := range r.BuyerMessages {
		msgs = append(msgs, messageFrom(&m, rfq, store.FromBuyer))
	}
	fetched := 0
	for _, ref := range r.SellerMessages {
		if ref.ID == "" || fetched == maxMessageFetches {
			continue
		}
		if have, err := b.st.HasMessage(ctx, ref.ID); err != nil || have {
			if err != nil {
				return err
			}
			continue
		}
		m, err := b.c.Message(ctx, ref.ID)
		if err != nil {
			return err
		}
		fetched++
		msgs = append(msgs, messageFrom(m, rfq, store.FromSeller))
	}
	return b.st.Update(ctx, func(tx *store.Tx) error {
		for _, m := range msgs {
			if _, err := tx.SaveMessage(ctx, m); err != nil {
				return err
			}
		}
		return nil
	})
}

// SyncMessage reads one trip message — what a webhook pointer of type
// tripmsgs names — with its RFQ, and stores both: the RFQ brings the seller's
// quote or decline when the message announces one, and a chat line is added
// to the thread.
func (b *Backend) SyncMessage(ctx context.Context, id string) error {
	m, err := b.c.Message(ctx, id)
	if err != nil {
		return notFound(err, "message_id", id, "trip message")
	}
	if m.RFQ == nil || m.RFQ.ID == "" {
		return mcperr.New(mcperr.Upstream, "Avinode answered trip message %s without its RFQ", id).WithRetryable(false)
	}
	r, err := b.c.RFQ(ctx, m.RFQ.ID, false)
	if err != nil {
		return notFound(err, "rfq_id", m.RFQ.ID, "RFQ")
	}
	if m.ID == "" {
		m.ID = id
	}
	_, err = b.ensureRFQWith(ctx, r, func(tx *store.Tx, rfq store.RFQ) error {
		if !isChat(m) {
			return nil
		}
		_, err := tx.SaveMessage(ctx, messageFrom(m, rfq, messageDirection(m)))
		return err
	})
	return err
}

// BaseURL is the API root: webhook pointers must point under it.
func (b *Backend) BaseURL() string { return b.c.BaseURL() }

// CancelTrip is PUT /trips/{id}/cancel, then the stored trip, its RFQs and
// quotes are marked cancelled.
func (b *Backend) CancelTrip(ctx context.Context, tripID, reason, message string) error {
	t, err := b.c.CancelTrip(ctx, tripID, reason, message)
	if err != nil {
		return notFound(err, "trip_id", tripID, "trip")
	}
	if t.ID == "" {
		if t, err = b.c.Trip(ctx, tripID); err != nil {
			return err
		}
	}
	return b.st.Update(ctx, func(tx *store.Tx) error {
		if _, err := b.mergeTrip(ctx, tx, t); err != nil {
			return err
		}
		_, err := tx.CancelTrip(ctx, tripID, reason, message)
		return err
	})
}

// SendMessage posts to the RFQ's seller and stores the message.
func (b *Backend) SendMessage(ctx context.Context, rfqID, text string) (*store.Message, error) {
	r, err := b.st.RFQ(ctx, rfqID)
	if errors.Is(err, store.ErrNotFound) {
		if err := b.SyncRFQ(ctx, rfqID); err != nil {
			return nil, err
		}
		r, err = b.st.RFQ(ctx, rfqID)
	}
	if err != nil {
		return nil, err
	}
	if r.Status == store.RFQCancelled {
		return nil, market.Conflict("RFQ %s belongs to a cancelled trip; its seller no longer reads the thread", rfqID)
	}
	m, err := b.c.SendMessage(ctx, rfqID, text)
	if err != nil {
		return nil, notFound(err, "rfq_id", rfqID, "RFQ")
	}
	if m.ID == "" {
		return nil, mcperr.New(mcperr.Upstream, "Avinode accepted the message but answered without its id; check the thread before sending it again").
			WithRetryable(false)
	}
	if m.Message == "" {
		m.Message = text
	}
	msg := messageFrom(m, *r, store.FromBuyer)
	if err := b.st.Update(ctx, func(tx *store.Tx) error { _, err := tx.SaveMessage(ctx, msg); return err }); err != nil {
		return nil, err
	}
	return &msg, nil
}

// LookupAirport asks Avinode's airport search for an exact ICAO code.
func (b *Backend) LookupAirport(ctx context.Context, icao string) (airports.Airport, bool, error) {
	found, _, err := b.SearchAirports(ctx, icao, 10)
	if err != nil {
		return airports.Airport{}, false, err
	}
	for _, a := range found {
		if strings.EqualFold(a.ICAO, icao) {
			return a, true, nil
		}
	}
	return airports.Airport{}, false, nil
}

// SearchAirports is Avinode's airport search (GET /airports/search): the
// airports the marketplace itself accepts in a trip.
func (b *Backend) SearchAirports(ctx context.Context, query string, limit int) ([]airports.Airport, bool, error) {
	found, err := b.c.SearchAirports(ctx, query, limit)
	if err != nil {
		return nil, true, err
	}
	out := make([]airports.Airport, 0, len(found))
	for _, a := range found {
		if a.ICAO == "" {
			continue // an airfield without an ICAO code cannot be named in a trip
		}
		out = append(out, airports.Airport{ICAO: strings.ToUpper(a.ICAO), IATA: strings.ToUpper(a.IATA), Name: a.Name, City: a.City,
			Country: a.Country.Code, Latitude: a.Coordinates.Latitude, Longitude: a.Coordinates.Longitude})
	}
	return out, true, nil
}

// SearchEmptyLegs is POST /emptylegs/search; category and limit are
// applied to what comes back.
func (b *Backend) SearchEmptyLegs(ctx context.Context, q market.EmptyLegQuery) ([]market.EmptyLeg, error) {
	in := EmptyLegSearch{Date: q.Date.UTC().Format(time.DateOnly), NumberOfDaysFlexibility: strconv.Itoa(q.FlexDays),
		Passengers: strconv.Itoa(max(q.Passengers, 1)), RequiredPartnerships: []string{}}
	if q.From != "" {
		in.StartAirport = &AirportRef{ICAO: q.From}
	}
	if q.To != "" {
		in.EndAirport = &AirportRef{ICAO: q.To}
	}
	found, err := b.c.SearchEmptyLegs(ctx, in)
	if err != nil {
		return nil, err
	}
	var out []market.EmptyLeg
	for _, l := range found {
		e := market.EmptyLeg{ID: l.ID, From: l.StartAirport.ICAO, To: l.EndAirport.ICAO, AircraftType: l.AircraftType,
			AircraftCategory: market.CategoryFromAvinode(l.AircraftCategory), Capacity: l.MaxPax, OperatorName: l.SellerCompany.Label()}
		e.EarliestDepart, _ = parseTime(l.EarliestDeparture)
		e.LatestDepart, _ = parseTime(l.LatestDeparture)
		if l.Price != nil && l.Price.Price > 0 {
			p := money(l.Price.Price)
			e.Price, e.Currency = &p, l.Price.Currency
		}
		if a, ok1 := airports.Lookup(e.From); ok1 {
			if c, ok2 := airports.Lookup(e.To); ok2 {
				_, nm := airports.Distance(a, c)
				e.DistanceNM = int(math.Round(nm))
			}
		}
		if q.Category != "" && e.AircraftCategory != q.Category {
			continue
		}
		if q.Passengers > 0 && e.Capacity > 0 && e.Capacity < q.Passengers {
			continue
		}
		out = append(out, e)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

// CreateWatch is POST /emptylegs/watches, then the watch is stored.
func (b *Backend) CreateWatch(ctx context.Context, r market.WatchRequest) (*store.Watch, error) {
	if r.Name == "" {
		r.Name = market.WatchName(r)
	}
	out, err := b.c.CreateWatch(ctx, watchTo(r))
	if err != nil {
		return nil, err
	}
	if out.ID == "" {
		return nil, mcperr.New(mcperr.Upstream, "Avinode created the watch but answered without its id").WithRetryable(false)
	}
	w := watchFrom(out)
	if w.Name == "" {
		w.Name = r.Name
	}
	if err := b.st.Update(ctx, func(tx *store.Tx) error { return tx.SaveWatch(ctx, w) }); err != nil {
		return nil, err
	}
	return &w, nil
}

// SyncWatches replaces the stored watches with Avinode's list.
func (b *Backend) SyncWatches(ctx context.Context) error {
	ws, err := b.c.Watches(ctx)
	if err != nil {
		return err
	}
	stored, err := b.st.Watches(ctx)
	if err != nil {
		return err
	}
	return b.st.Update(ctx, func(tx *store.Tx) error {
		seen := map[string]bool{}
		for i := range ws {
			w := watchFrom(&ws[i])
			seen[w.ID] = true
			if err := tx.SaveWatch(ctx, w); err != nil {
				return err
			}
		}
		for _, w := range stored {
			if !seen[w.ID] {
				if _, err := tx.DeleteWatch(ctx, w.ID); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// DeleteWatch deactivates the watch in Avinode (the API has no delete) and
// forgets it. One Avinode does not list, or lists as inactive already, is
// reported as gone (nil) or as stopped before (wasActive false).
func (b *Backend) DeleteWatch(ctx context.Context, id string) (*store.Watch, bool, error) {
	w, err := b.st.Watch(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		if err := b.SyncWatches(ctx); err != nil {
			return nil, false, err
		}
		w, err = b.st.Watch(ctx, id)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	was := w.Active
	if was {
		up := watchTo(market.WatchRequest{Name: w.Name, From: w.From, To: w.To, Category: w.AircraftCategory, DaysOut: w.DaysOut})
		up.ID, up.Active = id, false
		if _, err := b.c.UpdateWatch(ctx, up); err != nil {
			if e, ok := errors.AsType[*mcperr.Error](err); ok && e.Code == mcperr.NotFound {
				was = false // gone from Avinode meanwhile: nothing to stop
			} else {
				return nil, false, err
			}
		}
	}
	if err := b.st.Update(ctx, func(tx *store.Tx) error { _, err := tx.DeleteWatch(ctx, id); return err }); err != nil {
		return nil, false, err
	}
	w.Active = false
	return w, was, nil
}
