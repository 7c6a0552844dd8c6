package atomicfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/atomicfile"
)

func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tab.csv")
	for _, content := range []string{"first\n", "second, longer\n", ""} {
		if err := atomicfile.Write(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read back %q, %v; want %q", got, err, content)
		}
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", info.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestTempIsHiddenAndCommitted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "msg.eml")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp, err := atomicfile.WriteTemp(path, []byte("new"))
	if err != nil {
		t.Fatal(err)
	}
	if base := filepath.Base(tmp); !strings.HasPrefix(base, ".msg.eml.tmp-") || strings.HasSuffix(base, ".eml") || filepath.Dir(tmp) != dir {
		t.Errorf("temporary file %s: want a hidden name beside the target, without its extension", tmp)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("the target changed before Commit: %q", got)
	}
	if err := atomicfile.Commit(tmp, path); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new" {
		t.Errorf("after Commit: %q", got)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the temporary file is still there: %v", err)
	}
}

func TestFailuresLeaveNothing(t *testing.T) {
	dir := t.TempDir()
	if err := atomicfile.Write(filepath.Join(dir, "no", "such", "dir.csv"), []byte("x")); err == nil {
		t.Error("wrote into a directory that does not exist")
	}
	// A rename over a directory fails: the temporary file is removed and
	// the directory untouched.
	target := filepath.Join(dir, "occupied")
	if err := os.MkdirAll(filepath.Join(target, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(target, []byte("x")); err == nil {
		t.Error("replaced a non-empty directory")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "occupied" {
		t.Errorf("left behind: %v", entries)
	}
}
