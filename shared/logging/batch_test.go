package logging

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

type slowBuf struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (s *slowBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.buf.Write(p)
}

func TestBatchWriterKeepsEveryLineInOrder(t *testing.T) {
	var out slowBuf
	b := NewBatchWriter(&out)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := 0; i < 1000; i++ {
				fmt.Fprintf(b, "g%d line %d\n", g, i)
			}
		})
	}
	wg.Wait()
	b.Flush()
	lines := strings.Split(strings.TrimSpace(out.buf.String()), "\n")
	if len(lines) != 8000 {
		t.Fatalf("%d lines, want 8000", len(lines))
	}
	last := map[string]int{}
	for _, l := range lines {
		var g string
		var i int
		if _, err := fmt.Sscanf(l, "%s line %d", &g, &i); err != nil {
			t.Fatalf("torn line %q", l)
		}
		if prev, ok := last[g]; ok && i != prev+1 {
			t.Fatalf("%s: line %d after %d", g, i, prev)
		}
		last[g] = i
	}
	if out.writes >= 8000 {
		t.Logf("no batching happened (%d writes); fine on an idle machine", out.writes)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(b, "after close")
	if !strings.HasSuffix(out.buf.String(), "after close\n") {
		t.Fatal("a write after Close was lost")
	}
}
