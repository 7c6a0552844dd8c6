package mock

import (
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/airports"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
)

// hashOf is a stable 64-bit hash of its parts: every "random" choice of the
// simulation derives from one, so the same inputs give the same marketplace.
func hashOf(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	// fnv's low bits mix poorly for short inputs; finish with a
	// splitmix64 round.
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// leg is a segment with its airports resolved.
type leg struct {
	from, to airports.Airport
	nm       float64
	seg      store.Segment
}

func resolveLegs(segs []store.Segment) ([]leg, error) {
	out := make([]leg, 0, len(segs))
	for i, s := range segs {
		from, ok1 := airports.Lookup(s.From)
		to, ok2 := airports.Lookup(s.To)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("segment %d: airport %s or %s is not in the table", i, s.From, s.To)
		}
		_, nm := airports.Distance(from, to)
		out = append(out, leg{from: from, to: to, nm: nm, seg: s})
	}
	return out, nil
}

func distNM(a, b airports.Airport) float64 {
	_, nm := airports.Distance(a, b)
	return nm
}

// offer is one operator's best aircraft for a trip and what it would cost.
type offer struct {
	op        operator
	ac        aircraft
	base      airports.Airport
	position  float64 // nautical miles to the first departure
	occupied  float64 // hours with passengers
	ferry     float64 // positioning hours
	price     priced
	stopsUsed int
}

// hoursFor is block time for a distance: cruise plus climb, descent and
// taxi, plus 45 minutes per fuel stop.
func hoursFor(nm float64, t aircraftType) (hours float64, stops int) {
	if nm <= 0 {
		return 0, 0
	}
	stops = int(math.Ceil(nm/(t.RangeNM*0.9))) - 1
	return nm/t.SpeedKts + 0.35 + 0.75*float64(stops), stops
}

// quoteFor prices one aircraft of op for the legs; ok is false when it
// cannot fly them (seats, category, more than two fuel stops on a leg).
func quoteFor(op operator, ac aircraft, legs []leg, category string) (offer, bool) {
	maxPax := 0
	for _, l := range legs {
		maxPax = max(maxPax, l.seg.Passengers)
	}
	if ac.Capacity < maxPax || (category != "" && ac.Category != category) {
		return offer{}, false
	}
	base, ok := airports.Lookup(op.Base)
	if !ok {
		return offer{}, false
	}
	o := offer{op: op, ac: ac, base: base, position: distNM(base, legs[0].from)}
	at := base
	for _, l := range legs {
		if p := distNM(at, l.from); p > 1 {
			h, stops := hoursFor(p, ac.aircraftType)
			if stops > 2 {
				return offer{}, false
			}
			o.ferry += h
		}
		h, stops := hoursFor(l.nm, ac.aircraftType)
		if stops > 2 {
			return offer{}, false
		}
		o.stopsUsed += stops
		o.occupied += h
		at = l.to
	}
	if back := distNM(at, base); back > 1 {
		h, stops := hoursFor(back, ac.aircraftType)
		if stops > 2 {
			return offer{}, false
		}
		o.ferry += h
	}
	o.price = priceOf(op, ac, legs, o.occupied, o.ferry)
	return o, true
}

// priced is a quote's money, in the operator's currency.
type priced struct {
	currency        string
	base, taxesFees store.Money
	lines           []store.PriceLine
}

func (p priced) total() store.Money { return p.base + p.taxesFees }

// priceOf builds a quote: flight and positioning hours at the aircraft's
// rate (varied a few percent by operator), landing and handling per leg,
// catering, crew nights away, and US taxes where a leg touches the US.
func priceOf(op operator, ac aircraft, legs []leg, occupied, ferry float64) priced {
	rate := usdRate[op.Currency]
	factor := 0.92 + 0.18*unit(hashOf(op.ID, ac.Tail, "rate"))
	hourly := ac.HourlyUSD * factor
	money := func(usd float64) store.Money { return store.Money(math.Round(usd*rate) * 100) }
	round100 := func(usd float64) store.Money { return store.Money(math.Round(usd*rate/100) * 100 * 100) }
	sym := op.Currency
	p := priced{currency: op.Currency}
	add := func(label, kind string, m store.Money) {
		if m <= 0 {
			return
		}
		p.lines = append(p.lines, store.PriceLine{Label: label, Kind: kind, Amount: m})
		if kind == "flight" || kind == "positioning" {
			p.base += m
		} else {
			p.taxesFees += m
		}
	}
	flight := round100(occupied * hourly)
	add(fmt.Sprintf("Flight time %.1f h at %s %.0f/h", occupied, sym, hourly*rate), "flight", flight)
	add(fmt.Sprintf("Positioning %.1f h", ferry), "positioning", round100(ferry*hourly))

	handling := map[string]float64{"light": 600, "midsize": 900, "heavy": 1800, "ultra-long-range": 2400}[ac.Category]
	pax := 0
	usDomestic, usIntl := 0.0, 0.0
	for _, l := range legs {
		pax += l.seg.Passengers
		fromUS, toUS := area(l.from.Country) == "US", area(l.to.Country) == "US"
		switch {
		case fromUS && toUS:
			h, _ := hoursFor(l.nm, ac.aircraftType)
			usDomestic += h
		case fromUS || toUS:
			usIntl += float64(l.seg.Passengers)
		}
	}
	add(fmt.Sprintf("Landing and handling, %d legs", len(legs)), "fee", money(handling*float64(len(legs))))
	add(fmt.Sprintf("Catering, %d passenger legs", pax), "fee", money(85*float64(pax)))
	nights := nightsAway(legs)
	crew := 1200.0
	if ac.Category == "heavy" || ac.Category == "ultra-long-range" {
		crew = 2000
	}
	add(fmt.Sprintf("Crew expenses, %d nights away", nights), "fee", money(crew*float64(nights)))
	if usDomestic > 0 {
		// The excise tax is on the domestic part of the flight charge.
		share := usDomestic / occupied
		add("US federal excise tax 7.5%", "tax", money(0.075*share*occupied*hourly))
		domesticPax := 0
		for _, l := range legs {
			if area(l.from.Country) == "US" && area(l.to.Country) == "US" {
				domesticPax += l.seg.Passengers
			}
		}
		add("US domestic segment fees", "tax", money(5.20*float64(domesticPax)))
	}
	if usIntl > 0 {
		add("US international arrival and departure taxes", "tax", money(22.90*usIntl))
	}
	return p
}

// nightsAway counts the calendar days between the first and the last
// departure: the crew stays with the aircraft.
func nightsAway(legs []leg) int {
	first := legs[0].seg.Departure.UTC().Truncate(24 * time.Hour)
	last := legs[len(legs)-1].seg.Departure.UTC().Truncate(24 * time.Hour)
	return int(last.Sub(first).Hours() / 24)
}

// candidates returns the operators to ask for a trip, nearest first: each
// operator's best suitable aircraft (nonstop first, then cheapest), from the
// operators within 1 800 nm of the first departure, topped up with the next
// nearest when fewer than three are that close; at most n.
func candidates(legs []leg, category string, n int) []offer {
	usd := func(o offer) float64 { return o.price.total().Float() / usdRate[o.op.Currency] }
	var all []offer
	for _, op := range operators {
		var best *offer
		for _, ac := range op.Fleet {
			o, ok := quoteFor(op, ac, legs, category)
			// A nonstop aircraft beats one that needs fuel stops; then
			// the cheaper one.
			if ok && (best == nil || o.stopsUsed < best.stopsUsed || (o.stopsUsed == best.stopsUsed && usd(o) < usd(*best))) {
				best = &o
			}
		}
		if best != nil {
			all = append(all, *best)
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].position != all[j].position {
			return all[i].position < all[j].position
		}
		return all[i].op.ID < all[j].op.ID
	})
	var out []offer
	for _, o := range all {
		if len(out) < n && (o.position <= 1800 || len(out) < min(n, 3)) {
			out = append(out, o)
		}
	}
	return out
}

// cabotage reports whether op may not fly one of the legs: a leg within one
// country (or common aviation area) other than the operator's own.
func cabotage(op operator, legs []leg) bool {
	home := area(op.Country)
	for _, l := range legs {
		a := area(l.from.Country)
		if a == area(l.to.Country) && a != home {
			return true
		}
	}
	return false
}
