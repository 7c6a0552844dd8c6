//go:build unix

package shell

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// drainGrace bounds how long output is still read after the program and
// its group are gone. Only a process that left the group (setsid, which
// just an operator-allowed program could do) keeps a pipe open that long;
// its output is then cut off.
const drainGrace = 2 * time.Second

// capture is the output budget shared by stdout and stderr.
type capture struct {
	mu        sync.Mutex
	left      int64
	truncated bool
	full      chan struct{}
}

type sink struct {
	c   *capture
	buf bytes.Buffer
}

// Write keeps what fits in the budget and drops the rest, reporting
// success so the copy goes on draining the pipe until the killed program
// closes it.
func (s *sink) Write(p []byte) (int, error) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	n := int64(len(p))
	if n > s.c.left {
		n = s.c.left
		if !s.c.truncated {
			s.c.truncated = true
			close(s.c.full)
		}
	}
	s.buf.Write(p[:n])
	s.c.left -= n
	return len(p), nil
}

// execute runs bin in its own process group and collects its output.
func execute(ctx context.Context, bin, name string, args []string, dir string, env []string, timeout time.Duration, maxOut int64) (*Result, error) {
	start := time.Now() // before the timer starts, so a timed-out run lasts at least the timeout
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, failed("cannot create the output pipes for the program", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, failed("cannot create the output pipes for the program", err)
	}
	cmd := &exec.Cmd{
		Path:   bin,
		Args:   append([]string{name}, args...),
		Dir:    dir,
		Env:    env,
		Stdout: outW, // *os.File: handed to the child as is, no copying goroutine in exec
		Stderr: errW,
		// Stdin nil: the child reads /dev/null.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, failed("program "+name+" could not be started", err)
	}
	pgid := cmd.Process.Pid
	kill := func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

	c := &capture{left: maxOut, full: make(chan struct{})}
	stdout, stderr := &sink{c: c}, &sink{c: c}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, _ = io.Copy(stdout, outR) }()
	go func() { defer wg.Done(); _, _ = io.Copy(stderr, errR) }()

	exited := make(chan struct{})
	watcherDone := make(chan struct{})
	timedOut := false // written by the watcher, read after watcherDone
	go func() {
		defer close(watcherDone)
		select {
		case <-runCtx.Done():
			timedOut = ctx.Err() == nil
			kill()
		case <-c.full:
			kill()
		case <-exited:
		}
	}()
	// Where the platform allows, wait for the program to exit without
	// reaping it: while it is a zombie its process group id cannot be
	// reused, so the group kill below cannot hit an unrelated group.
	var waitErr error
	reaped := false
	if !waitNoReap(pgid) {
		waitErr, reaped = cmd.Wait(), true
	}
	dur := time.Since(start)
	close(exited)
	<-watcherDone
	// The program is gone; anything it left in its group goes too, so no
	// background child outlives the call or holds the pipes open.
	kill()
	if !reaped {
		waitErr = cmd.Wait()
	}

	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainGrace):
		outR.Close()
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()

	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return nil, failed("waiting for program "+name+" failed", waitErr)
	}
	c.mu.Lock()
	truncated := c.truncated
	c.mu.Unlock()
	res := &Result{
		Stdout:    stdout.buf.Bytes(),
		Stderr:    stderr.buf.Bytes(),
		ExitCode:  cmd.ProcessState.ExitCode(),
		Duration:  dur,
		Truncated: truncated,
		TimedOut:  timedOut,
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal().String()
	}
	return res, nil
}
