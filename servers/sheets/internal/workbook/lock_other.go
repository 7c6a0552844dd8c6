//go:build !unix

package workbook

import "os"

// Without flock, only this process's writers are serialised.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) {}
