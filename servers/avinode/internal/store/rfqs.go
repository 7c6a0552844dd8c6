package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

const rfqColumns = `id, trip_id, seller_id, seller_name, seller_country, status, decline_reason, decline_message,
	lifts, created_at, responded_at, updated_at`

// SaveRFQ records what a seller's side of a trip looks like now: the RFQ's
// status (quoted, declined…) and every quote in r.Quotes, inserted or
// brought up to date. It is the one step by which a quote or a decline
// arrives, whoever learnt of it. It reports whether anything changed; when
// something did, subscribers of the trip's quotes hear of it after commit.
// The trip must be stored first.
func (t *Tx) SaveRFQ(ctx context.Context, r RFQ) (bool, error) {
	lifts, err := json.Marshal(nonNil(r.Lifts))
	if err != nil {
		return false, fmt.Errorf("store: encoding lifts: %w", err)
	}
	if err := t.lockTrip(ctx, r.TripID); err != nil {
		return false, err
	}
	now := Now()
	if r.CreatedAt.IsZero() {
		r.CreatedAt = now
	}
	prev := ""
	if t.rec != nil {
		if err := t.q.row(ctx, `SELECT status FROM rfqs WHERE id = ?`, r.ID).Scan(&prev); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, fmt.Errorf("store: reading RFQ %s: %w", r.ID, err)
		}
	}
	res, err := t.q.exec(ctx, `INSERT INTO rfqs (`+rfqColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			seller_id = excluded.seller_id, seller_name = excluded.seller_name, seller_country = excluded.seller_country,
			status = excluded.status, decline_reason = excluded.decline_reason, decline_message = excluded.decline_message,
			lifts = excluded.lifts, responded_at = COALESCE(rfqs.responded_at, excluded.responded_at),
			updated_at = excluded.updated_at
		WHERE rfqs.status IS DISTINCT FROM excluded.status
			OR rfqs.decline_reason IS DISTINCT FROM excluded.decline_reason
			OR rfqs.decline_message IS DISTINCT FROM excluded.decline_message
			OR rfqs.seller_name IS DISTINCT FROM excluded.seller_name
			OR rfqs.lifts IS DISTINCT FROM excluded.lifts
			OR (rfqs.responded_at IS NULL AND excluded.responded_at IS NOT NULL)`,
		r.ID, r.TripID, r.SellerID, r.SellerName, r.SellerCountry, r.Status, r.DeclineReason, r.DeclineMessage,
		string(lifts), ts(r.CreatedAt), tsPtr(r.RespondedAt), ts(now))
	if err != nil {
		return false, fmt.Errorf("store: saving RFQ %s: %w", r.ID, err)
	}
	n, _ := res.RowsAffected()
	changed := n > 0
	t.record(Record{Kind: RecordRFQ, ID: r.ID, TripID: r.TripID, RFQID: r.ID, Inserted: changed && prev == "", Changed: changed,
		Status: r.Status, PrevStatus: prev})
	for _, q := range r.Quotes {
		q.RFQID, q.TripID = r.ID, r.TripID
		c, err := t.saveQuote(ctx, q, now)
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	if changed {
		t.changed(Change{TripID: r.TripID, Quotes: true})
	}
	return changed, nil
}

const quoteColumns = `id, rfq_id, trip_id, lift_id, operator_id, operator_name, aircraft_type, aircraft_category,
	aircraft_tail, aircraft_capacity, year_of_make, currency, base_cents, taxes_fees_cents, total_cents, breakdown,
	valid_until, status, seller_message, received_at, updated_at`

func (t *Tx) saveQuote(ctx context.Context, q Quote, now time.Time) (bool, error) {
	breakdown, err := json.Marshal(nonNil(q.Breakdown))
	if err != nil {
		return false, fmt.Errorf("store: encoding breakdown: %w", err)
	}
	if q.ReceivedAt.IsZero() {
		q.ReceivedAt = now
	}
	if q.Status == "" {
		q.Status = QuoteActive
	}
	existed := false
	if t.rec != nil {
		var one int
		err := t.q.row(ctx, `SELECT 1 FROM quotes WHERE id = ?`, q.ID).Scan(&one)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, fmt.Errorf("store: reading quote %s: %w", q.ID, err)
		}
		existed = err == nil
	}
	res, err := t.q.exec(ctx, `INSERT INTO quotes (`+quoteColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			lift_id = excluded.lift_id, operator_id = excluded.operator_id, operator_name = excluded.operator_name,
			aircraft_type = excluded.aircraft_type, aircraft_category = excluded.aircraft_category,
			aircraft_tail = excluded.aircraft_tail, aircraft_capacity = excluded.aircraft_capacity,
			year_of_make = excluded.year_of_make, currency = excluded.currency, base_cents = excluded.base_cents,
			taxes_fees_cents = excluded.taxes_fees_cents, total_cents = excluded.total_cents,
			breakdown = excluded.breakdown, valid_until = excluded.valid_until, status = excluded.status,
			seller_message = excluded.seller_message, updated_at = excluded.updated_at
		WHERE quotes.total_cents IS DISTINCT FROM excluded.total_cents
			OR quotes.currency IS DISTINCT FROM excluded.currency
			OR quotes.base_cents IS DISTINCT FROM excluded.base_cents
			OR quotes.breakdown IS DISTINCT FROM excluded.breakdown
			OR quotes.valid_until IS DISTINCT FROM excluded.valid_until
			OR quotes.status IS DISTINCT FROM excluded.status
			OR quotes.seller_message IS DISTINCT FROM excluded.seller_message
			OR quotes.aircraft_tail IS DISTINCT FROM excluded.aircraft_tail`,
		q.ID, q.RFQID, q.TripID, q.LiftID, q.OperatorID, q.OperatorName, q.AircraftType, q.AircraftCategory,
		q.AircraftTail, q.AircraftCapacity, q.YearOfMake, q.Currency, int64(q.Base), int64(q.TaxesFees), int64(q.Total),
		string(breakdown), tsPtr(q.ValidUntil), q.Status, q.SellerMessage, ts(q.ReceivedAt), ts(now))
	if err != nil {
		return false, fmt.Errorf("store: saving quote %s: %w", q.ID, err)
	}
	n, _ := res.RowsAffected()
	t.record(Record{Kind: RecordQuote, ID: q.ID, TripID: q.TripID, RFQID: q.RFQID, Inserted: n > 0 && !existed, Changed: n > 0})
	return n > 0, nil
}

// RFQ reads an RFQ (without its quotes); ErrNotFound if unknown.
func (s *Store) RFQ(ctx context.Context, id string) (*RFQ, error) { return s.reader().rfq(ctx, id) }

// RFQ reads an RFQ inside the transaction.
func (t *Tx) RFQ(ctx context.Context, id string) (*RFQ, error) { return t.q.rfq(ctx, id) }

func (q querier) rfq(ctx context.Context, id string) (*RFQ, error) {
	return only(q.rfqs(ctx, `SELECT `+rfqColumns+` FROM rfqs WHERE id = ?`, id))
}

// TripRFQs returns a trip's RFQs in the order they were sent.
func (s *Store) TripRFQs(ctx context.Context, tripID string) ([]RFQ, error) {
	return s.reader().rfqs(ctx, `SELECT `+rfqColumns+` FROM rfqs WHERE trip_id = ? ORDER BY created_at, id`, tripID)
}

func (q querier) rfqs(ctx context.Context, query string, args ...any) ([]RFQ, error) {
	return selectRows(ctx, q, "RFQs", query, args, func(rows *sql.Rows, r *RFQ) error {
		var lifts string
		if err := rows.Scan(&r.ID, &r.TripID, &r.SellerID, &r.SellerName, &r.SellerCountry, &r.Status, &r.DeclineReason,
			&r.DeclineMessage, &lifts, stamp(&r.CreatedAt), optStamp(&r.RespondedAt), stamp(&r.UpdatedAt)); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(lifts), &r.Lifts); err != nil {
			return fmt.Errorf("RFQ %s: %w", r.ID, err)
		}
		return nil
	})
}

// QuoteFilter selects quotes: of a trip, of an RFQ, or one by id (the
// first field set wins).
type QuoteFilter struct {
	TripID, RFQID, QuoteID string
}

// Quotes returns the selected quotes in the order they arrived. A quote
// whose validity has passed is reported as expired.
func (s *Store) Quotes(ctx context.Context, f QuoteFilter, now time.Time) ([]Quote, error) {
	var where string
	var arg string
	switch {
	case f.TripID != "":
		where, arg = "trip_id = ?", f.TripID
	case f.RFQID != "":
		where, arg = "rfq_id = ?", f.RFQID
	case f.QuoteID != "":
		where, arg = "id = ?", f.QuoteID
	default:
		return nil, errors.New("store: a quote filter needs a trip, RFQ or quote id")
	}
	query := `SELECT ` + quoteColumns + ` FROM quotes WHERE ` + where + ` ORDER BY received_at, id`
	return selectRows(ctx, s.reader(), "quotes", query, []any{arg}, func(rows *sql.Rows, q *Quote) error {
		var base, taxes, total int64
		var breakdown string
		if err := rows.Scan(&q.ID, &q.RFQID, &q.TripID, &q.LiftID, &q.OperatorID, &q.OperatorName, &q.AircraftType,
			&q.AircraftCategory, &q.AircraftTail, &q.AircraftCapacity, &q.YearOfMake, &q.Currency, &base, &taxes, &total,
			&breakdown, optStamp(&q.ValidUntil), &q.Status, &q.SellerMessage, stamp(&q.ReceivedAt), stamp(&q.UpdatedAt)); err != nil {
			return err
		}
		q.Base, q.TaxesFees, q.Total = Money(base), Money(taxes), Money(total)
		if err := json.Unmarshal([]byte(breakdown), &q.Breakdown); err != nil {
			return fmt.Errorf("quote %s: %w", q.ID, err)
		}
		if q.Status == QuoteActive && q.ValidUntil != nil && !now.Before(*q.ValidUntil) {
			q.Status = QuoteExpired
		}
		return nil
	})
}

// nonNil keeps a nil slice from being stored as JSON null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
