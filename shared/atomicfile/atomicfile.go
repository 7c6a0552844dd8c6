// Package atomicfile replaces files so that a crash or a full disk leaves
// the old content or the new, never half of either: the data goes to a
// temporary file beside the target (mode 0600, synced), which is renamed
// over it, and the directory is synced so the rename itself is durable.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces the file at path with data, mode 0600. The directory must
// exist.
func Write(path string, data []byte) error {
	tmp, err := WriteTemp(path, data)
	if err != nil {
		return err
	}
	return Commit(tmp, path)
}

// WriteTemp writes data to a new temporary file beside path, named
// ".<base>.tmp-*" (a hidden name without path's extension, so nothing that
// lists the directory for path's kind of file picks it up), mode 0600 and
// synced, and returns its name. Commit it, or remove it to give up.
func WriteTemp(path string, data []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	_, werr := f.Write(data)
	if werr == nil {
		// CreateTemp makes the file 0600 already; say so explicitly.
		werr = f.Chmod(0o600)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(name)
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	return name, nil
}

// Commit renames tmp (from WriteTemp) over path and syncs the directory. On
// failure tmp is removed and path is as it was.
func Commit(tmp, path string) error {
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", filepath.Dir(path), err)
	}
	return nil
}
