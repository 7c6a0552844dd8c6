//go:build !linux

package engine

// growPipe leaves pipes as they are where their size cannot be set.
func growPipe(any) {}
