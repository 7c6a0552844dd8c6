package store

import (
	"context"
	"sync"
)

// Record is one write a committed transaction made: what a webhook processor
// reports an event to have been (a quote received, an RFQ declined…).
type Record struct {
	// Kind is RecordTrip, RecordRFQ, RecordQuote or RecordMessage.
	Kind   string
	ID     string
	TripID string
	RFQID  string
	// Inserted: the row is new. Changed: it is new or differs from what was
	// stored.
	Inserted, Changed bool
	// Status and PrevStatus are an RFQ's status after and before the write
	// (PrevStatus "" for a new RFQ).
	Status, PrevStatus string
}

// Record kinds.
const (
	RecordTrip    = "trip"
	RecordRFQ     = "rfq"
	RecordQuote   = "quote"
	RecordMessage = "message"
)

// Recorder collects the Records of the transactions run with a context it
// was attached to (WithRecorder). Safe for concurrent use.
type Recorder struct {
	mu   sync.Mutex
	recs []Record
}

type recorderKey struct{}

// WithRecorder returns a context whose store transactions report what they
// wrote to the returned Recorder once they commit. Without one, a
// transaction reads nothing extra to tell new rows from updated ones.
func WithRecorder(ctx context.Context) (context.Context, *Recorder) {
	r := &Recorder{}
	return context.WithValue(ctx, recorderKey{}, r), r
}

func recorderFrom(ctx context.Context) *Recorder {
	r, _ := ctx.Value(recorderKey{}).(*Recorder)
	return r
}

func (r *Recorder) add(recs []Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, recs...)
}

// Records returns what committed transactions wrote, in order.
func (r *Recorder) Records() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Record(nil), r.recs...)
}

func (t *Tx) record(r Record) {
	if t.rec != nil {
		t.recs = append(t.recs, r)
	}
}
