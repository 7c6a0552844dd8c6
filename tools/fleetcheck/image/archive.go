// Package image inspects a built server image without running a container:
// it reads the image's archive (`podman save` / `docker save`, the
// docker-archive layout both write) — its configuration (user, entrypoint,
// environment, labels, ports) and its files — and checks them against what
// the fleet's images must be: a static binary that is the entrypoint and
// answers --version with the labelled version, a non-root user with its data
// directory, CA certificates, the shipped policy, and nothing else. Where a
// container can run, Exchange sends initialize through `<engine> run -i`;
// where the runtime refuses (as in sandboxes without the rlimits a runtime
// sets), the refusal is reported as such.
package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
)

// Config is the part of an image's configuration the checks read.
type Config struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		User         string              `json:"User"`
		Env          []string            `json:"Env"`
		Entrypoint   []string            `json:"Entrypoint"`
		Cmd          []string            `json:"Cmd"`
		WorkingDir   string              `json:"WorkingDir"`
		Labels       map[string]string   `json:"Labels"`
		ExposedPorts map[string]struct{} `json:"ExposedPorts"`
	} `json:"config"`
}

// EnvValue returns the value the image sets for a variable.
func (c *Config) EnvValue(name string) (string, bool) {
	for _, kv := range c.Config.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// File is one entry of the image's file system, after all layers.
type File struct {
	Path     string // absolute, cleaned
	Type     byte   // tar.TypeReg, tar.TypeDir, tar.TypeSymlink…
	Mode     int64
	UID, GID int
	Size     int64
	Link     string
	Data     []byte // regular files only
}

// Image is an image read from its archive.
type Image struct {
	Config Config
	Files  map[string]*File
	Size   int64 // bytes of the layers, uncompressed
}

// Paths lists the image's paths, sorted.
func (im *Image) Paths() []string {
	out := make([]string, 0, len(im.Files))
	for p := range im.Files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

type manifestEntry struct {
	Config string   `json:"Config"`
	Layers []string `json:"Layers"`
}

// ReadArchive reads an image saved in the docker-archive layout (manifest.json
// naming the config and the layers in order). Layers may be plain or gzip
// tars; whiteouts remove what earlier layers added.
func ReadArchive(file string) (*Image, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The archive's members are found by name, so read them into memory:
	// a server image is a few tens of megabytes.
	members := map[string][]byte{}
	links := map[string]string{}
	tr := tar.NewReader(bufio.NewReader(f))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("image archive %s: %w", file, err)
		}
		name := path.Clean(h.Name)
		switch h.Typeflag {
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("image archive %s: %s: %w", file, name, err)
			}
			members[name] = b
		case tar.TypeSymlink:
			links[name] = path.Clean(path.Join(path.Dir(name), h.Linkname))
		}
	}
	member := func(name string) ([]byte, error) {
		name = path.Clean(name)
		for i := 0; i < 8; i++ {
			if b, ok := members[name]; ok {
				return b, nil
			}
			target, ok := links[name]
			if !ok {
				break
			}
			name = target
		}
		return nil, fmt.Errorf("image archive %s: no member %s", file, name)
	}
	raw, err := member("manifest.json")
	if err != nil {
		return nil, err
	}
	var manifest []manifestEntry
	if err := json.Unmarshal(raw, &manifest); err != nil {
		return nil, fmt.Errorf("image archive %s: manifest.json: %w", file, err)
	}
	if len(manifest) != 1 {
		return nil, fmt.Errorf("image archive %s: %d images, want one", file, len(manifest))
	}
	im := &Image{Files: map[string]*File{}}
	cfg, err := member(manifest[0].Config)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(cfg, &im.Config); err != nil {
		return nil, fmt.Errorf("image archive %s: config: %w", file, err)
	}
	for _, l := range manifest[0].Layers {
		layer, err := member(l)
		if err != nil {
			return nil, err
		}
		if err := im.apply(layer); err != nil {
			return nil, fmt.Errorf("image archive %s: layer %s: %w", file, l, err)
		}
	}
	return im, nil
}

func (im *Image) apply(layer []byte) error {
	var r io.Reader = bytes.NewReader(layer)
	if len(layer) > 2 && layer[0] == 0x1f && layer[1] == 0x8b {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		defer gz.Close()
		r = gz
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p := path.Clean("/" + h.Name)
		dir, base := path.Split(p)
		if base == ".wh..wh..opq" { // opaque directory: drop what lower layers put in it
			prefix := path.Clean(dir) + "/"
			for k := range im.Files {
				if strings.HasPrefix(k, prefix) {
					delete(im.Files, k)
				}
			}
			continue
		}
		if strings.HasPrefix(base, ".wh.") {
			gone := path.Join(dir, strings.TrimPrefix(base, ".wh."))
			delete(im.Files, gone)
			for k := range im.Files {
				if strings.HasPrefix(k, gone+"/") {
					delete(im.Files, k)
				}
			}
			continue
		}
		f := &File{Path: p, Type: h.Typeflag, Mode: h.Mode, UID: h.Uid, GID: h.Gid, Size: h.Size, Link: h.Linkname}
		if h.Typeflag == tar.TypeReg {
			if f.Data, err = io.ReadAll(tr); err != nil {
				return err
			}
			im.Size += h.Size
		}
		im.Files[p] = f
	}
}
