package mcptest

import (
	"encoding/json"
	"testing"
	"time"
)

func TestPGReferenceCall(t *testing.T) {
	var got struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(PGReferenceCall(`SELECT "a" FROM t WHERE b = 'x'`)), &got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "query" || got.Arguments["sql"] != `SELECT "a" FROM t WHERE b = 'x'` || len(got.Arguments) != 1 {
		t.Errorf("params %+v", got)
	}
}

func TestVersusReferenceReportsTheRatio(t *testing.T) {
	var ours, ref int
	res := testing.Benchmark(func(b *testing.B) {
		VersusReference(b,
			func() []byte { ours++; return []byte(`{"result":{}}`) },
			func() []byte { ref++; time.Sleep(time.Millisecond); return []byte(`{"result":{}}`) })
	})
	if ours != ref || ours < 51 {
		t.Errorf("calls: ours %d, reference %d; want the same, warm-up included", ours, ref)
	}
	r := res.Extra["×ref-p50"]
	if r >= 0.5 {
		t.Errorf("ratio %v, want well under 1 for a call that does nothing against one that sleeps", r)
	}
	if res.Extra["ref-p50-µs"] < 1000 {
		t.Errorf("p50s %v", res.Extra)
	}
}
