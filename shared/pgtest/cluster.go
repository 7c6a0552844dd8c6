package pgtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cluster is a PostgreSQL cluster of our own in a temporary directory:
//
//	dir/              temporary directory, owned by the server's user
//	dir/data/         the cluster (initdb -D)
//	dir/server.log    the server's log (pg_ctl -l)
//	dir/.s.PGSQL.N    the server's Unix socket, unused by pgtest
type cluster struct {
	dir  string
	bins serverBins
	port int
	cred *syscall.Credential // whom to run the server programs as; nil: as ourselves

	pickPort func() (int, error) // nil: freePort; for tests

	watchdog   *exec.Cmd
	watchdogIn io.WriteCloser // closing it tells the watchdog to clean up
}

const (
	maxStartAttempts = 5                // new port each time, on a port clash
	startTimeout     = 60 * time.Second // pg_ctl start -t
	cmdTimeout       = 2 * time.Minute  // bound on every initdb and pg_ctl run
	logTailLines     = 40               // server log lines quoted on failure
)

// serverUser is the system user the server programs run as when we are root.
const serverUser = "postgres"

func (c *cluster) dataDir() string { return filepath.Join(c.dir, "data") }
func (c *cluster) logFile() string { return filepath.Join(c.dir, "server.log") }

// startCluster creates and starts a cluster and returns the server for it.
func startCluster() (*server, error) {
	pathEnv := os.Getenv("PATH")
	bins, err := findServerBins(pathEnv, debianBinGlob)
	if err != nil {
		return nil, err
	}
	psql, err := findPsql(pathEnv, debianBinGlob, bins)
	if err != nil {
		return nil, err
	}
	c, err := createCluster(bins)
	if err != nil {
		return nil, err
	}
	if err := c.start(); err != nil {
		return nil, errors.Join(err, c.stop())
	}
	admin := &url.URL{
		Scheme:   "postgres",
		User:     url.User("postgres"),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)),
		Path:     "/postgres",
		RawQuery: "sslmode=disable",
	}
	return &server{admin: admin, psql: psql, env: clientEnv(), cluster: c}, nil
}

// createCluster creates a cluster (not yet running) with the given programs,
// in a new temporary directory guarded by a watchdog.
func createCluster(bins serverBins) (*cluster, error) {
	c := &cluster{bins: bins}
	if os.Geteuid() == 0 {
		var err error
		if c.cred, err = credentialOf(serverUser); err != nil {
			return nil, err
		}
	}
	if err := c.makeDir(); err != nil {
		return nil, err
	}
	// From here on c.stop undoes everything, and the watchdog does it should
	// this process die.
	if err := c.startWatchdog(); err != nil {
		return nil, errors.Join(err, c.stop())
	}
	if err := c.initdb(); err != nil {
		return nil, errors.Join(err, c.stop())
	}
	return c, nil
}

// credentialOf returns the credential to run programs as the named user.
func credentialOf(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("running as root, but PostgreSQL refuses to run as root and there is no %q "+
			"system user to run it as (%v); create one (scripts/ensure-postgres.sh does) or run the tests "+
			"as an ordinary user", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("user %q: %w", name, err)
	}
	if uid == 0 {
		return nil, fmt.Errorf("user %q has uid 0; PostgreSQL refuses to run as root", name)
	}
	// No supplementary groups: the server needs none.
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// makeDir creates c.dir, owned by the server's user and readable by all.
func (c *cluster) makeDir() error {
	base := os.TempDir()
	if c.cred != nil && !traversable(base) {
		// The server's user could not reach a directory under base (say
		// TMPDIR is inside root's 0700 home); /tmp is world-traversable.
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "pgtest-")
	if err != nil {
		return fmt.Errorf("creating the cluster directory: %w", err)
	}
	c.dir = dir
	err = os.Chmod(dir, 0o755)
	if err == nil && c.cred != nil {
		err = os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid))
	}
	if err != nil {
		return errors.Join(fmt.Errorf("preparing the cluster directory: %w", err), os.RemoveAll(dir))
	}
	return nil
}

// traversable reports whether every directory from / down to dir may be
// searched by everybody, so that the server's user can reach dir's children.
func traversable(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}

// watchdogScript runs in a /bin/sh of its own. It waits for end of file on
// its standard input, the read end of a pipe whose only writer is the test
// binary: that comes when c.stop closes the pipe, or when the binary dies in
// any way, even by SIGKILL. It then stops the server, if still running, with
// SIGQUIT (pg_ctl's immediate mode) and deletes the directory ($1).
const watchdogScript = `
case "$1" in */pgtest-*) ;; *) exit 2 ;; esac
while read -r line; do :; done
pid=
if [ -f "$1/data/postmaster.pid" ]; then read -r pid < "$1/data/postmaster.pid" || :; fi
if [ -n "$pid" ] && kill -QUIT "$pid" 2>/dev/null; then
	# Like pg_ctl stop -w: the server removes postmaster.pid when it is down.
	n=0
	while [ -f "$1/data/postmaster.pid" ] && kill -0 "$pid" 2>/dev/null && [ "$n" -lt 300 ]; do
		sleep 0.1
		n=$((n+1))
	done
fi
rm -rf "$1"
`

// startWatchdog starts the watchdog process for c.dir.
func (c *cluster) startWatchdog() error {
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "pgtest-watchdog", c.dir)
	// Its own process group, so that a Ctrl-C meant for the tests does not
	// kill the watchdog before it has cleaned up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("starting the cleanup watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		in.Close()
		return fmt.Errorf("starting the cleanup watchdog: %w", err)
	}
	c.watchdog, c.watchdogIn = cmd, in
	return nil
}

// run runs a server program as the server's user and returns its combined
// output.
func (c *cluster) run(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = c.dir // the server's user may not be able to enter our working directory
	cmd.Env = serverEnv()
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	// pg_ctl start leaves the server running; it writes to the log file, not
	// to our pipes, but do not wait forever should anything hold them open.
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// initdb creates the cluster and configures it.
func (c *cluster) initdb() error {
	out, err := c.run(c.bins.initdb,
		"-D", c.dataDir(),
		"-A", "trust", "-U", "postgres",
		"-E", "UTF8", "--locale=C",
		"--no-sync")
	if err != nil {
		return fmt.Errorf("%s failed: %w\n%s", c.bins.initdb, err, strings.TrimSpace(out))
	}
	sockets := c.dir
	// A Unix socket path must fit in 107 bytes; no socket rather than failing.
	if len(filepath.Join(sockets, ".s.PGSQL.65535.lock")) > 100 {
		sockets = ""
	}
	conf := fmt.Sprintf(`
# Added by pgtest: a throwaway cluster for tests; the port is set by pg_ctl -o.
listen_addresses = '127.0.0.1'
unix_socket_directories = %s
fsync = off
full_page_writes = off
synchronous_commit = off
max_connections = 200
`, quoteLiteral(sockets))
	f, err := os.OpenFile(filepath.Join(c.dataDir(), "postgresql.conf"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("configuring the cluster: %w", err)
	}
	_, err = f.WriteString(conf)
	if err2 := f.Close(); err == nil {
		err = err2
	}
	if err != nil {
		return fmt.Errorf("configuring the cluster: %w", err)
	}
	return nil
}

// start starts the server on a free port, trying another port should the
// chosen one be taken in the meantime.
func (c *cluster) start() error {
	var err error
	for range maxStartAttempts {
		var clash bool
		if clash, err = c.startOnce(); err == nil || !clash {
			return err
		}
	}
	return err
}

// startOnce starts the server on a free port. clash reports whether it
// failed because the port was taken.
func (c *cluster) startOnce() (clash bool, err error) {
	pick := c.pickPort
	if pick == nil {
		pick = freePort
	}
	c.port, err = pick()
	if err != nil {
		return false, err
	}
	logStart := fileSize(c.logFile())
	out, err := c.run(c.bins.pgctl, "start", "-w",
		"-t", strconv.Itoa(int(startTimeout/time.Second)),
		"-D", c.dataDir(), "-l", c.logFile(),
		"-o", "-p "+strconv.Itoa(c.port))
	if err == nil {
		return false, nil
	}
	log := readFrom(c.logFile(), logStart)
	clash = strings.Contains(log, "Address already in use") || strings.Contains(log, "could not bind")
	if c.serverRunning() {
		// Still starting up after the timeout, say: stop it before retrying.
		_, _ = c.run(c.bins.pgctl, "stop", "-D", c.dataDir(), "-m", "immediate", "-w")
	}
	return clash, fmt.Errorf("%s start (port %d) failed: %w\n%s\nlast lines of the server log:\n%s",
		c.bins.pgctl, c.port, err, strings.TrimSpace(out), tail(log, logTailLines))
}

// serverRunning reports whether a postmaster may be running in the cluster.
func (c *cluster) serverRunning() bool {
	_, err := os.Stat(filepath.Join(c.dataDir(), "postmaster.pid"))
	return err == nil
}

// stop stops the server, deletes the directory and ends the watchdog.
func (c *cluster) stop() error {
	var errs []error
	if c.serverRunning() {
		if out, err := c.run(c.bins.pgctl, "stop", "-D", c.dataDir(), "-m", "immediate", "-w"); err != nil {
			errs = append(errs, fmt.Errorf("%s stop: %w\n%s", c.bins.pgctl, err, strings.TrimSpace(out)))
		}
	}
	if err := os.RemoveAll(c.dir); err != nil {
		errs = append(errs, err)
	}
	if c.watchdog != nil {
		// If the above failed, the watchdog has another go.
		c.watchdogIn.Close()
		done := make(chan error, 1)
		go func() { done <- c.watchdog.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				errs = append(errs, fmt.Errorf("cleanup watchdog: %w", err))
			}
		case <-time.After(time.Minute):
			errs = append(errs, errors.New("cleanup watchdog still running after a minute"))
		}
		c.watchdog = nil
	}
	return errors.Join(errs...)
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// serverEnv is the environment for initdb and pg_ctl: ours without PG*
// variables (PGDATA, PGPORT, ... would only confuse) and in the C locale, so
// that messages are in English.
func serverEnv() []string {
	env := withoutPGVars(os.Environ())
	return append(env, "LC_ALL=C", "LANG=C")
}

// clientEnv is the environment for psql against our cluster: ours without
// PG* variables (PGOPTIONS, PGSSLMODE, a PGPASSFILE, ...).
func clientEnv() []string {
	return append(withoutPGVars(os.Environ()), "PGCONNECT_TIMEOUT=10")
}

func withoutPGVars(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// quoteLiteral quotes s as a postgresql.conf string.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// readFrom returns the contents of the file at path from offset on, or a
// note saying why it cannot.
func readFrom(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read the log: %v)", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, offset, 1<<30))
	if err != nil {
		return fmt.Sprintf("(cannot read the log: %v)", err)
	}
	return string(b)
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
