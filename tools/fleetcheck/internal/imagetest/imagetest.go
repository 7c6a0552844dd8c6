// Package imagetest writes server image archives for the image checks'
// tests, in the docker-archive layout `podman save` writes, and stands in
// for a container engine's command line.
package imagetest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/image"
)

// Entry is one member of a tar archive.
type Entry struct {
	Path     string
	Type     byte
	Mode     int64
	UID, GID int
	Data     []byte
	Link     string
}

// Tar writes entries as a tar archive.
func Tar(t testing.TB, entries []Entry) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		h := &tar.Header{Name: e.Path, Typeflag: e.Type, Mode: e.Mode, Uid: e.UID, Gid: e.GID, Size: int64(len(e.Data)), Linkname: e.Link}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// CABundle is a PEM file of n (dummy) certificates.
func CABundle(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n")
	}
	return b.Bytes()
}

// ServerImage is a server image as the Dockerfile builds it, for this
// machine's platform, holding bin as w.Program: the configuration and two
// layers (the runtime files, then the binary). The first layer also holds
// files the second removes with whiteouts, as layered images do.
func ServerImage(bin []byte, w image.Want) (image.Config, [][]Entry) {
	var c image.Config
	c.OS, c.Architecture = runtime.GOOS, runtime.GOARCH
	c.Config.User = "65532:65532"
	c.Config.Env = []string{"PATH=/usr/bin", "MCP_DATA_DIR=/data", "MCP_HOST=0.0.0.0"}
	c.Config.Entrypoint = []string{"/usr/local/bin/" + w.Program}
	c.Config.WorkingDir = "/data"
	c.Config.Labels = map[string]string{"org.opencontainers.image.version": w.Version, "org.opencontainers.image.revision": w.Commit,
		"org.opencontainers.image.title": w.Program}
	c.Config.ExposedPorts = map[string]struct{}{"3005/tcp": {}}
	base := []Entry{
		{Path: "etc/", Type: tar.TypeDir, Mode: 0o755},
		{Path: "etc/passwd", Type: tar.TypeReg, Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\nmcp:x:65532:65532::/data:/sbin/nologin\n")},
		{Path: "etc/group", Type: tar.TypeReg, Mode: 0o644, Data: []byte("root:x:0:\nmcp:x:65532:\n")},
		{Path: "etc/ssl/", Type: tar.TypeDir, Mode: 0o755},
		{Path: "etc/ssl/certs/", Type: tar.TypeDir, Mode: 0o755},
		{Path: "etc/ssl/certs/ca-certificates.crt", Type: tar.TypeReg, Mode: 0o644, Data: CABundle(12)},
		{Path: "data/", Type: tar.TypeDir, Mode: 0o755, UID: 65532, GID: 65532},
		{Path: "etc/mcp-fleet/", Type: tar.TypeDir, Mode: 0o755},
		{Path: "etc/mcp-fleet/acl.yaml", Type: tar.TypeReg, Mode: 0o644, Data: w.Policy},
		{Path: "etc/leftover", Type: tar.TypeReg, Mode: 0o644, Data: []byte("removed by the next layer")},
		{Path: "var/", Type: tar.TypeDir, Mode: 0o755},
		{Path: "var/a", Type: tar.TypeReg, Mode: 0o644, Data: []byte("removed with its directory")},
		{Path: "tmp/", Type: tar.TypeDir, Mode: 0o755, UID: 65532, GID: 65532},
	}
	top := []Entry{
		{Path: "etc/.wh.leftover", Type: tar.TypeReg},
		{Path: "var/.wh..wh..opq", Type: tar.TypeReg},
		{Path: ".wh.var", Type: tar.TypeReg},
	}
	if w.Workspace {
		c.Config.Env = append(c.Config.Env, "DEVTOOLS_ROOTS=/workspace")
		c.Config.WorkingDir = "/workspace"
		top = append(top, Entry{Path: "workspace/", Type: tar.TypeDir, Mode: 0o755, UID: 65532, GID: 65532})
	}
	top = append(top,
		Entry{Path: "usr/", Type: tar.TypeDir, Mode: 0o755},
		Entry{Path: "usr/local/", Type: tar.TypeDir, Mode: 0o755},
		Entry{Path: "usr/local/bin/", Type: tar.TypeDir, Mode: 0o755},
		Entry{Path: "usr/local/bin/" + w.Program, Type: tar.TypeReg, Mode: 0o755, Data: bin})
	return c, [][]Entry{base, top}
}

// WriteArchive writes an image archive into a new temporary file: each
// layer under a blob name and reached through a symlink, the first layer
// gzipped, as archives from different engines come.
func WriteArchive(t testing.TB, c image.Config, layers [][]Entry) string {
	t.Helper()
	cfg, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var members []Entry
	var names []string
	for i, l := range layers {
		data := Tar(t, l)
		if i == 0 {
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			if _, err := zw.Write(data); err != nil {
				t.Fatal(err)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			data = gz.Bytes()
		}
		blob := fmt.Sprintf("blob%d.tar", i)
		members = append(members,
			Entry{Path: blob, Type: tar.TypeReg, Mode: 0o444, Data: data},
			Entry{Path: fmt.Sprintf("l%d/layer.tar", i), Type: tar.TypeSymlink, Link: "../" + blob})
		names = append(names, fmt.Sprintf("l%d/layer.tar", i))
	}
	manifest, err := json.Marshal([]map[string]any{{"Config": "config.json", "Layers": names}})
	if err != nil {
		t.Fatal(err)
	}
	members = append(members, Entry{Path: "config.json", Type: tar.TypeReg, Mode: 0o444, Data: cfg},
		Entry{Path: "manifest.json", Type: tar.TypeReg, Mode: 0o444, Data: manifest})
	path := filepath.Join(t.TempDir(), "image.tar")
	if err := os.WriteFile(path, Tar(t, members), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// FakeEngine writes a stand-in for the podman command line, named podman,
// that runs script (sh) for every invocation.
func FakeEngine(t testing.TB, script string) image.Engine {
	t.Helper()
	p := filepath.Join(t.TempDir(), "podman")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return image.Engine{Bin: p}
}
