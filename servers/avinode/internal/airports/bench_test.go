package airports

import (
	"runtime"
	"testing"
)

// BenchmarkFirstUse is the cost of the first call into the package: checking and indexing the
// embedded table, then one lookup. heap-B is what the index keeps alive afterwards.
func BenchmarkFirstUse(b *testing.B) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := &table{src: embedded}
	kept.count()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tb := &table{src: embedded}
		if _, ok := tb.lookup("KTEB"); !ok {
			b.Fatal("KTEB not found")
		}
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc), "heap-B")
}

func BenchmarkLookup(b *testing.B) {
	std.get()
	for _, code := range []string{"KTEB", "lhr", "ZZZZ"} {
		b.Run(code, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Lookup(code)
			}
		})
	}
}

func BenchmarkSearch(b *testing.B) {
	std.get()
	for _, c := range []struct{ name, query string }{
		{"code", "LHR"},
		{"prefix", "london"},
		{"word", "bourget"},
		{"accents", "Zürich"},
		{"words", "geneva airport"},
		{"substring", "ondon"},
		{"one-letter", "a"},
		{"no-match", "qqqqqq"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Search(c.query, DefaultLimit)
			}
		})
	}
}

func BenchmarkDistance(b *testing.B) {
	a, _ := Lookup("KTEB")
	c, _ := Lookup("EGGW")
	for b.Loop() {
		Distance(a, c)
	}
}
