// Package bytesize renders byte counts for tool descriptions and error
// messages the way operators set them: "10 MiB", "64 KiB", "1000 bytes".
package bytesize

import "fmt"

// Format renders n in MiB or KiB when it is a whole number of them, else in
// bytes, so a stated cap reads exactly as configured.
func Format(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
