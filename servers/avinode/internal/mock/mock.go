// Package mock is the simulated Avinode marketplace the avinode server runs
// on when it has no Avinode credentials. It is deterministic and offline: a
// fleet of operators with real home bases and realistic aircraft, prices from
// aircraft category and great-circle distance, ids with Avinode's prefixes.
//
// A created trip is sent at once to the nearest suitable operators, as a
// broker would from the Avinode web application; each operator's answer — a
// quote, a decline with one of Avinode's decline reasons, or silence — is
// decided from the trip and the operator alone, and scheduled in the store
// for a moment of simulated time (the first quote after Config.FirstResponse,
// the rest within Config.ResponseWindow).
//
// Answers travel the way Avinode's do. When one falls due it is published:
// the marketplace now shows it, and a webhook pointer notification
// ({"id","href","type","tripId"}, href under BaseURL) goes out — posted to a
// webhook receiver over HTTP when Config.Notify is set (kept in the store
// until posted, so none is lost), else queued in the store's webhook events
// directly, as the receiver would queue it. The webhook
// processor fetches what the pointer names with SyncRFQ or SyncMessage, which
// apply the published answer to the store through store.Tx.SaveRFQ and
// SaveMessage — the steps by which real quotes arrive — so subscribers hear of
// it. A tool reading the trip fetches the same way, as the Avinode client
// reads Avinode, so a reader sees every answer due without waiting for the
// processor; each answer is applied once, whichever comes first.
//
// State lives in the store only, so it persists across calls and processes.
package mock

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/airports"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
)

// Defaults of Config.
const (
	DefaultFirstResponse  = 3 * time.Second
	DefaultResponseWindow = 2 * time.Minute
	DefaultOperators      = 5
	// MaxOperators bounds the sellers one trip is sent to.
	MaxOperators = 10
)

// Config tunes the simulation.
type Config struct {
	// FirstResponse is when the first operator quotes after a trip is
	// created, and how long an operator takes to answer a chat message.
	FirstResponse time.Duration
	// ResponseWindow is the time within which the other operators answer.
	ResponseWindow time.Duration
	// Latency, when set, is added to every call, as a network would.
	Latency time.Duration
	// Operators is how many operators a trip is sent to (default 5).
	Operators int
	// Now is the clock (default: the wall clock).
	Now func() time.Time
	// Notify, when set, posts a notification body to a webhook receiver, as
	// Avinode posts its notifications: published answers then keep their
	// notification in the store until SendNotices has posted it, instead of
	// queueing it in the store's webhook events directly.
	Notify func(ctx context.Context, body []byte) error
	// NoPublish leaves publishing due answers to another process (the
	// webhook service): this one only applies what is already published.
	NoPublish bool
}

// Market is the simulated marketplace; it implements market.Backend.
type Market struct {
	st  *store.Store
	cfg Config
}

var _ market.Backend = (*Market)(nil)

// New returns a simulated marketplace over the store. A zero Operators or
// Now takes its default; zero delays mean "at once" (the server's flags
// supply the defaults DefaultFirstResponse and DefaultResponseWindow).
func New(st *store.Store, cfg Config) *Market {
	if cfg.Operators <= 0 {
		cfg.Operators = DefaultOperators
	}
	cfg.Operators = min(cfg.Operators, MaxOperators)
	if cfg.Now == nil {
		cfg.Now = store.Now
	}
	cfg.ResponseWindow = max(cfg.ResponseWindow, cfg.FirstResponse)
	return &Market{st: st, cfg: cfg}
}

// Mode reports market.ModeMock.
func (m *Market) Mode() string { return market.ModeMock }

func (m *Market) now() time.Time { return m.cfg.Now().UTC().Truncate(time.Millisecond) }

// pause simulates network latency.
func (m *Market) pause(ctx context.Context) error {
	if m.cfg.Latency <= 0 {
		return nil
	}
	return retry.Sleep(ctx, m.cfg.Latency)
}

// Event kinds.
const (
	kindQuote   = "quote"
	kindDecline = "decline"
	kindReply   = "reply"
)

// answer is a scheduled event's payload.
type answer struct {
	Quote   *store.Quote `json:"quote,omitempty"`
	Reason  string       `json:"reason,omitempty"`
	Message string       `json:"message,omitempty"`
}

// Links of a simulated trip point at a reserved, unresolvable host: there is
// no web application behind the simulation.
const linkBase = "https://marketplace.avinode.invalid/trips/"

// BaseURL is the simulated API's root: the webhook pointers the simulation
// queues point under it. Nothing listens there; pointers are fetched from
// the store.
const BaseURL = "https://marketplace.avinode.invalid/api"

// CreateTrip stores the trip, sends it to the nearest suitable operators
// and schedules their answers, all in one transaction.
func (m *Market) CreateTrip(ctx context.Context, r market.TripRequest) (*store.Trip, error) {
	if err := m.pause(ctx); err != nil {
		return nil, err
	}
	legs, err := resolveLegs(r.Segments)
	if err != nil {
		return nil, err
	}
	now := m.now()
	var trip store.Trip
	err = m.st.Update(ctx, func(tx *store.Tx) error {
		n, err := tx.NextSeq(ctx, "trip", 64956001)
		if err != nil {
			return err
		}
		id := fmt.Sprintf("atrip-%d", n)
		trip = store.Trip{ID: id, DisplayID: displayID(n), ExternalReference: r.ExternalReference, Status: store.TripOpen,
			AircraftCategory: r.AircraftCategory, Notes: r.Notes, Segments: r.Segments, CreatedAt: now,
			Links: store.Links{SearchInAvinode: linkBase + id + "/search", ViewInAvinode: linkBase + id, Cancel: linkBase + id + "/cancel"}}
		if err := tx.SaveTrip(ctx, trip); err != nil {
			return err
		}
		return m.sendRFQs(ctx, tx, trip, legs, now)
	})
	if err != nil {
		return nil, err
	}
	return &trip, nil
}

// plan is one operator's answer to a trip, before it is scheduled.
type plan struct {
	offer
	kind   string // quote, decline, or "" for no answer
	reason string
	msg    string
	delay  time.Duration
}

// sendRFQs asks the candidate operators and schedules their answers.
func (m *Market) sendRFQs(ctx context.Context, tx *store.Tx, trip store.Trip, legs []leg, now time.Time) error {
	var plans []plan
	for _, o := range candidates(legs, trip.AircraftCategory, m.cfg.Operators) {
		plans = append(plans, decide(trip.ID, o, legs))
	}
	m.schedule(trip.ID, plans, legs)
	for _, p := range plans {
		rn, err := tx.NextSeq(ctx, "rfq", 1000000001)
		if err != nil {
			return err
		}
		ln, err := tx.NextSeq(ctx, "lift", 2000000001)
		if err != nil {
			return err
		}
		rfq := store.RFQ{ID: fmt.Sprintf("arfq-%d", rn), TripID: trip.ID, SellerID: p.op.ID, SellerName: p.op.Name,
			SellerCountry: p.op.Country, Status: store.RFQUnanswered, CreatedAt: now,
			Lifts: []store.Lift{{ID: fmt.Sprintf("asellerlift-%d", ln), AircraftType: p.ac.Name, AircraftCategory: p.ac.Category,
				AircraftTail: p.ac.Tail, Capacity: p.ac.Capacity}}}
		if _, err := tx.SaveRFQ(ctx, rfq); err != nil {
			return err
		}
		if p.kind == "" {
			continue
		}
		due := now.Add(p.delay)
		a := answer{Reason: p.reason, Message: p.msg}
		if p.kind == kindQuote {
			qn, err := tx.NextSeq(ctx, "quote", 3000000001)
			if err != nil {
				return err
			}
			valid := due.Add(48 * time.Hour)
			if latest := legs[0].seg.Departure.Add(-2 * time.Hour); latest.Before(valid) {
				valid = latest
			}
			a.Quote = &store.Quote{ID: fmt.Sprintf("aquote-%d", qn), LiftID: rfq.Lifts[0].ID, OperatorID: p.op.ID,
				OperatorName: p.op.Name, AircraftType: p.ac.Name, AircraftCategory: p.ac.Category, AircraftTail: p.ac.Tail,
				AircraftCapacity: p.ac.Capacity, YearOfMake: p.ac.Year, Currency: p.price.currency, Base: p.price.base,
				TaxesFees: p.price.taxesFees, Total: p.price.total(), Breakdown: p.price.lines, ValidUntil: &valid,
				Status: store.QuoteActive, SellerMessage: p.msg, ReceivedAt: due}
		}
		payload, err := json.Marshal(a)
		if err != nil {
			return err
		}
		ref := ""
		if a.Quote != nil {
			ref = a.Quote.ID
		}
		if err := tx.ScheduleEvent(ctx, store.Event{ID: rfq.ID + "/answer", TripID: trip.ID, RFQID: rfq.ID,
			Kind: p.kind, DueAt: due, Ref: ref, Payload: payload}); err != nil {
			return err
		}
	}
	return nil
}

// decide is an operator's answer to a trip: cabotage rules first, then a
// trip that would fly the aircraft mostly empty is unattractive, then a
// stable draw decides between quoting, other declines and silence.
func decide(tripID string, o offer, legs []leg) plan {
	p := plan{offer: o, kind: kindQuote}
	h := hashOf(tripID, o.op.ID, "answer")
	draw := unit(h)
	switch {
	case cabotage(o.op, legs):
		p.kind, p.reason = kindDecline, "CABOTAGE"
		p.msg = "We are not permitted to operate domestic flights in that country."
	case o.ferry > 2*o.occupied && o.ferry > 3:
		p.kind, p.reason = kindDecline, "UNATTRACTIVE_TRIP"
		p.msg = fmt.Sprintf("The positioning (%.1f h) is too long for this trip.", o.ferry)
	case draw < 0.18:
		p.kind = kindDecline
		switch h % 3 {
		case 0:
			p.reason, p.msg = "AIRCRAFT_NOT_AVAILABLE", fmt.Sprintf("%s is committed to another trip on those dates.", o.ac.Tail)
		case 1:
			p.reason, p.msg = "CREW_NOT_AVAILABLE", "No crew available for these dates."
		default:
			p.reason, p.msg = "OWNER_DECLINED", "The aircraft owner has declined this trip."
		}
	case draw > 0.88:
		p.kind = "" // never answers
	default:
		p.msg = sellerNote(o, legs, h)
	}
	return p
}

// sellerNote is what an operator writes with a quote.
func sellerNote(o offer, legs []leg, h uint64) string {
	notes := []string{
		fmt.Sprintf("%s (%d) confirmed available; catering included for %d passengers.", o.ac.Tail, o.ac.Year, legs[0].seg.Passengers),
		"Price subject to slot and parking availability at destination.",
		fmt.Sprintf("Pet-friendly aircraft. Operator safety rating: %s.", o.op.Safety),
		"Wi-Fi on board. Quote includes all crew expenses.",
	}
	note := notes[h%uint64(len(notes))]
	if o.stopsUsed > 0 {
		note += fmt.Sprintf(" Includes %d technical fuel stop(s).", o.stopsUsed)
	}
	return note
}

// schedule sets each answer's delay: the first quote after FirstResponse,
// the other answers spread over the rest of the window in a stable order.
func (m *Market) schedule(tripID string, plans []plan, legs []leg) {
	order := make([]int, len(plans))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return hashOf(tripID, plans[order[a]].op.ID, "order") < hashOf(tripID, plans[order[b]].op.ID, "order")
	})
	first := -1
	for _, i := range order {
		if plans[i].kind == kindQuote {
			first = i
			break
		}
	}
	if first < 0 {
		// Nobody would quote: the nearest operator that may fly the trip
		// does, so every trip with a suitable aircraft gets a price.
		for i := range plans {
			if plans[i].reason != "CABOTAGE" {
				plans[i].kind, plans[i].reason = kindQuote, ""
				plans[i].msg = sellerNote(plans[i].offer, legs, hashOf(tripID, plans[i].op.ID))
				first = i
				break
			}
		}
	}
	spread := m.cfg.ResponseWindow - m.cfg.FirstResponse
	for _, i := range order {
		switch {
		case i == first:
			plans[i].delay = m.cfg.FirstResponse
		case plans[i].kind != "":
			plans[i].delay = m.cfg.FirstResponse + time.Duration(float64(spread)*unit(hashOf(tripID, plans[i].op.ID, "delay")))
			if spread > 0 {
				plans[i].delay = max(plans[i].delay, m.cfg.FirstResponse+time.Millisecond)
			}
		}
	}
}

// displayID makes Avinode's short trip reference (two letters, three
// digits, a letter) from a trip number.
func displayID(n int64) string {
	h := hashOf(fmt.Sprint(n), "display")
	letter := func(k uint64) byte { return byte('A' + k%26) }
	return fmt.Sprintf("%c%c%03d%c", letter(h), letter(h>>8), (h>>16)%1000, letter(h>>32))
}

// Deliver publishes the answers due now (of one trip, or all when tripID is
// empty), each with its webhook pointer, and returns how many it published.
func (m *Market) Deliver(ctx context.Context, tripID string) (int, error) {
	if m.cfg.NoPublish {
		return 0, nil
	}
	now := m.now()
	due, err := m.st.HasDueEventsOf(ctx, now, tripID)
	if err != nil || !due {
		return 0, err
	}
	total := 0
	for {
		n, err := m.st.DeliverDue(ctx, now, tripID, 100, m.publish)
		total += n
		if err != nil || n < 100 {
			return total, err
		}
	}
}

// publish is an operator's scheduled answer appearing in the marketplace:
// Avinode would now notify the broker, so a pointer to what changed is
// queued as a webhook event — to the RFQ for a quote or decline, to the new
// trip message for a chat reply.
func (m *Market) publish(ctx context.Context, tx *store.Tx, e store.Event) error {
	trip, err := tx.Trip(ctx, e.TripID)
	if err != nil {
		return err
	}
	var p store.Pointer
	switch e.Kind {
	case kindQuote, kindDecline:
		p = store.Pointer{ID: e.RFQID, Href: BaseURL + "/rfqs/" + e.RFQID, Type: "rfqs"}
	case kindReply:
		n, err := tx.NextSeq(ctx, "sellermsg", 5000000001)
		if err != nil {
			return err
		}
		id := fmt.Sprintf("asellermsg-%d", n)
		if err := tx.SetEventRef(ctx, e.ID, id); err != nil {
			return err
		}
		p = store.Pointer{ID: id, Href: BaseURL + "/tripmsgs/" + id, Type: "tripmsgs"}
	default:
		return fmt.Errorf("event %s: unknown kind %q", e.ID, e.Kind)
	}
	p.TripRef = trip.DisplayID
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if m.cfg.Notify != nil {
		return tx.SetEventNotice(ctx, e.ID, raw)
	}
	_, _, err = tx.EnqueueWebhookEvent(ctx, store.Incoming{Pointer: p, Raw: raw, Source: store.SourceMock, ReceivedAt: m.now()})
	return err
}

// SendNotices posts the notifications of published answers that were not
// posted yet, oldest first, through Config.Notify, and returns how many it
// posted. It stops at the first failure, leaving that notification and the
// rest for the next call. Without Notify it does nothing.
func (m *Market) SendNotices(ctx context.Context) (int, error) {
	if m.cfg.Notify == nil {
		return 0, nil
	}
	sent := 0
	for {
		pending, err := m.st.PendingNotices(ctx, 100)
		if err != nil || len(pending) == 0 {
			return sent, err
		}
		for _, n := range pending {
			if err := m.cfg.Notify(ctx, n.Body); err != nil {
				return sent, fmt.Errorf("posting the notification of event %s: %w", n.EventID, err)
			}
			if err := m.st.MarkNoticed(ctx, n.EventID, m.now()); err != nil {
				return sent, err
			}
			sent++
		}
	}
}

// fetch applies the published answers f selects that were not applied yet:
// what reading them from the marketplace would bring.
func (m *Market) fetch(ctx context.Context, f store.PublishedFilter) error {
	has, err := m.st.HasPublished(ctx, f)
	if err != nil || !has {
		return err
	}
	_, err = m.st.ApplyPublished(ctx, f, m.now(), m.apply)
	return err
}

// apply is an operator's published answer arriving: the quote, the decline
// or the chat reply is written as if it had come from Avinode.
func (m *Market) apply(ctx context.Context, tx *store.Tx, e store.Event) error {
	var a answer
	if err := json.Unmarshal(e.Payload, &a); err != nil {
		return fmt.Errorf("event %s: %w", e.ID, err)
	}
	r, err := tx.RFQ(ctx, e.RFQID)
	if err != nil {
		return err
	}
	if r.Status == store.RFQCancelled {
		return nil
	}
	switch e.Kind {
	case kindQuote:
		if a.Quote == nil {
			return fmt.Errorf("event %s: a quote without its quote", e.ID)
		}
		responded := e.DueAt
		r.Status, r.RespondedAt, r.Quotes = store.RFQQuoted, &responded, []store.Quote{*a.Quote}
		_, err = tx.SaveRFQ(ctx, *r)
	case kindDecline:
		responded := e.DueAt
		r.Status, r.DeclineReason, r.DeclineMessage, r.RespondedAt = store.RFQDeclined, a.Reason, a.Message, &responded
		_, err = tx.SaveRFQ(ctx, *r)
	case kindReply:
		id := e.Ref
		if id == "" {
			var n int64
			if n, err = tx.NextSeq(ctx, "sellermsg", 5000000001); err != nil {
				return err
			}
			id = fmt.Sprintf("asellermsg-%d", n)
		}
		_, err = tx.SaveMessage(ctx, store.Message{ID: id, RFQID: r.ID, TripID: r.TripID,
			Direction: store.FromSeller, Sender: r.SellerName, Text: a.Message, SentAt: e.DueAt})
	default:
		return fmt.Errorf("event %s: unknown kind %q", e.ID, e.Kind)
	}
	return err
}

// Run publishes due answers every interval until ctx ends, so their
// pointers reach the webhook processor even when nobody reads, and posts
// their notifications when Config.Notify is set. delivered (when set) hears
// how many answers each tick published. Failures go to onError and are
// retried on the next tick; Run returns only when ctx ends.
func (m *Market) Run(ctx context.Context, interval time.Duration, delivered func(n int), onError func(error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	report := func(err error) {
		if err != nil && ctx.Err() == nil && onError != nil {
			onError(err)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			n, err := m.Deliver(ctx, "")
			report(err)
			if n > 0 && delivered != nil {
				delivered(n)
			}
			_, err = m.SendNotices(ctx)
			report(err)
		}
	}
}

// BaseURL is the simulated API's root.
func (m *Market) BaseURL() string { return BaseURL }

// SyncTrip publishes the trip's due answers and applies every published
// one; NOT_FOUND for an unknown trip.
func (m *Market) SyncTrip(ctx context.Context, tripID string) error {
	if err := m.pause(ctx); err != nil {
		return err
	}
	if _, err := m.st.Trip(ctx, tripID); err != nil {
		return market.StoreNotFound(err, "trip_id", tripID, "trip")
	}
	return m.syncTrip(ctx, tripID)
}

func (m *Market) syncTrip(ctx context.Context, tripID string) error {
	if _, err := m.Deliver(ctx, tripID); err != nil {
		return err
	}
	return m.fetch(ctx, store.PublishedFilter{TripID: tripID})
}

// SyncRFQ publishes the due answers of the RFQ's trip and applies the
// RFQ's published ones.
func (m *Market) SyncRFQ(ctx context.Context, rfqID string) error {
	if err := m.pause(ctx); err != nil {
		return err
	}
	r, err := m.st.RFQ(ctx, rfqID)
	if err != nil {
		return market.StoreNotFound(err, "rfq_id", rfqID, "RFQ")
	}
	if _, err = m.Deliver(ctx, r.TripID); err != nil {
		return err
	}
	return m.fetch(ctx, store.PublishedFilter{RFQID: rfqID})
}

// SyncThread is SyncRFQ: replies are answers like any other.
func (m *Market) SyncThread(ctx context.Context, rfqID string) error { return m.SyncRFQ(ctx, rfqID) }

// SyncMessage applies the published reply that is message id; NOT_FOUND if
// the marketplace has published no such message.
func (m *Market) SyncMessage(ctx context.Context, id string) error {
	if err := m.pause(ctx); err != nil {
		return err
	}
	if err := m.fetch(ctx, store.PublishedFilter{Ref: id}); err != nil {
		return err
	}
	if ok, err := m.st.HasMessage(ctx, id); err != nil || ok {
		return err
	}
	return market.NotFound("message_id", id, "trip message")
}

// SyncQuote publishes every due answer, applies the quote's, then checks
// that the quote exists.
func (m *Market) SyncQuote(ctx context.Context, quoteID string) error {
	if err := m.pause(ctx); err != nil {
		return err
	}
	if _, err := m.Deliver(ctx, ""); err != nil {
		return err
	}
	if err := m.fetch(ctx, store.PublishedFilter{Ref: quoteID}); err != nil {
		return err
	}
	qs, err := m.st.Quotes(ctx, store.QuoteFilter{QuoteID: quoteID}, m.now())
	if err != nil {
		return err
	}
	if len(qs) == 0 {
		return market.NotFound("quote_id", quoteID, "quote")
	}
	return nil
}

// CancelTrip cancels the trip and its RFQs, tells each open RFQ's seller
// with a message in its thread, and drops the answers still to come.
func (m *Market) CancelTrip(ctx context.Context, tripID, reason, message string) error {
	if err := m.pause(ctx); err != nil {
		return err
	}
	if _, err := m.st.Trip(ctx, tripID); err != nil {
		return market.StoreNotFound(err, "trip_id", tripID, "trip")
	}
	if err := m.syncTrip(ctx, tripID); err != nil {
		return err
	}
	rfqs, err := m.st.TripRFQs(ctx, tripID)
	if err != nil {
		return err
	}
	now := m.now()
	return m.st.Update(ctx, func(tx *store.Tx) error {
		open, err := tx.CancelTrip(ctx, tripID, reason, message)
		if err != nil || !open {
			return err
		}
		if message != "" {
			for _, r := range rfqs {
				if r.Status == store.RFQDeclined || r.Status == store.RFQCancelled {
					continue
				}
				n, err := tx.NextSeq(ctx, "buyermsg", 4000000001)
				if err != nil {
					return err
				}
				if _, err := tx.SaveMessage(ctx, store.Message{ID: fmt.Sprintf("abuyermsg-%d", n), RFQID: r.ID, TripID: tripID,
					Direction: store.FromBuyer, Text: message, SentAt: now}); err != nil {
					return err
				}
			}
		}
		return tx.DropEvents(ctx, tripID, now)
	})
}

// SendMessage stores the buyer's message and schedules the seller's reply
// (none from a seller that never answers, or once the trip is cancelled).
func (m *Market) SendMessage(ctx context.Context, rfqID, text string) (*store.Message, error) {
	if err := m.pause(ctx); err != nil {
		return nil, err
	}
	r, err := m.st.RFQ(ctx, rfqID)
	if err != nil {
		return nil, market.StoreNotFound(err, "rfq_id", rfqID, "RFQ")
	}
	if r.Status == store.RFQCancelled {
		return nil, market.Conflict("RFQ %s belongs to a cancelled trip; its seller no longer reads the thread", rfqID)
	}
	now := m.now()
	var msg store.Message
	err = m.st.Update(ctx, func(tx *store.Tx) error {
		n, err := tx.NextSeq(ctx, "buyermsg", 4000000001)
		if err != nil {
			return err
		}
		msg = store.Message{ID: fmt.Sprintf("abuyermsg-%d", n), RFQID: rfqID, TripID: r.TripID, Direction: store.FromBuyer,
			Text: text, SentAt: now}
		if _, err := tx.SaveMessage(ctx, msg); err != nil {
			return err
		}
		if silent(r) {
			return nil
		}
		payload, err := json.Marshal(answer{Message: reply(r, text)})
		if err != nil {
			return err
		}
		return tx.ScheduleEvent(ctx, store.Event{ID: msg.ID + "/reply", TripID: r.TripID, RFQID: rfqID, Kind: kindReply,
			DueAt: now.Add(m.cfg.FirstResponse), Payload: payload})
	})
	if err != nil {
		return nil, err
	}
	return &msg, nil
}

// silent reports whether the RFQ's seller never answers anything.
func silent(r *store.RFQ) bool {
	return r.Status == store.RFQUnanswered && unit(hashOf(r.TripID, r.SellerID, "answer")) > 0.88
}

// reply is a seller's answer to a buyer's chat message, chosen by the
// words it contains.
func reply(r *store.RFQ, text string) string {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(c rune) bool { return c < 'a' || c > 'z' }) {
		words[strings.TrimSuffix(w, "s")] = true
	}
	has := func(ws ...string) bool {
		for _, w := range ws {
			if words[w] {
				return true
			}
		}
		return false
	}
	switch {
	case r.Status == store.RFQDeclined:
		return "Thank you for your message. Unfortunately we still cannot operate this trip."
	case has("pet", "dog", "cat"):
		return "Pets are welcome in the cabin; please tell us their number and size."
	case has("catering", "meal", "food", "dietary"):
		return "Catering is included; send us any dietary requirements and we will arrange them."
	case has("price", "discount", "cheaper", "cost"):
		return "Our quote is already our best price for these dates; a flexible departure time could lower it."
	case has("book", "confirm", "proceed"):
		return "Thank you! Please confirm the booking in Avinode and we will send the contract."
	}
	return "Thank you for your message, we have noted it. The aircraft remains available for your trip."
}

// SearchAirports: the simulation has no airport search of its own; the
// embedded table is its list of airports.
func (m *Market) SearchAirports(ctx context.Context, query string, limit int) ([]airports.Airport, bool, error) {
	return nil, false, nil
}

// LookupAirport: the simulation knows no airport the table lacks.
func (m *Market) LookupAirport(ctx context.Context, icao string) (airports.Airport, bool, error) {
	return airports.Airport{}, false, nil
}
