package image

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/pem"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/shared/acl"
)

// Paths inside every server image (the Dockerfile's runtime stage).
const (
	BinDir    = "/usr/local/bin"
	DataDir   = "/data"
	TempDir   = "/tmp"
	Workspace = "/workspace"
	Policy    = "/etc/mcp-fleet/acl.yaml"
	CABundle  = "/etc/ssl/certs/ca-certificates.crt"
)

// MaxExtraBytes bounds what an image holds besides its binary: the
// certificates, the policy and the user files.
const MaxExtraBytes = 1 << 20

// Want is what one server's image must be.
type Want struct {
	Program   string // avinode-mcp
	Version   string // the org.opencontainers.image.version label and --version
	Commit    string // the org.opencontainers.image.revision label
	Policy    []byte // configs/acl.yaml as shipped
	Workspace bool   // devtools: /workspace is its root and working directory
}

// Report is what a check found: what held, what did not, and what could
// not be checked here (and why).
type Report struct {
	Checked  []string
	Problems []string
	NotRun   []string
}

func (r *Report) ok(format string, args ...any) {
	r.Checked = append(r.Checked, fmt.Sprintf(format, args...))
}
func (r *Report) fail(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

func (r *Report) notRun(format string, args ...any) {
	r.NotRun = append(r.NotRun, fmt.Sprintf(format, args...))
}

// Merge appends another report's findings.
func (r *Report) Merge(o Report) {
	r.Checked = append(r.Checked, o.Checked...)
	r.Problems = append(r.Problems, o.Problems...)
	r.NotRun = append(r.NotRun, o.NotRun...)
}

// Check holds an image's configuration and files to w.
func Check(im *Image, w Want) Report {
	var r Report
	c := &im.Config.Config
	entry := path.Join(BinDir, w.Program)

	uid, gid, err := numericUser(c.User)
	switch {
	case err != nil:
		r.fail("user %q: %v", c.User, err)
	case uid == 0:
		r.fail("user %q is root", c.User)
	default:
		if name, ok := passwdName(im, uid, gid); ok {
			r.ok("runs as %s (%d:%d), not root", name, uid, gid)
		} else {
			r.fail("user %d:%d has no /etc/passwd line with that group", uid, gid)
		}
	}

	if len(c.Entrypoint) != 1 || c.Entrypoint[0] != entry {
		r.fail("entrypoint %q, want [%q]", c.Entrypoint, entry)
	} else {
		r.ok("entrypoint %s", entry)
	}
	if len(c.Cmd) != 0 {
		r.fail("command %q: the default must be the stdio server (no arguments)", c.Cmd)
	}
	if v, set := im.Config.EnvValue("MCP_TRANSPORT"); set && v != "stdio" {
		r.fail("MCP_TRANSPORT=%s: the default must be stdio", v)
	}

	r.binary(im, entry, w)

	if got := c.Labels["org.opencontainers.image.version"]; got != w.Version {
		r.fail("label org.opencontainers.image.version %q, want %q", got, w.Version)
	} else {
		r.ok("label version %s", got)
	}
	if got := c.Labels["org.opencontainers.image.revision"]; got != w.Commit {
		r.fail("label org.opencontainers.image.revision %q, want %q", got, w.Commit)
	}
	if got := c.Labels["org.opencontainers.image.title"]; got != w.Program {
		r.fail("label org.opencontainers.image.title %q, want %q", got, w.Program)
	}

	r.certificates(im)
	r.dir(im, DataDir, uid)
	r.dir(im, TempDir, uid)
	if v, _ := im.Config.EnvValue("MCP_DATA_DIR"); v != DataDir {
		r.fail("MCP_DATA_DIR=%q, want %s", v, DataDir)
	}
	if w.Workspace {
		r.dir(im, Workspace, uid)
		if v, _ := im.Config.EnvValue("DEVTOOLS_ROOTS"); v != Workspace || c.WorkingDir != Workspace {
			r.fail("DEVTOOLS_ROOTS=%q and working directory %q, want both %s", v, c.WorkingDir, Workspace)
		}
	}
	r.policy(im, w.Policy)
	r.contents(im, entry, w)
	return r
}

func numericUser(u string) (int, int, error) {
	us, gs, _ := strings.Cut(u, ":")
	uid, err := strconv.Atoi(us)
	if err != nil {
		return 0, 0, fmt.Errorf("not numeric (a runtime can only tell a numeric user is not root)")
	}
	gid := uid
	if gs != "" {
		if gid, err = strconv.Atoi(gs); err != nil {
			return 0, 0, fmt.Errorf("group %q is not numeric", gs)
		}
	}
	return uid, gid, nil
}

func passwdName(im *Image, uid, gid int) (string, bool) {
	f := im.Files["/etc/passwd"]
	if f == nil {
		return "", false
	}
	for _, line := range strings.Split(string(f.Data), "\n") {
		fields := strings.Split(line, ":")
		if len(fields) >= 4 && fields[2] == strconv.Itoa(uid) && fields[3] == strconv.Itoa(gid) {
			return fields[0], groupExists(im, gid)
		}
	}
	return "", false
}

func groupExists(im *Image, gid int) bool {
	f := im.Files["/etc/group"]
	if f == nil {
		return false
	}
	for _, line := range strings.Split(string(f.Data), "\n") {
		fields := strings.Split(line, ":")
		if len(fields) >= 3 && fields[2] == strconv.Itoa(gid) {
			return true
		}
	}
	return false
}

// binary: the entrypoint is an executable, static ELF for the image's
// platform, holding the labelled version.
func (r *Report) binary(im *Image, entry string, w Want) {
	f := im.Files[entry]
	if f == nil || f.Type != tar.TypeReg {
		r.fail("%s is not in the image", entry)
		return
	}
	if f.Mode&0o111 == 0 {
		r.fail("%s is not executable (mode %o)", entry, f.Mode)
	}
	ef, err := elf.NewFile(bytes.NewReader(f.Data))
	if err != nil {
		r.fail("%s is not an ELF executable: %v", entry, err)
		return
	}
	defer ef.Close()
	if want := elfMachine(im.Config.Architecture); want != ef.Machine {
		r.fail("%s is built for %v, the image for %s", entry, ef.Machine, im.Config.Architecture)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			r.fail("%s is dynamically linked: it needs a loader the image does not have", entry)
			return
		}
	}
	if libs, _ := ef.ImportedLibraries(); len(libs) > 0 {
		r.fail("%s needs shared libraries %v", entry, libs)
		return
	}
	if w.Version != "" && !bytes.Contains(f.Data, []byte(w.Version)) {
		r.fail("%s does not hold the version %q (built without -X .../shared/buildinfo.version?)", entry, w.Version)
	}
	r.ok("%s: static ELF for %s/%s, %.1f MB", entry, im.Config.OS, im.Config.Architecture, float64(f.Size)/1e6)
}

func elfMachine(arch string) elf.Machine {
	switch arch {
	case "amd64":
		return elf.EM_X86_64
	case "arm64":
		return elf.EM_AARCH64
	}
	return elf.EM_NONE
}

func (r *Report) certificates(im *Image) {
	f := im.Files[CABundle]
	if f == nil {
		r.fail("no CA certificates at %s: TLS to any upstream would fail", CABundle)
		return
	}
	n, rest := 0, f.Data
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			n++
		}
	}
	if n < 10 {
		r.fail("%s holds %d certificates", CABundle, n)
		return
	}
	r.ok("%d CA certificates", n)
}

func (r *Report) dir(im *Image, p string, uid int) {
	f := im.Files[p]
	switch {
	case f == nil || f.Type != tar.TypeDir:
		r.fail("no directory %s", p)
	case f.UID != uid:
		r.fail("%s belongs to uid %d, not the user %d: the server could not write there", p, f.UID, uid)
	case f.Mode&0o200 == 0:
		r.fail("%s is not writable by its owner (mode %o)", p, f.Mode)
	default:
		r.ok("%s owned by the user, mode %o", p, f.Mode&0o7777)
	}
}

func (r *Report) policy(im *Image, want []byte) {
	f := im.Files[Policy]
	switch {
	case f == nil:
		r.fail("no shipped policy at %s", Policy)
	case !bytes.Equal(f.Data, want):
		r.fail("%s differs from configs/acl.yaml: rebuild the image", Policy)
	default:
		if _, err := acl.Parse(f.Data); err != nil {
			r.fail("%s: %v", Policy, err)
			return
		}
		r.ok("the shipped policy at %s", Policy)
	}
}

// contents: nothing but the binary, the user files, the certificates, the
// policy and the directories, and little besides the binary.
func (r *Report) contents(im *Image, entry string, w Want) {
	allowed := map[string]bool{entry: true, "/etc/passwd": true, "/etc/group": true, CABundle: true, Policy: true, DataDir: true, TempDir: true}
	if w.Workspace {
		allowed[Workspace] = true
	}
	for p := range allowed {
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			allowed[d] = true
		}
	}
	var extra int64
	for _, p := range im.Paths() {
		if !allowed[p] {
			r.fail("unexpected %s in the image", p)
		}
		if p != entry {
			extra += im.Files[p].Size
		}
	}
	if extra > MaxExtraBytes {
		r.fail("%d bytes besides the binary (at most %d)", extra, MaxExtraBytes)
	} else {
		r.ok("%d files; %.0f kB besides the binary", len(im.Files), float64(extra)/1e3)
	}
}
