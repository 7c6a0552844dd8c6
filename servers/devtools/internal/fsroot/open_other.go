//go:build !unix

package fsroot

// openNoBlock has no equivalent outside Unix; the type check before opening
// is all there is.
const openNoBlock = 0
