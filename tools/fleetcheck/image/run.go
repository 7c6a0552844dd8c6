package image

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/help"
)

// Engine is a container engine's command line: podman or docker.
type Engine struct {
	Bin string
}

// Save writes ref to file in the docker-archive layout.
func (e Engine) Save(ctx context.Context, ref, file string) error {
	args := []string{"save", "-o", file}
	if filepath.Base(e.Bin) == "podman" {
		args = append(args, "--format", "docker-archive")
	}
	out, err := exec.CommandContext(ctx, e.Bin, append(args, ref)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s save %s: %w: %s", e.Bin, ref, err, bytes.TrimSpace(out))
	}
	return nil
}

// Answer is a server's answer to initialize.
type Answer struct {
	Name, Version, Protocol string
}

// Exit codes with which docker and podman say they could not start the
// container at all (an engine or runtime error, a command that cannot be
// invoked, a command not found), as opposed to the container's own status.
var engineFailures = map[int]bool{125: true, 126: true, 127: true}

// Initialize starts cmd, sends one initialize request on its stdin and
// reads the answer from its stdout, then closes stdin so the server ends.
// A process that ends without answering yields an *ExitError-wrapping error
// carrying its status and stderr.
func Initialize(ctx context.Context, cmd *exec.Cmd) (*Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-ctx.Done():
			_ = cmd.Process.Kill()
		case <-stopped:
		}
	}()
	req := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fleetcheck","version":"1"}}}` + "\n"
	_, werr := stdin.Write([]byte(req))
	br := bufio.NewReader(stdout)
	line, rerr := br.ReadBytes('\n')
	_ = stdin.Close()
	_, _ = io.Copy(io.Discard, br) // read to the end before Wait closes the pipe
	waitErr := cmd.Wait()
	if rerr != nil || werr != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no answer to initialize within the time limit; stderr: %s", lastLine(stderr.String()))
		}
		return nil, &NoAnswer{Code: exitCode(waitErr), Stderr: stderr.String()}
	}
	var resp struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
			ServerInfo      struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"serverInfo"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, fmt.Errorf("initialize answer %q: %w", strings.TrimSpace(string(line)), err)
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("initialize refused: %s", resp.Error.Message)
	}
	return &Answer{Name: resp.Result.ServerInfo.Name, Version: resp.Result.ServerInfo.Version, Protocol: resp.Result.ProtocolVersion}, nil
}

// NoAnswer: the process ended without answering.
type NoAnswer struct {
	Code   int
	Stderr string
}

func (e *NoAnswer) Error() string {
	return fmt.Sprintf("ended with status %d without answering initialize: %s", e.Code, lastLine(e.Stderr))
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// TryContainer sends initialize through `<engine> run -i --rm --network none
// ref`. When the engine cannot start a container here, the report says so
// (with the engine's own message) under NotRun rather than failing: that is
// a property of the machine, not of the image.
func (e Engine) TryContainer(ctx context.Context, ref string, w Want) Report {
	var r Report
	cmd := exec.CommandContext(ctx, e.Bin, "run", "-i", "--rm", "--network", "none", ref)
	ans, err := Initialize(ctx, cmd)
	var na *NoAnswer
	switch {
	case errors.As(err, &na) && engineFailures[na.Code]:
		r.notRun("initialize through `%s run -i`: %s could not start a container on this machine (status %d: %s)",
			filepath.Base(e.Bin), filepath.Base(e.Bin), na.Code, lastLine(na.Stderr))
	case err != nil:
		r.fail("initialize through `%s run -i`: %v", filepath.Base(e.Bin), err)
	default:
		r.answer("through the container", ans, w)
	}
	return r
}

func (r *Report) answer(how string, ans *Answer, w Want) {
	server := strings.TrimSuffix(w.Program, "-mcp")
	if ans.Name != server || ans.Version != w.Version {
		r.fail("initialize %s: server %s %s, want %s %s", how, ans.Name, ans.Version, server, w.Version)
		return
	}
	r.ok("initialize %s: %s %s, protocol %s", how, ans.Name, ans.Version, ans.Protocol)
}

// CheckOnHost runs the image's own binary on this machine, when the
// platforms match: --version, --help (its port must be the one the image
// exposes) and initialize over stdio with the image's environment, its
// paths moved to temporary directories under tmp.
func CheckOnHost(ctx context.Context, im *Image, w Want, tmp string) Report {
	var r Report
	platform := im.Config.OS + "/" + im.Config.Architecture
	if platform != runtime.GOOS+"/"+runtime.GOARCH {
		r.notRun("the image's binary on this machine: the image is %s, this machine %s/%s", platform, runtime.GOOS, runtime.GOARCH)
		return r
	}
	f := im.Files[path.Join(BinDir, w.Program)]
	if f == nil {
		r.fail("no %s to run", w.Program)
		return r
	}
	bin := filepath.Join(tmp, w.Program)
	if err := os.WriteFile(bin, f.Data, 0o755); err != nil {
		r.fail("extract %s: %v", w.Program, err)
		return r
	}
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	wantVersion := fmt.Sprintf("%s %s (commit %s)", w.Program, w.Version, w.Commit)
	if got := strings.TrimSpace(string(out)); err != nil || got != wantVersion {
		r.fail("the image's %s --version: %q (%v), want %q", w.Program, got, err, wantVersion)
	} else {
		r.ok("the image's binary says %q", got)
	}
	h, err := help.Load(ctx, bin)
	if err != nil {
		r.fail("the image's %s --help: %v", w.Program, err)
	} else if _, ok := im.Config.Config.ExposedPorts[fmt.Sprintf("%d/tcp", h.DefaultPort)]; !ok || len(im.Config.Config.ExposedPorts) != 1 {
		r.fail("exposed ports %v, want the server's default port %d/tcp only", keys(im.Config.Config.ExposedPorts), h.DefaultPort)
	} else {
		r.ok("exposes %d/tcp, the server's default port", h.DefaultPort)
	}
	env := []string{"HOME=" + tmp}
	for _, kv := range im.Config.Config.Env {
		k, v, _ := strings.Cut(kv, "=")
		for _, moved := range []string{DataDir, Workspace} {
			if v == moved {
				v = filepath.Join(tmp, strings.TrimPrefix(moved, "/"))
				if err := os.MkdirAll(v, 0o700); err != nil {
					r.fail("%v", err)
				}
			}
		}
		env = append(env, k+"="+v)
	}
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env, cmd.Dir = env, tmp
	ans, err := Initialize(ctx, cmd)
	if err != nil {
		r.fail("initialize with the image's binary over stdio: %v", err)
	} else {
		r.answer("with the image's binary over stdio", ans, w)
	}
	return r
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
