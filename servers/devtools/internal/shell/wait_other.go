//go:build unix && !linux

package shell

// waitNoReap is not available here; the caller reaps first and kills the
// group afterwards.
func waitNoReap(int) bool { return false }
