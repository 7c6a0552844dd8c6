package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// rawProc is the server binary on pipes, driven by hand one JSON-RPC line
// at a time, with what it logs to stderr kept.
type rawProc struct {
	cmd    *exec.Cmd
	in     *bufio.Writer
	inPipe io.Closer
	lines  chan []byte
	stderr *mcptest.Buffer
	mu     sync.Mutex // held while a line is sent
	// stash keeps responses read while waiting for another id.
	stash [][]byte
	done  bool // finish has waited for the process
	// by, when set, is when recvID gives up, however many other lines
	// keep coming.
	by time.Time
}

// startRaw starts the binary in dir ("" for the test's own) with env added
// to baseEnv; the test kills it at the end unless finish saw it exit.
func startRaw(t *testing.T, dir string, env []string, args ...string) *rawProc {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(baseEnv(t), env...)
	p := &rawProc{cmd: cmd, lines: make(chan []byte, 4096), stderr: &mcptest.Buffer{}}
	cmd.Stderr = p.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.in, p.inPipe = bufio.NewWriterSize(in, 1<<20), in
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				close(p.lines)
				return
			}
			p.lines <- line
		}
	}()
	t.Cleanup(func() {
		if !p.done {
			_ = in.Close()
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return p
}

func (p *rawProc) send(t *testing.T, line string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.in.WriteString(line + "\n"); err != nil {
		t.Fatalf("write to the server: %v", err)
	}
	if err := p.in.Flush(); err != nil {
		t.Fatalf("write to the server: %v", err)
	}
}

// next returns the next response line, stashed or new.
func (p *rawProc) next(t *testing.T) []byte {
	t.Helper()
	if len(p.stash) > 0 {
		line := p.stash[0]
		p.stash = p.stash[1:]
		return line
	}
	select {
	case line, ok := <-p.lines:
		if !ok {
			t.Fatalf("the server closed stdout; stderr:\n%s", p.stderr.String())
		}
		return line
	case <-time.After(60 * time.Second):
		t.Fatalf("no response for 60 s; stderr:\n%s", p.stderr.String())
		return nil
	}
}

// recvID returns the response whose id is id, keeping others for later.
func (p *rawProc) recvID(t *testing.T, id string) map[string]any {
	t.Helper()
	var keep [][]byte
	defer func() { p.stash = append(keep, p.stash...) }()
	for {
		if !p.by.IsZero() && time.Now().After(p.by) {
			t.Fatalf("no response to %s by the deadline", id)
		}
		line := p.next(t)
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("stdout line is not JSON: %.200q", line)
		}
		if fmt.Sprint(m["id"]) == id || (id == "<nil>" && m["id"] == nil) {
			m["_bytes"] = len(line)
			return m
		}
		keep = append(keep, line)
	}
}

// finish closes stdin, collects whatever else the server wrote to stdout
// and returns it with the exit code.
func (p *rawProc) finish(t *testing.T) ([][]byte, int) {
	t.Helper()
	_ = p.inPipe.Close()
	rest := p.stash
	timeout := time.After(15 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				err := p.cmd.Wait()
				p.done = true
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					return rest, ee.ExitCode()
				}
				if err != nil {
					t.Fatal(err)
				}
				return rest, 0
			}
			rest = append(rest, l)
		case <-timeout:
			t.Fatalf("the server did not exit after stdin closed; stderr:\n%s", p.stderr.String())
		}
	}
}
