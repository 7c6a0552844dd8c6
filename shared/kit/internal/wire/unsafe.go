package wire

import "unsafe"

// unsafeString views b as a string without copying; b must not change while
// the string is in use (AppendString only reads it).
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
