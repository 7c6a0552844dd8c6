// Package scoring ranks charter quotes: calculate_quote_scores, the same
// function the PostgreSQL schema defines in SQL, so the embedded database
// gives the same scores.
//
// Every score is a whole number from 0 to 100, computed with exact decimal
// and integer arithmetic (never floating point), so both implementations
// agree to the last digit:
//
//   - price: the cheapest quote scores 100, another round(100 × cheapest ÷
//     price); prices are compared in cents (round(price × 100)). A quote
//     above client_preferences.max_budget, or without a positive price,
//     scores 0. The price is total_price_usd, else price_usd, else price.
//   - safety and comfort: round(rating × 20) of safety_rating and
//     comfort_rating on a 0–5 scale, clamped to 0–100; missing: 0.
//     safety_rating may instead name the operator's safety certification
//     (Certifications: ARGUS Platinum, Wyvern Wingman and IS-BAO Stage 3
//     5.0; ARGUS Gold+ and IS-BAO Stage 2 4.5; ARGUS Gold, IS-BAO Stage 1
//     and IS-BAO 4.0; ARGUS Silver 3.5), matched ignoring case, spaces and
//     punctuation, "+" read as "plus"; an unknown one is an error.
//   - speed: the shortest flight_time_minutes scores 100, another
//     round(100 × shortest ÷ minutes); missing or not positive: 0.
//   - total: the weighted mean round(Σ wᵢ × scoreᵢ ÷ Σ wᵢ), weights in
//     ten-thousandths (round(w × 10000)); default price 0.30, safety 0.35,
//     speed 0.15, comfort 0.20.
//   - rank: 1 for the highest total; ties go to the cheaper quote, then to
//     the smaller quote id (byte order).
//
// round is half away from zero. A quote's id is quote_id, else id.
package scoring

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// Score is one quote's result.
type Score struct {
	QuoteID      string `json:"quote_id"`
	PriceScore   int64  `json:"price_score"`
	SafetyScore  int64  `json:"safety_score"`
	SpeedScore   int64  `json:"speed_score"`
	ComfortScore int64  `json:"comfort_score"`
	TotalScore   int64  `json:"total_score"`
	Rank         int64  `json:"rank"`
}

// DefaultWeights is the weights object used when none is given.
const DefaultWeights = `{"price": 0.30, "safety": 0.35, "speed": 0.15, "comfort": 0.20}`

// Error is a bad argument; its message says which.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func bad(format string, a ...any) error { return &Error{Msg: fmt.Sprintf(format, a...)} }

// number reads a JSON number or numeric string exactly; ok is false for a
// missing value or null.
func number(field string, raw json.RawMessage) (*big.Rat, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, nil
	}
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, false, bad("%s is not valid JSON", field)
		}
		text = strings.TrimSpace(text)
	} else if raw[0] == '{' || raw[0] == '[' || raw[0] == 't' || raw[0] == 'f' {
		return nil, false, bad("%s must be a number", field)
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return nil, false, bad("%s must be a number, got %s", field, text)
	}
	return r, true, nil
}

// round is half away from zero, as PostgreSQL's round(numeric).
func round(r *big.Rat) (int64, error) {
	half := big.NewRat(1, 2)
	x := new(big.Rat).Abs(r)
	x.Add(x, half)
	q := new(big.Int).Quo(x.Num(), x.Denom())
	if r.Sign() < 0 {
		q.Neg(q)
	}
	if !q.IsInt64() {
		return 0, bad("a number is too large")
	}
	return q.Int64(), nil
}

func mulRound(r *big.Rat, by int64) (int64, error) {
	return round(new(big.Rat).Mul(r, new(big.Rat).SetInt64(by)))
}

func clamp(n int64) int64 { return max(0, min(100, n)) }

// ratio is round(100 × best ÷ v) for positive integers.
func ratio(best, v int64) int64 { return (200*best + v) / (2 * v) }

type quote struct {
	id                  string
	cents, minutes      int64 // 0: missing
	safety, comfort     int64
	price, speed, total int64
}

func field(obj map[string]json.RawMessage, names ...string) json.RawMessage {
	for _, n := range names {
		if v, ok := obj[n]; ok && string(bytes.TrimSpace(v)) != "null" {
			return v
		}
	}
	return nil
}

// Calculate scores quotes (a JSON array of objects) with the client's
// preferences (an object, may be empty) and weights (an object with price,
// safety, speed and comfort; nil means DefaultWeights). The scores come
// ranked, best first.
func Calculate(quotes, preferences, weights json.RawMessage) ([]Score, error) {
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(quotes, &list); err != nil || bytes.TrimSpace(quotes)[0] != '[' {
		return nil, bad("quotes must be a JSON array of quote objects")
	}
	prefs := map[string]json.RawMessage{}
	if p := bytes.TrimSpace(preferences); len(p) > 0 && string(p) != "null" {
		if err := json.Unmarshal(p, &prefs); err != nil || p[0] != '{' {
			return nil, bad("client_preferences must be a JSON object")
		}
	}
	if w := bytes.TrimSpace(weights); len(w) == 0 || string(w) == "null" {
		weights = json.RawMessage(DefaultWeights)
	}
	var wobj map[string]json.RawMessage
	if err := json.Unmarshal(weights, &wobj); err != nil || bytes.TrimSpace(weights)[0] != '{' {
		return nil, bad("weights must be a JSON object with price, safety, speed and comfort")
	}
	names := []string{"price", "safety", "speed", "comfort"}
	for k := range wobj {
		if k != "price" && k != "safety" && k != "speed" && k != "comfort" {
			return nil, bad("weights: unknown key %q (expected price, safety, speed, comfort)", k)
		}
	}
	var bp [4]int64
	var sum int64
	for i, n := range names {
		w, ok, err := number("weights."+n, wobj[n])
		if err != nil {
			return nil, err
		}
		if ok {
			if w.Sign() < 0 {
				return nil, bad("weights.%s must not be negative", n)
			}
			if bp[i], err = mulRound(w, 10000); err != nil || bp[i] > 1000000000000 {
				return nil, bad("a number is too large")
			}
		}
		sum += bp[i]
	}
	if sum <= 0 {
		return nil, bad("weights must not all be zero")
	}
	budget, hasBudget, err := number("client_preferences.max_budget", prefs["max_budget"])
	if err != nil {
		return nil, err
	}
	qs := make([]*quote, len(list))
	var minCents, minMinutes int64
	for i, obj := range list {
		if obj == nil {
			return nil, bad("quotes[%d] must be an object", i)
		}
		q := &quote{}
		idRaw := field(obj, "quote_id", "id")
		if idRaw == nil {
			return nil, bad("quotes[%d] needs an id or quote_id", i)
		}
		if idRaw[0] == '"' {
			_ = json.Unmarshal(idRaw, &q.id)
		} else {
			q.id = string(bytes.TrimSpace(idRaw))
		}
		where := fmt.Sprintf("quotes[%d]", i)
		price, ok, err := number(where+".total_price_usd", field(obj, "total_price_usd", "price_usd", "price"))
		if err != nil {
			return nil, err
		}
		if ok && new(big.Rat).Abs(price).Cmp(big.NewRat(10000000000000, 1)) > 0 {
			return nil, bad("a number is too large")
		}
		if ok && price.Sign() > 0 && (!hasBudget || price.Cmp(budget) <= 0) {
			if q.cents, err = mulRound(price, 100); err != nil {
				return nil, err
			}
		}
		if ok && price.Sign() > 0 && q.cents > 0 && (minCents == 0 || q.cents < minCents) {
			minCents = q.cents
		}
		mins, ok, err := number(where+".flight_time_minutes", field(obj, "flight_time_minutes"))
		if err != nil {
			return nil, err
		}
		if ok {
			if new(big.Rat).Abs(mins).Cmp(big.NewRat(1000000000000000, 1)) > 0 {
				return nil, bad("a number is too large")
			}
			if q.minutes, err = round(mins); err != nil {
				return nil, err
			}
			if q.minutes <= 0 {
				q.minutes = 0
			} else if minMinutes == 0 || q.minutes < minMinutes {
				minMinutes = q.minutes
			}
		}
		for _, r := range []struct {
			name string
			dst  *int64
		}{{"safety_rating", &q.safety}, {"comfort_rating", &q.comfort}} {
			var v *big.Rat
			var ok bool
			var err error
			if r.name == "safety_rating" {
				v, ok, err = safetyRating(where, field(obj, r.name))
			} else {
				v, ok, err = number(where+"."+r.name, field(obj, r.name))
			}
			if err != nil {
				return nil, err
			}
			if ok {
				n, err := mulRound(v, 20)
				if err != nil {
					return nil, err
				}
				*r.dst = clamp(n)
			}
		}
		qs[i] = q
	}
	for _, q := range qs {
		if q.cents > 0 {
			q.price = ratio(minCents, q.cents)
		}
		if q.minutes > 0 {
			q.speed = ratio(minMinutes, q.minutes)
		}
		weighted := bp[0]*q.price + bp[1]*q.safety + bp[2]*q.speed + bp[3]*q.comfort
		q.total = (2*weighted + sum) / (2 * sum)
	}
	sort.SliceStable(qs, func(i, j int) bool {
		a, b := qs[i], qs[j]
		if a.total != b.total {
			return a.total > b.total
		}
		if (a.cents > 0) != (b.cents > 0) {
			return a.cents > 0
		}
		if a.cents != b.cents {
			return a.cents < b.cents
		}
		return a.id < b.id
	})
	out := make([]Score, len(qs))
	for i, q := range qs {
		out[i] = Score{QuoteID: q.id, PriceScore: q.price, SafetyScore: q.safety, SpeedScore: q.speed,
			ComfortScore: q.comfort, TotalScore: q.total, Rank: int64(i + 1)}
	}
	return out, nil
}

// IsArgError reports an error caused by the arguments.
func IsArgError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
