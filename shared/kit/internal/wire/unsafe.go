package wire

import "unsafe"

// View views b as a string without copying; b must not change while the
// string is in use (jsontext.AppendString and StringLen only read it).
func View(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
