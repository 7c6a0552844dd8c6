package clientdb_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/clientdb"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/sheetsfake"
)

// TestConcurrentWrites runs 50 update_client and add_flight_history calls at
// once, across five clients and within each, while a person re-sorts the
// sheet before every fifth write: no update is lost, every total is exact,
// and no write lands on a client it was not meant for.
func TestConcurrentWrites(t *testing.T) {
	inEveryWorkbook(t, func(t *testing.T, e *env) {
		before := byID(t, e.db)
		reorder := func(n int64) {
			if n%5 == 0 {
				e.shuffle(uint64(n))
			}
		}
		if e.fake != nil {
			var n atomic.Int64
			e.fake.OnRequest(func(op string) {
				if op == sheetsfake.OpBatchUpdate {
					reorder(n.Add(1))
				}
			})
			defer e.fake.OnRequest(nil)
		} else {
			moving(e, reorder)
		}

		targets := []string{"CL-001", "CL-002", "CL-003", "CL-004", "CL-005"}
		fields := []func(v string) clientdb.Fields{
			func(v string) clientdb.Fields { return clientdb.Fields{Phone: &v} },
			func(v string) clientdb.Fields { return clientdb.Fields{Company: &v} },
			func(v string) clientdb.Fields { return clientdb.Fields{CateringPreference: &v} },
			func(v string) clientdb.Fields { return clientdb.Fields{SpecialNeeds: &v} },
			func(v string) clientdb.Fields { return clientdb.Fields{PreferredOperators: &[]string{v}} },
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, 50)
		var restored atomic.Int64
		count := func(notes []string) {
			for _, n := range notes {
				if strings.Contains(n, "first landed on") {
					restored.Add(1)
				}
			}
		}
		for _, id := range targets {
			for k := range 5 {
				wg.Go(func() {
					<-start
					res, err := e.db.Update(ctx, id, fields[k](fmt.Sprintf("%s-%d", id, k)), "")
					count(res.Notes)
					errs <- err
				})
				wg.Go(func() {
					<-start
					res, err := e.db.AddFlight(ctx, id, clientdb.FlightInput{FlightID: fmt.Sprintf("%s-F%d", id, k),
						Date: fmt.Sprintf("2026-01-%02d", 10+k), Route: "KTEB-KPBI"})
					count(res.Notes)
					errs <- err
				})
			}
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}

		// The re-sorting did send writes to the wrong rows, and they were
		// put right (the checks below prove it).
		if restored.Load() == 0 {
			t.Error("no write was misdirected by the re-sorting; the test proves nothing")
		}
		t.Logf("%d misdirected writes were restored and redone", restored.Load())
		after := byID(t, e.db)
		for id, r := range before {
			got := after[id]
			if !slices.Contains(targets, id) {
				if !sameExceptStamp(r, got) {
					t.Errorf("client %s, not a target, changed: %+v → %+v", id, r, got)
				}
				continue
			}
			want := fmt.Sprintf("%s-", id)
			if got.Phone != want+"0" || got.Company != want+"1" || got.Preferences.Catering != want+"2" ||
				got.Preferences.SpecialNeeds != want+"3" || !slices.Equal(got.History.PreferredOperators, []string{want + "4"}) {
				t.Errorf("%s lost an update: %+v", id, got)
			}
			if got.History.TotalFlights != r.History.TotalFlights+5 || *got.History.LastFlightDate != "2026-01-14" {
				t.Errorf("%s: %d flights (was %d), last %v", id, got.History.TotalFlights, r.History.TotalFlights, *got.History.LastFlightDate)
			}
			if got.Name != r.Name || got.Email != r.Email {
				t.Errorf("%s's identity changed: %+v", id, got)
			}
		}
		// Every flight is in the history once, numbered without gaps.
		hist := must(e.db.ReadRange(ctx, clientdb.RangeRequest{Range: "Flight_History", HeaderRow: 1, Limit: 500}))
		numbers := map[string][]int{}
		for _, row := range hist.Rows {
			id, _ := row.Values["client_id"].(string)
			n, _ := row.Values["client_flight_number"].(float64)
			if slices.Contains(targets, id) && row.Values["date"] != nil && row.Values["date"].(string) >= "2026" {
				numbers[id] = append(numbers[id], int(n))
			}
		}
		for _, id := range targets {
			got := numbers[id]
			slices.Sort(got)
			base := before[id].History.TotalFlights
			if !slices.Equal(got, []int{base + 1, base + 2, base + 3, base + 4, base + 5}) {
				t.Errorf("%s's new flights are numbered %v (total was %d)", id, got, base)
			}
		}
	})
}
