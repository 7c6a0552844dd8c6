package mock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/airports"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
)

// emptyLegsOn returns the simulated empty legs of one day: each aircraft,
// on a stable draw, repositions between two hubs of its own region.
func emptyLegsOn(day time.Time) []market.EmptyLeg {
	date := day.Format(time.DateOnly)
	var out []market.EmptyLeg
	for _, op := range operators {
		base, ok := airports.Lookup(op.Base)
		if !ok {
			continue
		}
		var region []airports.Airport
		for _, code := range hubs {
			if a, ok := airports.Lookup(code); ok && distNM(base, a) <= 1500 {
				region = append(region, a)
			}
		}
		if len(region) < 2 {
			continue
		}
		for _, ac := range op.Fleet {
			h := hashOf(date, ac.Tail, "emptyleg")
			if unit(h) >= 0.45 {
				continue
			}
			from := region[(h>>8)%uint64(len(region))]
			var dests []airports.Airport
			for _, a := range region {
				if d := distNM(from, a); a.ICAO != from.ICAO && d >= 150 && d <= ac.RangeNM*0.9 {
					dests = append(dests, a)
				}
			}
			if len(dests) == 0 {
				continue
			}
			to := dests[(h>>24)%uint64(len(dests))]
			nm := distNM(from, to)
			hours, _ := hoursFor(nm, ac.aircraftType)
			earliest := day.Add(time.Duration(6+(h>>40)%12) * time.Hour)
			price := store.Money(math.Round(0.35*hours*ac.HourlyUSD*usdRate[op.Currency]/100) * 100 * 100)
			out = append(out, market.EmptyLeg{
				ID:   fmt.Sprintf("aemptyleg-%d", 7000000000+(h>>20)%1000000000),
				From: from.ICAO, To: to.ICAO, EarliestDepart: earliest, LatestDepart: earliest.Add(4 * time.Hour),
				AircraftType: ac.Name, AircraftCategory: ac.Category, Capacity: ac.Capacity, OperatorName: op.Name,
				Price: &price, Currency: op.Currency, DistanceNM: int(math.Round(nm)),
			})
		}
	}
	return out
}

// detourLimit is how much longer than the empty leg itself the flight via
// the requested airports may be, for the leg to be worth offering.
const detourLimit = 1.3

// matches reports whether an empty leg can serve the requested route: flown
// via the requested departure and/or arrival, it grows by at most
// detourLimit.
func matches(l market.EmptyLeg, from, to *airports.Airport) bool {
	a, ok1 := airports.Lookup(l.From)
	b, ok2 := airports.Lookup(l.To)
	if !ok1 || !ok2 {
		return false
	}
	direct := distNM(a, b)
	via := 0.0
	at := a
	for _, p := range []*airports.Airport{from, to} {
		if p != nil {
			via += distNM(at, *p)
			at = *p
		}
	}
	via += distNM(at, b)
	return via <= direct*detourLimit+25
}

// SearchEmptyLegs finds simulated empty legs near the route within the
// days of flexibility around the date, soonest first.
func (m *Market) SearchEmptyLegs(ctx context.Context, q market.EmptyLegQuery) ([]market.EmptyLeg, error) {
	if err := m.pause(ctx); err != nil {
		return nil, err
	}
	var from, to *airports.Airport
	if a, ok := airports.Lookup(q.From); ok {
		from = &a
	}
	if a, ok := airports.Lookup(q.To); ok {
		to = &a
	}
	day := q.Date.UTC().Truncate(24 * time.Hour)
	now := m.now()
	var out []market.EmptyLeg
	for d := -q.FlexDays; d <= q.FlexDays; d++ {
		for _, l := range emptyLegsOn(day.AddDate(0, 0, d)) {
			if l.LatestDepart.Before(now) || l.Capacity < q.Passengers ||
				(q.Category != "" && l.AircraftCategory != q.Category) || !matches(l, from, to) {
				continue
			}
			out = append(out, l)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].EarliestDepart.Equal(out[j].EarliestDepart) {
			return out[i].EarliestDepart.Before(out[j].EarliestDepart)
		}
		return out[i].ID < out[j].ID
	})
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// CreateWatch stores a watch; the simulation has nobody to notify.
func (m *Market) CreateWatch(ctx context.Context, r market.WatchRequest) (*store.Watch, error) {
	if err := m.pause(ctx); err != nil {
		return nil, err
	}
	var w store.Watch
	err := m.st.Update(ctx, func(tx *store.Tx) error {
		n, err := tx.NextSeq(ctx, "watch", 6000000001)
		if err != nil {
			return err
		}
		name := r.Name
		if strings.TrimSpace(name) == "" {
			name = market.WatchName(r)
		}
		w = store.Watch{ID: fmt.Sprintf("awatch-%d", n), Name: name, From: r.From, To: r.To, AircraftCategory: r.Category,
			DaysOut: r.DaysOut, Active: true, CreatedAt: m.now()}
		return tx.SaveWatch(ctx, w)
	})
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// SyncWatches: the store is the simulation's only record of watches.
func (m *Market) SyncWatches(ctx context.Context) error { return m.pause(ctx) }

// DeleteWatch forgets a watch; one already gone is reported as nil.
func (m *Market) DeleteWatch(ctx context.Context, id string) (*store.Watch, bool, error) {
	if err := m.pause(ctx); err != nil {
		return nil, false, err
	}
	w, err := m.st.Watch(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	err = m.st.Update(ctx, func(tx *store.Tx) error { _, err := tx.DeleteWatch(ctx, id); return err })
	if err != nil {
		return nil, false, err
	}
	was := w.Active
	w.Active = false
	return w, was, nil
}
