package oauth

import (
	"fmt"
	"testing"
)

// TestLimitersBounded: the per-client limiters never exceed their bound,
// the least recently used client is the one forgotten, and a client's
// burst is its own.
func TestLimitersBounded(t *testing.T) {
	l := newLimiters(3, 0, 2)
	for i := range 10 {
		l.allow(fmt.Sprint(i))
	}
	if l.order.Len() != 3 || len(l.byKey) != 3 {
		t.Fatalf("%d limiters (%d keys), want 3", l.order.Len(), len(l.byKey))
	}
	l.allow("7")  // 7 becomes the most recent: 8 is the oldest now
	l.allow("10") // evicts 8
	if _, ok := l.byKey["8"]; ok {
		t.Fatal("the least recently used client was kept")
	}
	if _, ok := l.byKey["7"]; !ok {
		t.Fatal("a recently used client was forgotten")
	}
	// Rate 0, burst 2: "7" has used both its calls, "a" has its own two.
	if l.allow("7") || !l.allow("a") || !l.allow("a") || l.allow("a") {
		t.Fatal("a client's burst is not its own")
	}
}
