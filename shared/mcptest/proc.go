package mcptest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// Proc is a server binary on real pipes, driven line by line without an
// SDK client, so that what a benchmark measures is the server, not a client
// library.
type Proc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

// StartProc starts bin with args and env (added to PATH=/usr/bin:/bin
// only), its stderr to /dev/null as it would go to a client's log file;
// the test stops it at the end. Call Initialize before anything else.
func StartProc(tb testing.TB, bin string, env []string, args ...string) *Proc {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = devnull.Close() })
	cmd.Stderr = devnull
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &Proc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}
	tb.Cleanup(p.Stop)
	return p
}

// InitializeParams are the initialize request's params Initialize sends.
const InitializeParams = `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`

// Initialize sends initialize and the initialized notification.
func (p *Proc) Initialize(tb testing.TB) {
	tb.Helper()
	p.RoundTrip(tb, "initialize", InitializeParams)
	fmt.Fprintln(p.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// RoundTrip sends one request and returns the response line as read.
func (p *Proc) RoundTrip(tb testing.TB, method, params string) []byte {
	tb.Helper()
	p.id++
	fmt.Fprintf(p.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", p.id, method, params)
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		tb.Fatalf("read response: %v", err)
	}
	return line
}

// Call is tools/call with params ({"name":…,"arguments":…}); a tool error
// fails the test.
func (p *Proc) Call(tb testing.TB, params string) []byte {
	tb.Helper()
	line := p.RoundTrip(tb, "tools/call", params)
	if bytes.Contains(line, []byte(`"isError":true`)) {
		tb.Fatalf("call failed: %s", line)
	}
	return line
}

// Pid is the server process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Stop closes the server's stdin and waits for it to exit; stopping twice
// is harmless.
func (p *Proc) Stop() {
	_ = p.in.Close()
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Wait()
	}
}

// Percentile is the q-quantile (0 to 1) of sorted latencies.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	return sorted[int(q*float64(len(sorted)-1))]
}

// Measure runs call b.N times and reports p50/p95/p99 besides the mean.
func Measure(b *testing.B, call func()) {
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		call()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(Percentile(lat, 0.50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(Percentile(lat, 0.95).Microseconds()), "p95-µs")
	b.ReportMetric(float64(Percentile(lat, 0.99).Microseconds()), "p99-µs")
}
