package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// stdioProc is the built binary on real pipes, driven line by line without
// an SDK client so the figures are the server's, not a client library's.
type stdioProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startProc(tb testing.TB, bin, root string) *stdioProc {
	tb.Helper()
	// Default log level: the audit line of every call is part of the cost.
	// stderr goes straight to /dev/null, as it would to a client's log file.
	cmd := exec.Command(bin, "--root", root)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + root}
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
	return &stdioProc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}
}

func (p *stdioProc) roundTrip(tb testing.TB, method, params string) []byte {
	p.id++
	fmt.Fprintf(p.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", p.id, method, params)
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		tb.Fatalf("read response: %v", err)
	}
	return line
}

func (p *stdioProc) initialize(tb testing.TB) {
	p.roundTrip(tb, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
	fmt.Fprintln(p.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func (p *stdioProc) stop() {
	_ = p.in.Close()
	_ = p.cmd.Wait()
}

// rssKiB reads the process's resident set from /proc.
func rssKiB(pid int) (int, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			return strconv.Atoi(strings.Fields(line)[1])
		}
	}
	return 0, fmt.Errorf("no VmRSS")
}

func benchRoot(tb testing.TB) string {
	root := tb.TempDir()
	if err := os.WriteFile(filepath.Join(root, "one-kib.txt"), bytes.Repeat([]byte("0123456789abcde\n"), 64), 0o644); err != nil {
		tb.Fatal(err)
	}
	return root
}

const readCall = `{"name":"file_read","arguments":{"path":"one-kib.txt"}}`

func percentile(sorted []time.Duration, q float64) time.Duration {
	return sorted[int(q*float64(len(sorted)-1))]
}

// BenchmarkStdioFileRead1KiB is a full round trip of file_read on a 1 KiB
// file over real pipes to the built binary: JSON-RPC in, kit pipeline,
// os.Root read, JSON-RPC out. It reports p50/p95 per call besides the mean.
func BenchmarkStdioFileRead1KiB(b *testing.B) {
	bin := mcptest.Build(b, "github.com/mcp-fleet/mcp-fleet/servers/devtools/cmd/devtools-mcp")
	p := startProc(b, bin, benchRoot(b))
	defer p.stop()
	p.initialize(b)
	for i := 0; i < 200; i++ { // warm up
		p.roundTrip(b, "tools/call", readCall)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		line := p.roundTrip(b, "tools/call", readCall)
		lat = append(lat, time.Since(t0))
		if bytes.Contains(line, []byte(`"isError":true`)) {
			b.Fatalf("call failed: %s", line)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(percentile(lat, 0.50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.95).Microseconds()), "p95-µs")
}

// BenchmarkColdStart measures exec of the binary to the initialize response.
func BenchmarkColdStart(b *testing.B) {
	bin := mcptest.Build(b, "github.com/mcp-fleet/mcp-fleet/servers/devtools/cmd/devtools-mcp")
	root := benchRoot(b)
	for i := 0; i < b.N; i++ {
		p := startProc(b, bin, root)
		line := p.roundTrip(b, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
		if !bytes.Contains(line, []byte(`"serverInfo"`)) {
			b.Fatalf("bad initialize response: %s", line)
		}
		b.StopTimer()
		p.stop()
		b.StartTimer()
	}
}

// BenchmarkRSSAfter10kCalls reports the resident memory of the server after
// 10 000 file_read calls (one process per iteration).
func BenchmarkRSSAfter10kCalls(b *testing.B) {
	bin := mcptest.Build(b, "github.com/mcp-fleet/mcp-fleet/servers/devtools/cmd/devtools-mcp")
	root := benchRoot(b)
	var rss, start int
	for i := 0; i < b.N; i++ {
		p := startProc(b, bin, root)
		p.initialize(b)
		p.roundTrip(b, "ping", "{}")
		var err error
		if start, err = rssKiB(p.cmd.Process.Pid); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 10000; j++ {
			p.roundTrip(b, "tools/call", readCall)
		}
		if rss, err = rssKiB(p.cmd.Process.Pid); err != nil {
			b.Fatal(err)
		}
		p.stop()
	}
	b.ReportMetric(float64(start)/1024, "RSS-start-MiB")
	b.ReportMetric(float64(rss)/1024, "RSS-MiB")
}

// TestStdioDriverSeesCleanProtocol keeps the benchmark driver honest: every
// stdout line it reads must be a JSON-RPC response.
func TestStdioDriverSeesCleanProtocol(t *testing.T) {
	bin := mcptest.Build(t, "github.com/mcp-fleet/mcp-fleet/servers/devtools/cmd/devtools-mcp")
	p := startProc(t, bin, benchRoot(t))
	defer p.stop()
	p.initialize(t)
	var resp struct {
		JSONRPC string `json:"jsonrpc"`
		Result  struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Size int `json:"size"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(p.roundTrip(t, "tools/call", readCall), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.JSONRPC != "2.0" || resp.Result.IsError || resp.Result.StructuredContent.Size != 1024 {
		t.Fatalf("unexpected response %+v", resp)
	}
}
