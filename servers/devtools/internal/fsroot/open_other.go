//go:build !unix

package fsroot

import (
	"io/fs"
	"os"
)

// openNoBlock has no equivalent outside Unix; the type check before opening
// is all there is.
const openNoBlock = 0

func rootDir(*os.Root) (*os.File, int) { return nil, -1 }

// openDirect is Unix only; elsewhere every open goes through os.Root.
func openDirect(*root, string) (handle, fs.FileInfo, bool) { return nil, nil, false }
