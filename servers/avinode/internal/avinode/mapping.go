package avinode

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
)

// tripFrom converts Avinode's trip; segments it omits are taken from known.
func tripFrom(t *Trip, known []store.Segment) store.Trip {
	out := store.Trip{ID: t.ID, DisplayID: t.TripID, ExternalReference: t.ExternalTripID, Status: store.TripOpen}
	if t.Canceled || strings.Contains(strings.ToLower(t.Status), "cancel") {
		out.Status = store.TripCancelled
	}
	for _, s := range t.Segments {
		seg := store.Segment{From: s.StartAirport.ICAO, To: s.EndAirport.ICAO}
		seg.Passengers, _ = strconv.Atoi(s.PaxCount)
		if at, ok := parseTime(s.DateTime.Date + "T" + s.DateTime.Time); ok {
			seg.Departure = at
		} else if at, ok := parseTime(s.DateTime.Date); ok {
			seg.Departure = at
		}
		out.Segments = append(out.Segments, seg)
	}
	if len(out.Segments) == 0 {
		out.Segments = known
	}
	if a := t.Actions.SearchInAvinode; a != nil {
		out.Links.SearchInAvinode = a.Href
	}
	if a := t.Actions.ViewInAvinode; a != nil {
		out.Links.ViewInAvinode = a.Href
	}
	if a := t.Actions.Cancel; a != nil {
		out.Links.Cancel = a.Href
	}
	return out
}

// rfqFrom converts an RFQ: its status from its lifts' answers, its quotes
// from each lift's latest quote.
func rfqFrom(r *RFQ, tripID string) store.RFQ {
	out := store.RFQ{ID: r.ID, TripID: tripID, Status: store.RFQUnanswered}
	if r.SellerCompany != nil {
		out.SellerID, out.SellerName, out.SellerCountry = r.SellerCompany.ID, r.SellerCompany.Label(), r.SellerCompany.CountryCode
	}
	out.CreatedAt, _ = parseTime(r.CreatedOn)
	quoted, declined, cancelled := 0, 0, 0
	var responded *time.Time
	for i := range r.SellerLift {
		l := &r.SellerLift[i]
		out.Lifts = append(out.Lifts, store.Lift{ID: l.ID, AircraftType: l.AircraftType,
			AircraftCategory: market.CategoryFromAvinode(l.AircraftCategory), AircraftTail: l.AircraftTail, Capacity: l.MaxPax})
		status := strings.ToLower(l.SourcingDisplayStatus)
		switch {
		case strings.HasPrefix(status, "cancel"):
			cancelled++
		case strings.HasPrefix(status, "declin"):
			declined++
			if out.DeclineReason == "" {
				out.DeclineReason, out.DeclineMessage = l.DeclineReason, l.DeclineMessage
			}
		case l.LatestQuote != nil || status == "accepted" || status == "quoted":
			quoted++
		}
		if l.LatestQuote != nil {
			q := quoteFrom(l.LatestQuote, r, l)
			out.Quotes = append(out.Quotes, q)
			if responded == nil || q.ReceivedAt.Before(*responded) {
				at := q.ReceivedAt
				responded = &at
			}
		}
	}
	switch {
	case cancelled > 0 && quoted == 0 && declined < len(r.SellerLift):
		out.Status = store.RFQCancelled
	case quoted > 0:
		out.Status = store.RFQQuoted
	case declined > 0 && declined+cancelled == len(r.SellerLift):
		out.Status = store.RFQDeclined
	}
	if out.Status == store.RFQDeclined && responded == nil {
		if at, ok := parseTime(r.UpdatedOn); ok {
			responded = &at
		}
	}
	out.RespondedAt = responded
	return out
}

// cancelled marks an RFQ of a cancelled trip, and its quotes, cancelled:
// what Avinode still shows as open can no longer be booked.
func cancelled(r *store.RFQ) {
	if r.Status == store.RFQUnanswered || r.Status == store.RFQQuoted {
		r.Status = store.RFQCancelled
	}
	for i := range r.Quotes {
		r.Quotes[i].Status = store.QuoteCancelled
	}
}

// quoteFrom converts a quote; base and taxes come from its breakdown when
// Avinode gives one, else the whole price is the base.
func quoteFrom(q *Quote, r *RFQ, l *Lift) store.Quote {
	out := store.Quote{ID: q.ID, SellerMessage: q.SellerMessage, Status: store.QuoteActive}
	if r != nil {
		out.RFQID = r.ID
		if r.SellerCompany != nil {
			out.OperatorID, out.OperatorName = r.SellerCompany.ID, r.SellerCompany.Label()
		}
	}
	if q.SellerCompany != nil {
		out.OperatorID, out.OperatorName = q.SellerCompany.ID, q.SellerCompany.Label()
	}
	if l == nil {
		l = q.Lift
	}
	if l != nil {
		out.LiftID, out.AircraftType, out.AircraftTail = l.ID, l.AircraftType, l.AircraftTail
		out.AircraftCategory, out.AircraftCapacity, out.YearOfMake = market.CategoryFromAvinode(l.AircraftCategory), l.MaxPax, l.YearOfMake
	}
	if q.SellerPrice != nil {
		out.Currency, out.Total = q.SellerPrice.Currency, money(q.SellerPrice.Price)
	}
	if q.Breakdown != nil {
		for _, s := range q.Breakdown.Sections {
			for _, li := range s.LineItems {
				kind := strings.ToLower(li.Type)
				amount := money(li.Price.Price)
				out.Breakdown = append(out.Breakdown, store.PriceLine{Label: li.Description, Kind: kind, Amount: amount})
				if kind == "flight" || kind == "positioning" {
					out.Base += amount
				} else {
					out.TaxesFees += amount
				}
				if out.Currency == "" {
					out.Currency = li.Price.Currency
				}
			}
		}
	}
	if out.Base == 0 && out.TaxesFees == 0 {
		out.Base = out.Total
	}
	if out.Total == 0 {
		out.Total = out.Base + out.TaxesFees
	}
	if s := strings.ToLower(q.Status); strings.Contains(s, "withdraw") || strings.Contains(s, "cancel") {
		out.Status = store.QuoteCancelled
	}
	if at, ok := parseTime(q.ValidUntil); ok {
		out.ValidUntil = &at
	}
	out.ReceivedAt, _ = parseTime(q.CreatedOn)
	return out
}

func money(units float64) store.Money { return store.Money(math.Round(units * 100)) }

// isChat tells a chat line (kept in the thread) from the notice of a
// seller's quote or decline, whose substance is the RFQ itself.
func isChat(m *Message) bool {
	if strings.TrimSpace(m.Message) == "" {
		return false
	}
	t := strings.ToUpper(m.MessageType)
	return t == "" || strings.Contains(t, "CHAT")
}

// messageDirection reads who wrote a message from its id's prefix, else
// from the company it names.
func messageDirection(m *Message) string {
	switch {
	case strings.HasPrefix(m.ID, "asellermsg-"):
		return store.FromSeller
	case strings.HasPrefix(m.ID, "abuyermsg-"):
		return store.FromBuyer
	case m.SellerCompany != nil && m.BuyerCompany == nil:
		return store.FromSeller
	}
	return store.FromBuyer
}

func messageFrom(m *Message, r store.RFQ, direction string) store.Message {
	out := store.Message{ID: m.ID, RFQID: r.ID, TripID: r.TripID, Direction: direction, Text: m.Message}
	if direction == store.FromSeller {
		out.Sender = r.SellerName
		if m.SellerCompany != nil {
			out.Sender = m.SellerCompany.Label()
		}
	} else if m.BuyerCompany != nil {
		out.Sender = m.BuyerCompany.Label()
	}
	out.SentAt, _ = parseTime(m.CreatedOn)
	if out.SentAt.IsZero() {
		out.SentAt = store.Now()
	}
	return out
}

func watchTo(r market.WatchRequest) Watch {
	w := Watch{UniqueName: r.Name, Active: true, DaysOut: r.DaysOut}
	seg := WatchedSegment{}
	if r.From != "" {
		seg.Start.Airport = &AirportRef{ICAO: r.From}
	}
	if r.To != "" {
		seg.End.Airport = &AirportRef{ICAO: r.To}
	}
	w.WatchedSegments = []WatchedSegment{seg}
	if r.Category != "" {
		w.Lifts = []WatchLift{{AircraftCategory: market.AvinodeCategory(r.Category)}}
	}
	return w
}

func watchFrom(w *Watch) store.Watch {
	out := store.Watch{ID: w.ID, Name: w.UniqueName, Active: w.Active, DaysOut: w.DaysOut}
	if len(w.WatchedSegments) > 0 {
		s := w.WatchedSegments[0]
		if s.Start.Airport != nil {
			out.From = s.Start.Airport.ICAO
		}
		if s.End.Airport != nil {
			out.To = s.End.Airport.ICAO
		}
	}
	if len(w.Lifts) > 0 {
		out.AircraftCategory = market.CategoryFromAvinode(w.Lifts[0].AircraftCategory)
	}
	return out
}
