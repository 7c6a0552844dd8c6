package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// The floor is testdata/floor: the least an MCP server can do, from the
// standard library alone. These benchmarks measure devtools and the floor
// by the same driver in the same run and report the ratio, so the figure
// says what the kit costs above doing nothing, whatever the machine.

func floorBinary(tb testing.TB) string { return mcptest.Build(tb, "./testdata/floor") }

func devtoolsBinary(tb testing.TB) string {
	return mcptest.Build(tb, "github.com/mcp-fleet/mcp-fleet/servers/devtools/cmd/devtools-mcp")
}

// BenchmarkStdioVsFloor: file_read of 1 KiB over real pipes, devtools and
// the floor measured alternately call by call; reports both p50s and the
// ratio (target: devtools ≤ 1.3× the floor).
func BenchmarkStdioVsFloor(b *testing.B) {
	root := benchRoot(b)
	dev := startProc(b, devtoolsBinary(b), root)
	defer dev.Stop()
	dev.Initialize(b)
	floor := startProc(b, floorBinary(b), root)
	defer floor.Stop()
	floor.Initialize(b)
	for i := 0; i < 300; i++ { // warm up both
		dev.RoundTrip(b, "tools/call", readCall)
		floor.RoundTrip(b, "tools/call", readCall)
	}
	dl := make([]time.Duration, 0, b.N)
	fl := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		line := dev.RoundTrip(b, "tools/call", readCall)
		dl = append(dl, time.Since(t0))
		if bytes.Contains(line, []byte(`"isError":true`)) {
			b.Fatalf("call failed: %s", line)
		}
		t0 = time.Now()
		floor.RoundTrip(b, "tools/call", readCall)
		fl = append(fl, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(dl, func(i, j int) bool { return dl[i] < dl[j] })
	sort.Slice(fl, func(i, j int) bool { return fl[i] < fl[j] })
	d50, f50 := mcptest.Percentile(dl, 0.5), mcptest.Percentile(fl, 0.5)
	b.ReportMetric(float64(d50.Microseconds()), "devtools-p50-µs")
	b.ReportMetric(float64(f50.Microseconds()), "floor-p50-µs")
	b.ReportMetric(float64(mcptest.Percentile(dl, 0.95).Microseconds()), "devtools-p95-µs")
	b.ReportMetric(float64(d50)/float64(f50), "×floor-p50")
}

// httpProc is a server listening on a loopback port.
type httpProc struct {
	cmd  *exec.Cmd
	base string
}

var addrRE = regexp.MustCompile(`(?:"addr":"|listening on )(127\.0\.0\.1:\d+)`)

func startHTTPProc(tb testing.TB, bin string, env []string, args ...string) *httpProc {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + tb.TempDir()}, env...)
	errOut, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(errOut)
	for sc.Scan() {
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, errOut) }()
			return &httpProc{cmd: cmd, base: "http://" + m[1] + "/mcp"}
		}
	}
	tb.Fatalf("%s printed no address", bin)
	return nil
}

const benchToken = "bench-token-0123456789abcdef"

// httpDriver posts tools/call to a server from n clients at once.
type httpDriver struct {
	base, sid, token string
	client           *http.Client
}

func newDriver(base, token string, conns int) *httpDriver {
	tr := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	return &httpDriver{base: base, token: token, client: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

func (d *httpDriver) post(body string) (*http.Response, []byte, error) {
	return d.postFrom(strings.NewReader(body), int64(len(body)))
}

// postFrom posts the n bytes body reads, declared with their length.
func (d *httpDriver) postFrom(body io.Reader, n int64) (*http.Response, []byte, error) {
	req, _ := http.NewRequest(http.MethodPost, d.base, body)
	req.ContentLength = n
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if d.token != "" {
		req.Header.Set("Authorization", "Bearer "+d.token)
	}
	if d.sid != "" {
		req.Header.Set("Mcp-Session-Id", d.sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp, raw, err
}

func (d *httpDriver) initialize(tb testing.TB) {
	resp, raw, err := d.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if err != nil || resp.StatusCode != 200 {
		tb.Fatalf("initialize: %v %s", err, raw)
	}
	d.sid = resp.Header.Get("Mcp-Session-Id")
	_, _, _ = d.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// run makes calls from clients goroutines for d and returns calls/s.
func (d *httpDriver) run(tb testing.TB, clients int, dur time.Duration) float64 {
	var n atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				resp, raw, err := d.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i+2, readCall))
				if err != nil || resp.StatusCode != 200 || bytes.Contains(raw, []byte(`"isError":true`)) {
					tb.Errorf("call: %v %s", err, raw)
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds()
}

// BenchmarkHTTPVsFloor: file_read calls/s from 8 concurrent clients over
// streamable HTTP (bearer token, one session) against the floor's plain
// POSTs, 2 s each, alternating twice; reports both and the ratio (target:
// devtools ≥ 0.6× the floor).
func BenchmarkHTTPVsFloor(b *testing.B) {
	root := benchRoot(b)
	dev := startHTTPProc(b, devtoolsBinary(b), []string{"MCP_AUTH_TOKEN=" + benchToken},
		"--transport", "http", "--port", "0", "--root", root, "--max-session-calls", "64")
	floor := startHTTPProc(b, floorBinary(b), nil, "-http", "127.0.0.1:0")
	dd := newDriver(dev.base, benchToken, 8)
	dd.initialize(b)
	fd := newDriver(floor.base, "", 8)
	dd.run(b, 8, 300*time.Millisecond) // warm up
	fd.run(b, 8, 300*time.Millisecond)
	var devRate, floorRate float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for round := 0; round < 2; round++ {
			devRate += dd.run(b, 8, time.Second)
			floorRate += fd.run(b, 8, time.Second)
		}
	}
	b.StopTimer()
	b.ReportMetric(devRate/float64(2*b.N), "devtools-calls/s")
	b.ReportMetric(floorRate/float64(2*b.N), "floor-calls/s")
	b.ReportMetric(devRate/floorRate, "×floor-calls/s")
}

// BenchmarkHTTPRSS32Clients: the resident set of devtools while 32 clients
// call file_read at once over streamable HTTP (target: under 32 MiB).
func BenchmarkHTTPRSS32Clients(b *testing.B) {
	root := benchRoot(b)
	dev := startHTTPProc(b, devtoolsBinary(b), []string{"MCP_AUTH_TOKEN=" + benchToken},
		"--transport", "http", "--port", "0", "--root", root, "--max-session-calls", "64")
	d := newDriver(dev.base, benchToken, 32)
	d.initialize(b)
	var peak int
	for i := 0; i < b.N; i++ {
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
					if r, err := rssKiB(dev.cmd.Process.Pid); err == nil && r > peak {
						peak = r
					}
				}
			}
		}()
		d.run(b, 32, 2*time.Second)
		close(stop)
		<-done
	}
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
}

var _ = os.DevNull
