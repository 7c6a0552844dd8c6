package mcptest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestBuffer: writes from many goroutines all land, whole, while String is
// read (run with -race).
func TestBuffer(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				fmt.Fprintf(&b, "%d-%d\n", i, j)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"); len(lines) != 8*50 {
		t.Fatalf("%d lines, want %d", len(lines), 8*50)
	}
	if !strings.Contains(b.String(), "\n7-49\n") && !strings.HasPrefix(b.String(), "7-49\n") {
		t.Errorf("a write is missing: %q", b.String())
	}
}
