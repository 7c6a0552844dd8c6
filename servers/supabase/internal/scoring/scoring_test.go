package scoring

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestWorkedExample checks the documented formulas by hand.
func TestWorkedExample(t *testing.T) {
	quotes := `[{"id": "a", "total_price_usd": 40000, "safety_rating": 4.5, "comfort_rating": 3, "flight_time_minutes": 150},
	            {"id": "b", "total_price_usd": "50000", "safety_rating": 5, "comfort_rating": 4.9, "flight_time_minutes": 120},
	            {"id": "c", "price": 80000, "safety_rating": 5.5, "flight_time_minutes": 0}]`
	got, err := Calculate(json.RawMessage(quotes), json.RawMessage(`{"max_budget": 70000}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	// a: price 100, safety 90, speed round(100*120/150)=80, comfort 60;
	//    total round((3000*100 + 3500*90 + 1500*80 + 2000*60) / 10000) = round(85.5) = 86
	// b: price 80, safety 100, speed 100, comfort 98; total round(24000+35000+15000+19600)/10000 = 94 (93.6)
	// c: over budget: price 0; safety clamped 100; speed 0 (0 minutes); comfort 0; total 35
	want := []Score{
		{QuoteID: "b", PriceScore: 80, SafetyScore: 100, SpeedScore: 100, ComfortScore: 98, TotalScore: 94, Rank: 1},
		{QuoteID: "a", PriceScore: 100, SafetyScore: 90, SpeedScore: 80, ComfortScore: 60, TotalScore: 86, Rank: 2},
		{QuoteID: "c", PriceScore: 0, SafetyScore: 100, SpeedScore: 0, ComfortScore: 0, TotalScore: 35, Rank: 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	// Ties: the cheaper quote first, then the smaller id.
	got, err = Calculate(json.RawMessage(`[{"id":"z","price":10},{"id":"y","price":10},{"id":"x"}]`), nil, json.RawMessage(`{"safety":1}`))
	if err != nil || got[0].QuoteID != "y" || got[1].QuoteID != "z" || got[2].QuoteID != "x" {
		t.Errorf("ties: %+v %v", got, err)
	}
	if _, err := Calculate(json.RawMessage(`5`), nil, nil); !IsArgError(err) {
		t.Errorf("not an array: %v", err)
	}
	if got, err := Calculate(json.RawMessage(`[]`), nil, nil); err != nil || len(got) != 0 {
		t.Errorf("empty: %v %v", got, err)
	}
}

// TestSafetyCertifications checks that safety_rating may name a
// certification, matched loosely, with the documented ratings, and that an
// unknown name is an argument error naming the field and the accepted names.
func TestSafetyCertifications(t *testing.T) {
	for in, want := range map[string]int64{
		`"ARGUS Platinum"`: 100, `"Wyvern Wingman"`: 100, `"IS-BAO Stage 3"`: 100, `"wyvern-wingman"`: 100,
		`"ARGUS Gold+"`: 90, `"argus gold plus"`: 90, `"Argus-Gold +"`: 90, `"IS-BAO Stage 2"`: 90, `"isbao stage 2"`: 90,
		`"ARGUS Gold"`: 80, `" argus  GOLD "`: 80, `"IS-BAO Stage 1"`: 80, `"IS-BAO"`: 80, `"ISBAO"`: 80, `"is_bao"`: 80,
		`"ARGUS Silver"`: 70,
		// Numbers and numeric strings as before.
		`4.5`: 90, `"4.5"`: 90, `" 3 "`: 60, `"+.5e1"`: 100, `null`: 0,
	} {
		got, err := Calculate(json.RawMessage(`[{"id":"a","safety_rating":`+in+`}]`), nil, json.RawMessage(`{"safety":1}`))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got[0].SafetyScore != want || got[0].TotalScore != want {
			t.Errorf("%s: safety %d total %d, want %d", in, got[0].SafetyScore, got[0].TotalScore, want)
		}
	}
	for _, c := range Certifications() {
		if _, err := Calculate(json.RawMessage(`[{"id":"a","safety_rating":"`+c.Name+`"}]`), nil, nil); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	for _, in := range []string{`"ARGUS Bronze"`, `"Wyvern"`, `""`, `"NaN"`, `"1/2"`, `"ARGUS Gold++"`, `true`, `{"a":1}`} {
		_, err := Calculate(json.RawMessage(`[{"id":"a"},{"id":"b","safety_rating":`+in+`}]`), nil, nil)
		if !IsArgError(err) || !strings.HasPrefix(err.Error(), "quotes[1].safety_rating") {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if in[0] == '"' && !strings.Contains(err.Error(), AcceptedCertifications()) {
			t.Errorf("%s: the error does not list the accepted names: %v", in, err)
		}
	}
}
