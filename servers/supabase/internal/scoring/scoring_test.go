package scoring

import (
	"encoding/json"
	"reflect"
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
