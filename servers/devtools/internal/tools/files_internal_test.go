package tools

import (
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

// TestMaxByteCostBoundsCost: file_read skips counting content shorter than
// room/maxByteCost, so no byte may cost more.
func TestMaxByteCostBoundsCost(t *testing.T) {
	for b := 0; b < 256; b++ {
		if c := kit.Cost(string([]byte{byte(b)})); c > maxByteCost {
			t.Errorf("byte %#x costs %d, over %d", b, c, maxByteCost)
		}
	}
	for _, s := range []string{"é", "✓", "\U0001F600", "\u2028"} {
		if c := kit.Cost(s); c > maxByteCost*len(s) {
			t.Errorf("%q costs %d, over %d a byte", s, c, maxByteCost)
		}
	}
}
