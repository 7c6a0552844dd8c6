package pgtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) STATE ...
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// waitGone waits until dir no longer exists and process pid is gone.
func waitGone(t *testing.T, dir string, pid int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err := os.Stat(dir)
		dirGone := errors.Is(err, os.ErrNotExist)
		if dirGone && !alive(pid) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20s: directory %s removed: %v; server process %d still alive: %v",
				dir, dirGone, pid, alive(pid))
		}
	}
}

func postmasterPID(t *testing.T, c *cluster) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dataDir(), "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatalf("postmaster.pid: %v", err)
	}
	return pid
}

// TestPortClashAndWatchdog starts a second cluster on a port that is taken,
// checks the retry and the failure message, then lets the watchdog clean up
// as it would after the test binary died.
func TestPortClashAndWatchdog(t *testing.T) {
	t.Parallel()
	bins, err := findServerBins(os.Getenv("PATH"), debianBinGlob)
	if err != nil {
		t.Fatal(err)
	}
	psql, err := findPsql(os.Getenv("PATH"), debianBinGlob, bins)
	if err != nil {
		t.Fatal(err)
	}
	c, err := createCluster(bins)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c.watchdog != nil {
			if err := c.stop(); err != nil {
				t.Error(err)
			}
		}
	})

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port

	t.Run("always taken", func(t *testing.T) {
		calls := 0
		c.pickPort = func() (int, error) { calls++; return takenPort, nil }
		err := c.start()
		if err == nil {
			t.Fatal("the server started on a port that is taken")
		}
		t.Logf("the failure message:\n%v", err)
		if calls != maxStartAttempts {
			t.Errorf("tried %d ports, want %d", calls, maxStartAttempts)
		}
		for _, want := range []string{"pg_ctl start", "last lines of the server log", "Address already in use"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error does not mention %q:\n%v", want, err)
			}
		}
		if c.serverRunning() {
			t.Error("postmaster.pid left behind after the failed start")
		}
	})

	t.Run("taken once", func(t *testing.T) {
		calls := 0
		c.pickPort = func() (int, error) {
			calls++
			if calls == 1 {
				return takenPort, nil
			}
			return freePort()
		}
		if err := c.start(); err != nil {
			t.Fatal(err)
		}
		if calls != 2 || c.port == takenPort {
			t.Errorf("calls = %d, port = %d (taken: %d); want a second, free port", calls, c.port, takenPort)
		}
		s := &server{psql: psql, env: clientEnv(),
			admin: &url.URL{Scheme: "postgres", User: url.User("postgres"),
				Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)), Path: "/postgres", RawQuery: "sslmode=disable"}}
		if out, err := s.exec(s.admin.String(), "SELECT 40 + 2"); err != nil || strings.TrimSpace(out) != "42" {
			t.Errorf("SELECT 40 + 2 = %q, %v", out, err)
		}
	})
	if t.Failed() {
		return
	}

	t.Run("watchdog", func(t *testing.T) {
		pid := postmasterPID(t, c)
		// What the death of this process would do.
		c.watchdogIn.Close()
		if err := c.watchdog.Wait(); err != nil {
			t.Errorf("watchdog: %v", err)
		}
		c.watchdog = nil
		waitGone(t, c.dir, pid)
	})
}

const crashHelperEnv = "PGTEST_CRASH_HELPER"

// TestCleanupAfterCrash runs this test binary again with a test that starts
// the cluster and panics, so Main never stops it, and checks that the
// watchdog removes the cluster anyway.
func TestCleanupAfterCrash(t *testing.T) {
	if os.Getenv(crashHelperEnv) == "1" {
		URL(t)
		fmt.Printf("\ncluster-dir=%s\npostmaster-pid=%d\n", srv.cluster.dir, postmasterPID(t, srv.cluster))
		panic("simulated crash of a test")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCleanupAfterCrash$", "-test.count=1")
	// The helper must start a local cluster even when PGTEST_URL points the
	// rest of the package at an existing server.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envURL+"=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, crashHelperEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the crashing helper succeeded:\n%s", out)
	}
	var dir string
	pid := -1
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "cluster-dir="); ok {
			dir = v
		}
		if v, ok := strings.CutPrefix(sc.Text(), "postmaster-pid="); ok {
			pid, _ = strconv.Atoi(v)
		}
	}
	if dir == "" || pid <= 0 || !strings.Contains(string(out), "simulated crash") {
		t.Fatalf("unexpected helper output (%v):\n%s", err, out)
	}
	waitGone(t, dir, pid)
}

func TestExternalServer(t *testing.T) {
	t.Parallel()
	admin := AdminURL(t)
	u, _ := url.Parse(admin)
	u.RawQuery = "sslmode=disable&application_name=pgtest"
	s, err := external(u.String())
	if err != nil {
		t.Fatal(err)
	}
	var name string
	t.Run("inner", func(t *testing.T) {
		dbURL := s.newDatabase(t)
		got, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		name = strings.TrimPrefix(got.Path, "/")
		if got.Host != u.Host || got.User.String() != u.User.String() || got.RawQuery != u.RawQuery ||
			!strings.HasPrefix(name, "pgtest_testexternalserver_inner_") {
			t.Errorf("database URL %s does not match admin URL %s", dbURL, u)
		}
		out, err := s.exec(dbURL, "SELECT current_database() || ' ' || current_setting('application_name')")
		if want := name + " pgtest"; err != nil || strings.TrimSpace(out) != want {
			t.Errorf("got %q, %v; want %q", out, err, want)
		}
	})
	out, err := s.exec(admin, "SELECT count(*) FROM pg_database WHERE datname = '"+name+"'")
	if err != nil || strings.TrimSpace(out) != "0" {
		t.Errorf("database %s after its test: count %q, %v; want dropped", name, out, err)
	}

	t.Run("bad URLs", func(t *testing.T) {
		for _, bad := range []string{"host=localhost dbname=postgres", "mysql://localhost/x", "postgres:///postgres"} {
			if _, err := external(bad); err == nil || !strings.Contains(err.Error(), envURL) {
				t.Errorf("external(%q) = %v, want an error about %s", bad, err, envURL)
			}
		}
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		down := fmt.Sprintf("postgres://postgres:secret@127.0.0.1:%d/postgres?sslmode=disable", port)
		_, err = external(down)
		if err == nil || !strings.Contains(err.Error(), "cannot use the server") || strings.Contains(err.Error(), "secret") {
			t.Errorf("external(server down) = %v; want a connection error without the password", err)
		}
	})
}
