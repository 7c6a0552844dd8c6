package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/jsontext"
)

// Webhook event statuses: pending → processing → completed, or → failed
// (retried after a backoff) → … → dead_letter (given up: retries exhausted or
// a permanent failure), from which an operator may requeue it.
const (
	EventPending    = "pending"
	EventProcessing = "processing"
	EventCompleted  = "completed"
	EventFailed     = "failed"
	EventDeadLetter = "dead_letter"
)

// EventStatuses lists the statuses in their order of progress.
var EventStatuses = []string{EventPending, EventProcessing, EventCompleted, EventFailed, EventDeadLetter}

// Sources of webhook events.
const (
	SourceAvinode = "avinode"
	SourceMock    = "mock"
)

// DefaultMaxRetries is how many failed attempts an event is retried after
// before it goes to the dead letter.
const DefaultMaxRetries = 5

// Pointer is a webhook notification as Avinode sends it: which resource
// changed, where to fetch it, and the trip's short reference.
type Pointer struct {
	ID      string `json:"id"`
	Href    string `json:"href"`
	Type    string `json:"type"`
	TripRef string `json:"tripId,omitempty"`
}

// Incoming is a notification to store.
type Incoming struct {
	Pointer
	// Raw is the body as received (a JSON object). It is kept as text,
	// but never with a NUL character: see RefusedError.
	Raw               []byte
	Source, SourceIP  string
	SignatureVerified bool
	// MaxRetries is the event's retry budget (DefaultMaxRetries when 0).
	MaxRetries int
	ReceivedAt time.Time
}

// withDefaults is in with ReceivedAt (now) and MaxRetries
// (DefaultMaxRetries) set where they are unset.
func (in Incoming) withDefaults() Incoming {
	if in.ReceivedAt.IsZero() {
		in.ReceivedAt = Now()
	}
	if in.MaxRetries <= 0 {
		in.MaxRetries = DefaultMaxRetries
	}
	return in
}

// RefusedError is a notification the store will not hold because one of
// its texts holds a NUL character (U+0000): PostgreSQL's text cannot hold
// one, so the insert of a whole batch would fail for it (SQLite would store
// it), and a raw payload is refused for the JSON escape \u0000 too, which
// PostgreSQL's jsonb cannot hold, so that a NUL never stands in the way of
// reading a payload as jsonb. (The payload column is text: other escapes
// jsonb refuses, such as an unpaired surrogate, are stored as sent.)
// Nothing of the notification is stored; the notifications stored with it
// are not affected.
type RefusedError struct {
	// ID is the notification's Avinode event id.
	ID string
	// Field is what holds the NUL: id, href, type or tripId (the
	// pointer's), source, source_ip, or payload (the raw body).
	Field string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("store: webhook event %q not stored: its %s holds a NUL character (U+0000), which the store cannot hold", e.ID, e.Field)
}

// refusal is the RefusedError for in when the store cannot hold it, else
// nil.
func (in Incoming) refusal() *RefusedError {
	field := ""
	switch {
	case strings.IndexByte(in.ID, 0) >= 0:
		field = "id"
	case strings.IndexByte(in.Href, 0) >= 0:
		field = "href"
	case strings.IndexByte(in.Type, 0) >= 0:
		field = "type"
	case strings.IndexByte(in.TripRef, 0) >= 0:
		field = "tripId"
	case strings.IndexByte(in.Source, 0) >= 0:
		field = "source"
	case strings.IndexByte(in.SourceIP, 0) >= 0:
		field = "source_ip"
	case bytes.IndexByte(in.Raw, 0) >= 0 || escapesNUL(in.Raw):
		field = "payload"
	default:
		return nil
	}
	return &RefusedError{ID: in.ID, Field: field}
}

// escapesNUL reports whether the JSON text b writes a NUL character as
// \u0000. Outside strings JSON has no backslash, and in them a backslash
// escapes the character after it: \\u0000 is a backslash and "u0000".
func escapesNUL(b []byte) bool {
	for {
		i := bytes.IndexByte(b, '\\')
		if i < 0 || i+1 == len(b) {
			return false
		}
		if b[i+1] == 'u' && len(b) >= i+6 && string(b[i+2:i+6]) == "0000" {
			return true
		}
		b = b[i+2:]
	}
}

// verifiedFlag is SignatureVerified as the signature_verified column holds
// it: 1 or 0.
func (in Incoming) verifiedFlag() int {
	if in.SignatureVerified {
		return 1
	}
	return 0
}

// WebhookEvent is a stored notification and where its processing stands.
type WebhookEvent struct {
	ID                string     `json:"event_id"`
	AvinodeEventID    string     `json:"avinode_event_id"`
	EventType         string     `json:"event_type"`
	ResourceType      string     `json:"resource_type"`
	Href              string     `json:"href"`
	TripRef           string     `json:"avinode_trip_ref,omitempty"`
	TripID            string     `json:"trip_id,omitempty"`
	RFQID             string     `json:"rfq_id,omitempty"`
	QuoteID           string     `json:"quote_id,omitempty"`
	MessageID         string     `json:"message_id,omitempty"`
	Source            string     `json:"source"`
	SourceIP          string     `json:"source_ip,omitempty"`
	SignatureVerified bool       `json:"signature_verified"`
	Payload           string     `json:"-"`
	ParsedData        string     `json:"-"`
	Status            string     `json:"status"`
	Deliveries        int        `json:"deliveries"`
	ReceivedAt        time.Time  `json:"received_at"`
	LastReceivedAt    time.Time  `json:"last_received_at"`
	ClaimedAt         *time.Time `json:"claimed_at,omitempty"`
	ProcessedAt       *time.Time `json:"processed_at,omitempty"`
	DurationMS        *int64     `json:"processing_duration_ms,omitempty"`
	Error             string     `json:"last_error,omitempty"`
	RetryCount        int        `json:"retry_count"`
	MaxRetries        int        `json:"max_retries"`
	NextRetryAt       *time.Time `json:"next_retry_at,omitempty"`
	RequeueCount      int        `json:"requeue_count,omitempty"`
	LeaseOwner        string     `json:"lease_owner,omitempty"`
	LeaseExpiresAt    *time.Time `json:"lease_expires_at,omitempty"`
	UpdatedAt         time.Time  `json:"updated_at"`
}

const eventColumns = `id, avinode_event_id, event_type, resource_type, href, avinode_trip_ref, trip_id, rfq_id, quote_id,
	message_id, source, source_ip, signature_verified, raw_payload, parsed_data, status, deliveries, received_at,
	last_received_at, claimed_at, processed_at, processing_duration_ms, error_message, retry_count, max_retries,
	next_retry_at, requeue_count, lease_owner, lease_expires_at, updated_at`

// ProvisionalType is what a pointer's type suggests an event is, until
// processing tells.
func ProvisionalType(resourceType string) string {
	switch strings.ToLower(resourceType) {
	case "rfqs":
		return "rfq_updated"
	case "tripmsgs":
		return "message_received"
	case "emptylegs":
		return "empty_leg"
	case "leads", "clientleads":
		return "client_lead"
	}
	return "unknown"
}

// newEventID makes an event's own id: "wh-" and 20 random hex digits.
func newEventID() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	id := [3 + 2*len(b)]byte{'w', 'h', '-'}
	hex.Encode(id[3:], b[:])
	return string(id[:])
}

// Received is what storing one notification did: the stored event's id and
// delivery count, and whether it was new; or, with Refused set, that the
// store refused it and stored nothing of it.
type Received struct {
	ID         string
	Deliveries int
	Fresh      bool
	Refused    *RefusedError
}

// ReceiveWebhookEvents stores notifications that arrived together (a
// receiver commits them at once), in one transaction: each new one as a
// pending event, each one whose Avinode event id is stored already —
// earlier, or earlier in ins — by counting the redelivery on the stored row.
// It returns what it did for each, in the order of ins. One the store
// cannot hold is refused on its own (Received.Refused), the others stored
// without it; otherwise nothing is stored unless all are.
func (s *Store) ReceiveWebhookEvents(ctx context.Context, ins []Incoming) ([]Received, error) {
	if s.d == postgresDialect {
		return s.receivePostgres(ctx, ins)
	}
	out := make([]Received, len(ins))
	err := s.Update(ctx, func(tx *Tx) error {
		for i, in := range ins {
			var err error
			out[i], err = tx.receive(ctx, in)
			var refused *RefusedError
			if errors.As(err, &refused) {
				out[i] = Received{Refused: refused} // refused before anything was sent
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// receivePostgres is ReceiveWebhookEvents on PostgreSQL in one statement,
// one round trip however many notifications there are: a multi-row INSERT
// of one row per Avinode event id, with its deliveries in ins, that counts
// them on the stored row instead when there is one (ON CONFLICT DO UPDATE,
// which also waits for a concurrent insert of the same event and then
// counts). Rows go in Avinode event id order, so concurrent receivers lock
// them in one order; a statement PostgreSQL aborts to break a deadlock runs
// again.
func (s *Store) receivePostgres(ctx context.Context, ins []Incoming) ([]Received, error) {
	type event struct {
		Incoming
		newID      string
		deliveries int    // in ins
		at         string // the first delivery's time, as stored
		lastAt     string // the latest delivery's time
	}
	out := make([]Received, len(ins))
	byID := make(map[string]*event, len(ins))
	events := make([]*event, 0, len(ins))
	for i, in := range ins {
		if r := in.refusal(); r != nil {
			out[i].Refused = r
			continue
		}
		in = in.withDefaults()
		at := ts(in.ReceivedAt)
		if e := byID[in.ID]; e != nil {
			e.deliveries++
			e.lastAt = max(e.lastAt, at)
			continue
		}
		e := &event{Incoming: in, newID: newEventID(), deliveries: 1, at: at, lastAt: at}
		byID[in.ID] = e
		events = append(events, e)
	}
	if len(events) == 0 {
		return out, nil
	}
	slices.SortFunc(events, func(a, b *event) int { return strings.Compare(a.ID, b.ID) })
	n := len(events)
	// The batch goes as one parameter, a JSON array of one object per
	// event, built here in one buffer (pgx sends a string parameter as it
	// is). PostgreSQL spent a quarter more of its CPU on a statement given
	// the same rows as fourteen array literals, one per column. The values
	// are UTF-8 (the receiver refuses a body that is not, and decodes the
	// pointer's fields from it); a byte that is not would be stored as
	// U+FFFD.
	size := 2
	for _, e := range events {
		size += len(e.newID) + len(e.ID) + 2*len(e.Type) + len(e.Href) + len(e.TripRef) + len(e.Source) + len(e.SourceIP) +
			len(e.Raw) + len(e.Raw)/4 + len(e.at) + len(e.lastAt) + 220
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	for i, e := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsontext.AppendString(append(b, `{"id":`...), e.newID)
		b = jsontext.AppendString(append(b, `,"event_id":`...), e.ID)
		b = jsontext.AppendString(append(b, `,"event_type":`...), ProvisionalType(e.Type))
		b = jsontext.AppendString(append(b, `,"resource_type":`...), e.Type)
		b = jsontext.AppendString(append(b, `,"href":`...), e.Href)
		b = jsontext.AppendString(append(b, `,"trip_ref":`...), e.TripRef)
		b = jsontext.AppendString(append(b, `,"source":`...), e.Source)
		b = jsontext.AppendString(append(b, `,"source_ip":`...), e.SourceIP)
		b = strconv.AppendInt(append(b, `,"verified":`...), int64(e.verifiedFlag()), 10)
		b = jsontext.AppendString(append(b, `,"raw":`...), string(e.Raw))
		b = strconv.AppendInt(append(b, `,"deliveries":`...), int64(e.deliveries), 10)
		b = jsontext.AppendString(append(b, `,"at":`...), e.at)
		b = jsontext.AppendString(append(b, `,"last_at":`...), e.lastAt)
		b = strconv.AppendInt(append(b, `,"max_retries":`...), int64(e.MaxRetries), 10)
		b = append(b, '}')
	}
	batch := string(append(b, ']'))
	type stored struct {
		id         string
		deliveries int
	}
	got := make(map[string]stored, n)
	err := retrying(ctx, func() error {
		clear(got)
		rows, err := s.pool.Query(ctx, `INSERT INTO avinode_webhook_events (id, avinode_event_id, event_type, resource_type, href,
				avinode_trip_ref, source, source_ip, signature_verified, raw_payload, status, deliveries, received_at,
				last_received_at, max_retries, next_retry_at, updated_at)
			SELECT id, event_id, event_type, resource_type, href, trip_ref, source, source_ip, verified, raw, 'pending', deliveries,
				at, last_at, max_retries, at, at
			FROM json_to_recordset($1::json) AS n(id text, event_id text, event_type text, resource_type text, href text,
				trip_ref text, source text, source_ip text, verified int, raw text, deliveries int, at text, last_at text,
				max_retries int)
			ORDER BY event_id
			ON CONFLICT (avinode_event_id) DO UPDATE SET deliveries = avinode_webhook_events.deliveries + excluded.deliveries,
				last_received_at = greatest(avinode_webhook_events.last_received_at, excluded.last_received_at)
			RETURNING avinode_event_id, id, deliveries`,
			&batch) // a pointer goes into the interface as it is; the string would be copied
		if err != nil {
			return err
		}
		defer rows.Close()
		// Scanned into once for all rows: each would move to the heap.
		var eventID string
		var st stored
		for rows.Next() {
			if err := rows.Scan(&eventID, &st.id, &st.deliveries); err != nil {
				return err
			}
			got[eventID] = st
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: storing %d webhook events: %w", n, err)
	}
	// An event's deliveries in ins are its latest: the j-th of k brought it
	// to stored-k+j, and only the first of a new event is fresh.
	seen := make(map[string]int, n)
	for i, in := range ins {
		if out[i].Refused != nil {
			continue
		}
		e, st := byID[in.ID], got[in.ID]
		if st.id == "" {
			return nil, fmt.Errorf("store: webhook event %s was neither stored nor counted", in.ID)
		}
		seen[in.ID]++
		j := seen[in.ID]
		out[i] = Received{ID: st.id, Deliveries: st.deliveries - e.deliveries + j, Fresh: j == 1 && st.id == e.newID}
	}
	return out, nil
}

// ReceiveWebhookEvent stores one notification in its own transaction and
// returns the stored event, and whether it was new.
func (s *Store) ReceiveWebhookEvent(ctx context.Context, in Incoming) (*WebhookEvent, bool, error) {
	var ev *WebhookEvent
	var fresh bool
	err := s.Update(ctx, func(tx *Tx) error {
		var err error
		ev, fresh, err = tx.EnqueueWebhookEvent(ctx, in)
		return err
	})
	return ev, fresh, err
}

// EnqueueWebhookEvent is ReceiveWebhookEvent inside a transaction.
func (t *Tx) EnqueueWebhookEvent(ctx context.Context, in Incoming) (*WebhookEvent, bool, error) {
	r, err := t.receive(ctx, in)
	if err != nil {
		return nil, false, err
	}
	evs, err := t.q.events(ctx, `SELECT `+eventColumns+` FROM avinode_webhook_events WHERE id = ?`, r.ID)
	if err != nil {
		return nil, false, err
	}
	if len(evs) == 0 {
		return nil, false, fmt.Errorf("store: webhook event %s vanished", in.ID)
	}
	return &evs[0], r.Fresh, nil
}

// receive inserts the notification, or counts a redelivery; a notification
// the store cannot hold is a *RefusedError, before anything is sent (the
// transaction is not spoilt).
func (t *Tx) receive(ctx context.Context, in Incoming) (Received, error) {
	if r := in.refusal(); r != nil {
		return Received{}, r
	}
	in = in.withDefaults()
	at := ts(in.ReceivedAt)
	r := Received{Deliveries: 1, Fresh: true}
	err := t.q.row(ctx, `INSERT INTO avinode_webhook_events (id, avinode_event_id, event_type, resource_type, href,
			avinode_trip_ref, source, source_ip, signature_verified, raw_payload, status, received_at, last_received_at,
			max_retries, next_retry_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (avinode_event_id) DO NOTHING
		RETURNING id`,
		newEventID(), in.ID, ProvisionalType(in.Type), in.Type, in.Href, in.TripRef, in.Source, in.SourceIP, in.verifiedFlag(),
		string(in.Raw), EventPending, at, at, in.MaxRetries, at, at).Scan(&r.ID)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Received{}, fmt.Errorf("store: storing webhook event %s: %w", in.ID, err)
	}
	r.Fresh = false
	if err := t.q.row(ctx, `UPDATE avinode_webhook_events SET deliveries = deliveries + 1, last_received_at = ?
		WHERE avinode_event_id = ? RETURNING id, deliveries`, at, in.ID).Scan(&r.ID, &r.Deliveries); err != nil {
		return Received{}, fmt.Errorf("store: counting a redelivery of webhook event %s: %w", in.ID, err)
	}
	return r, nil
}

// WebhookEvent reads one event by its own id; ErrNotFound if unknown.
func (s *Store) WebhookEvent(ctx context.Context, id string) (*WebhookEvent, error) {
	return only(s.reader().events(ctx, `SELECT `+eventColumns+` FROM avinode_webhook_events WHERE id = ?`, id))
}

// EventFilter selects webhook events, newest first.
type EventFilter struct {
	// TripID matches the trip processing found, or the pointer's trip
	// reference.
	TripID string
	// Type matches the event type or the pointer's resource type.
	Type   string
	Status string
	// Before, an event id, lists the events received before that one.
	Before string
	Limit  int
}

// WebhookEvents lists events, newest first.
func (s *Store) WebhookEvents(ctx context.Context, f EventFilter) ([]WebhookEvent, error) {
	var where []string
	var args []any
	if f.TripID != "" {
		where = append(where, `(trip_id = ? OR avinode_trip_ref = ?)`)
		args = append(args, f.TripID, f.TripID)
	}
	if f.Type != "" {
		where = append(where, `(event_type = ? OR resource_type = ?)`)
		args = append(args, f.Type, f.Type)
	}
	if f.Status != "" {
		where = append(where, `status = ?`)
		args = append(args, f.Status)
	}
	if f.Before != "" {
		before, err := s.WebhookEvent(ctx, f.Before)
		if err != nil {
			return nil, err
		}
		where = append(where, `(received_at < ? OR (received_at = ? AND id < ?))`)
		args = append(args, ts(before.ReceivedAt), ts(before.ReceivedAt), before.ID)
	}
	if f.Limit <= 0 {
		f.Limit = 50
	}
	q := `SELECT ` + eventColumns + ` FROM avinode_webhook_events`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	return s.reader().events(ctx, q+` ORDER BY received_at DESC, id DESC LIMIT ?`, append(args, f.Limit)...)
}

// WebhookEventCounts returns how many events are in each status.
func (s *Store) WebhookEventCounts(ctx context.Context) (map[string]int, error) {
	rows, err := s.reader().query(ctx, `SELECT status, count(*) FROM avinode_webhook_events GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("store: counting webhook events: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for _, st := range EventStatuses {
		out[st] = 0
	}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("store: counting webhook events: %w", err)
		}
		out[st] = n
	}
	return out, rows.Err()
}

// The events a worker may take at a moment: pending or failed ones whose
// time has come, and ones whose worker's lease has run out. Each condition
// matches a partial index, so finding the oldest reads no other row.
const (
	dueCondition     = `status IN ('pending', 'failed') AND next_retry_at <= ?`
	expiredCondition = `status = 'processing' AND lease_expires_at < ?`
)

// HasDueWebhookEvents reports, from the read pool, whether any event is due,
// so an idle worker takes the write lock only when there is work.
func (s *Store) HasDueWebhookEvents(ctx context.Context, now time.Time) (bool, error) {
	var n int
	at := ts(now)
	err := s.reader().row(ctx, `SELECT count(*) FROM (SELECT 1 FROM avinode_webhook_events WHERE `+dueCondition+`
		UNION ALL SELECT 1 FROM avinode_webhook_events WHERE `+expiredCondition+` LIMIT 1) due`, at, at).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: reading webhook events: %w", err)
	}
	return n > 0, nil
}

// Claim is the outcome of ClaimWebhookEvents.
type Claim struct {
	// Events are claimed for the caller: status processing, leased to it.
	Events []WebhookEvent
	// Abandoned are events whose lease ran out once too often: moved to the
	// dead letter instead of being claimed again.
	Abandoned []WebhookEvent
}

// ClaimWebhookEvents takes up to limit due events, oldest due first, and
// leases each to owner until now+lease: their status becomes processing and
// no other worker takes them while the lease holds. Concurrent workers —
// other processes included — never take the same event (PostgreSQL: FOR
// UPDATE SKIP LOCKED; SQLite: the database's write lock). An event whose
// previous worker's lease ran out counts that attempt as failed; once its
// retries are spent it goes to the dead letter instead.
func (s *Store) ClaimWebhookEvents(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) (*Claim, error) {
	out := &Claim{}
	err := s.Update(ctx, func(tx *Tx) error {
		out.Events, out.Abandoned = nil, nil
		at := ts(now)
		type due struct {
			id, status   string
			retries, max int
		}
		var picked []due
		// Events whose worker's lease ran out first: they waited longest.
		for _, q := range []string{
			`SELECT id, status, retry_count, max_retries FROM avinode_webhook_events WHERE ` + expiredCondition + ` ORDER BY lease_expires_at LIMIT ?`,
			`SELECT id, status, retry_count, max_retries FROM avinode_webhook_events WHERE ` + dueCondition + ` ORDER BY next_retry_at LIMIT ?`,
		} {
			if len(picked) >= limit {
				break
			}
			if s.d == postgresDialect {
				q += ` FOR UPDATE SKIP LOCKED`
			}
			rows, err := tx.q.query(ctx, q, at, limit-len(picked))
			if err != nil {
				return fmt.Errorf("store: claiming webhook events: %w", err)
			}
			for rows.Next() {
				var d due
				if err := rows.Scan(&d.id, &d.status, &d.retries, &d.max); err != nil {
					rows.Close()
					return fmt.Errorf("store: claiming webhook events: %w", err)
				}
				picked = append(picked, d)
			}
			if err := errors.Join(rows.Err(), rows.Close()); err != nil {
				return fmt.Errorf("store: claiming webhook events: %w", err)
			}
		}
		expires := ts(now.Add(lease))
		for i, d := range picked {
			if d.status == EventProcessing {
				// Its worker stopped (or took longer than its lease).
				if d.retries >= d.max {
					if _, err := tx.q.exec(ctx, `UPDATE avinode_webhook_events SET status = ?, processed_at = ?, lease_owner = '',
						lease_expires_at = NULL, next_retry_at = NULL, updated_at = ?,
						error_message = 'the worker processing it stopped before finishing (lease expired), and its retries are spent'
						WHERE id = ?`, EventDeadLetter, at, at, d.id); err != nil {
						return fmt.Errorf("store: abandoning webhook event %s: %w", d.id, err)
					}
					evs, err := tx.q.events(ctx, `SELECT `+eventColumns+` FROM avinode_webhook_events WHERE id = ?`, d.id)
					if err != nil {
						return err
					}
					out.Abandoned = append(out.Abandoned, evs...)
					continue
				}
				if _, err := tx.q.exec(ctx, `UPDATE avinode_webhook_events SET retry_count = retry_count + 1,
					error_message = 'the worker processing it stopped before finishing (lease expired)' WHERE id = ?`, d.id); err != nil {
					return fmt.Errorf("store: reclaiming webhook event %s: %w", d.id, err)
				}
			}
			if _, err := tx.q.exec(ctx, `UPDATE avinode_webhook_events SET status = ?, lease_owner = ?, lease_expires_at = ?,
				claimed_at = ?, updated_at = ? WHERE id = ?`,
				EventProcessing, fmt.Sprintf("%s/%d", owner, i), expires, at, at, d.id); err != nil {
				return fmt.Errorf("store: claiming webhook event %s: %w", d.id, err)
			}
			evs, err := tx.q.events(ctx, `SELECT `+eventColumns+` FROM avinode_webhook_events WHERE id = ?`, d.id)
			if err != nil {
				return err
			}
			out.Events = append(out.Events, evs...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Outcome is what processing an event found, recorded when it completes.
type Outcome struct {
	EventType                         string
	TripID, RFQID, QuoteID, MessageID string
	// Data is a JSON summary kept as the event's parsed data.
	Data string
}

// ErrLeaseLost is returned when an event is completed or failed by an
// attempt that no longer holds it: its lease ran out and another worker
// took it.
var ErrLeaseLost = errors.New("store: the webhook event's lease was lost to another worker")

// CompleteWebhookEvent marks the event completed by the attempt ev (as
// claimed) with what processing found.
func (s *Store) CompleteWebhookEvent(ctx context.Context, ev *WebhookEvent, o Outcome, now time.Time) error {
	at := ts(now)
	var dur int64
	if ev.ClaimedAt != nil {
		dur = max(now.Sub(*ev.ClaimedAt).Milliseconds(), 0)
	}
	var data any
	if o.Data != "" {
		data = o.Data
	}
	return s.Update(ctx, func(tx *Tx) error {
		res, err := tx.q.exec(ctx, `UPDATE avinode_webhook_events SET status = ?, event_type = ?, trip_id = ?, rfq_id = ?,
			quote_id = ?, message_id = ?, parsed_data = ?, processed_at = ?, processing_duration_ms = ?, lease_owner = '',
			lease_expires_at = NULL, next_retry_at = NULL, updated_at = ?
			WHERE id = ? AND status = ? AND lease_owner = ?`,
			EventCompleted, o.EventType, o.TripID, o.RFQID, o.QuoteID, o.MessageID, data, at, dur, at,
			ev.ID, EventProcessing, ev.LeaseOwner)
		if err != nil {
			return fmt.Errorf("store: completing webhook event %s: %w", ev.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrLeaseLost
		}
		return nil
	})
}

// FailWebhookEvent records a failed attempt ev (as claimed) with its reason.
// A permanent failure goes to the dead letter at once; otherwise the event
// is retried after backoff(retry count after this failure), until its
// retries are spent (retry_count = max_retries), when the next failure sends
// it to the dead letter. It returns the event's new status.
func (s *Store) FailWebhookEvent(ctx context.Context, ev *WebhookEvent, reason string, permanent bool, now time.Time,
	backoff func(retry int) time.Duration) (string, error) {
	at := ts(now)
	var status string
	err := s.Update(ctx, func(tx *Tx) error {
		q := `SELECT retry_count, max_retries FROM avinode_webhook_events WHERE id = ? AND status = ? AND lease_owner = ?`
		if s.d == postgresDialect {
			q += ` FOR UPDATE`
		}
		var retries, maxRetries int
		err := tx.q.row(ctx, q, ev.ID, EventProcessing, ev.LeaseOwner).Scan(&retries, &maxRetries)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrLeaseLost
		}
		if err != nil {
			return fmt.Errorf("store: failing webhook event %s: %w", ev.ID, err)
		}
		if permanent || retries >= maxRetries {
			status = EventDeadLetter
			_, err = tx.q.exec(ctx, `UPDATE avinode_webhook_events SET status = ?, error_message = ?, processed_at = ?,
				lease_owner = '', lease_expires_at = NULL, next_retry_at = NULL, updated_at = ? WHERE id = ?`,
				status, reason, at, at, ev.ID)
		} else {
			status = EventFailed
			next := now.Add(backoff(retries + 1))
			_, err = tx.q.exec(ctx, `UPDATE avinode_webhook_events SET status = ?, error_message = ?, retry_count = retry_count + 1,
				next_retry_at = ?, lease_owner = '', lease_expires_at = NULL, updated_at = ? WHERE id = ?`,
				status, reason, ts(next), at, ev.ID)
		}
		if err != nil {
			return fmt.Errorf("store: failing webhook event %s: %w", ev.ID, err)
		}
		return nil
	})
	return status, err
}

// ErrNotRequeueable is returned by RequeueWebhookEvent for an event that is
// not in the dead letter or waiting for a retry.
var ErrNotRequeueable = errors.New("store: only an event in the dead letter or waiting for a retry can be requeued")

// RequeueWebhookEvent puts a dead-letter (or failed) event back in the
// queue, due now, with its retries restored; the last error is kept until
// processing succeeds or fails again.
func (s *Store) RequeueWebhookEvent(ctx context.Context, id string, now time.Time) (*WebhookEvent, error) {
	at := ts(now)
	var out *WebhookEvent
	err := s.Update(ctx, func(tx *Tx) error {
		res, err := tx.q.exec(ctx, `UPDATE avinode_webhook_events SET status = ?, retry_count = 0, next_retry_at = ?,
			processed_at = NULL, requeue_count = requeue_count + 1, updated_at = ? WHERE id = ? AND status IN (?, ?)`,
			EventPending, at, at, id, EventDeadLetter, EventFailed)
		if err != nil {
			return fmt.Errorf("store: requeueing webhook event %s: %w", id, err)
		}
		evs, err := tx.q.events(ctx, `SELECT `+eventColumns+` FROM avinode_webhook_events WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			return ErrNotFound
		}
		if n, _ := res.RowsAffected(); n == 0 {
			out = &evs[0]
			return ErrNotRequeueable
		}
		out = &evs[0]
		return nil
	})
	return out, err
}

func (q querier) events(ctx context.Context, query string, args ...any) ([]WebhookEvent, error) {
	return selectRows(ctx, q, "webhook events", query, args, func(rows *sql.Rows, e *WebhookEvent) error {
		var verified int
		var parsed sql.NullString
		var dur sql.NullInt64
		if err := rows.Scan(&e.ID, &e.AvinodeEventID, &e.EventType, &e.ResourceType, &e.Href, &e.TripRef, &e.TripID, &e.RFQID,
			&e.QuoteID, &e.MessageID, &e.Source, &e.SourceIP, &verified, &e.Payload, &parsed, &e.Status, &e.Deliveries,
			stamp(&e.ReceivedAt), stamp(&e.LastReceivedAt), optStamp(&e.ClaimedAt), optStamp(&e.ProcessedAt), &dur, &e.Error,
			&e.RetryCount, &e.MaxRetries, optStamp(&e.NextRetryAt), &e.RequeueCount, &e.LeaseOwner, optStamp(&e.LeaseExpiresAt),
			stamp(&e.UpdatedAt)); err != nil {
			return err
		}
		e.SignatureVerified = verified != 0
		e.ParsedData = parsed.String
		if dur.Valid {
			e.DurationMS = &dur.Int64
		}
		return nil
	})
}
