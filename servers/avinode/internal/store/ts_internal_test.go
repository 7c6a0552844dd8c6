package store

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestTSMatchesFormat: ts writes what time.Format writes for timeLayout,
// for times in any zone, at the edges of the four-digit years and outside
// them, with the sub-millisecond part cut, not rounded.
func TestTSMatchesFormat(t *testing.T) {
	zone := time.FixedZone("X", -7*3600-30*60)
	times := []time.Time{{}, time.Unix(0, 0), time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 27, 9, 5, 7, 1_999_999, zone), time.Now(), Now()}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		times = append(times, time.Unix(r.Int64N(400*365*86400)-100*365*86400, r.Int64N(1e9)).In(zone))
	}
	for _, tm := range times {
		if got, want := ts(tm), tm.UTC().Format(timeLayout); got != want {
			t.Fatalf("ts(%v) = %q, want %q", tm, got, want)
		}
	}
}
