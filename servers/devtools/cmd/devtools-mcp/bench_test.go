package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// startProc starts the built binary on real pipes, serving root. Default
// log level: the audit line of every call is part of the cost.
func startProc(tb testing.TB, bin, root string) *mcptest.Proc {
	tb.Helper()
	return mcptest.StartProc(tb, bin, []string{"HOME=" + root}, "--root", root)
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

// BenchmarkStdioFileRead1KiB is a full round trip of file_read on a 1 KiB
// file over real pipes to the built binary: JSON-RPC in, kit pipeline,
// os.Root read, JSON-RPC out. It reports p50/p95/p99 per call besides the mean.
func BenchmarkStdioFileRead1KiB(b *testing.B) {
	bin := mcptest.Build(b, "github.com/mcp-fleet/mcp-fleet/servers/devtools/cmd/devtools-mcp")
	p := startProc(b, bin, benchRoot(b))
	defer p.Stop()
	p.Initialize(b)
	for i := 0; i < 200; i++ { // warm up
		p.RoundTrip(b, "tools/call", readCall)
	}
	mcptest.Measure(b, func() { p.Call(b, readCall) })
}

// BenchmarkColdStart measures exec of the binary to the initialize response.
func BenchmarkColdStart(b *testing.B) {
	bin := mcptest.Build(b, "github.com/mcp-fleet/mcp-fleet/servers/devtools/cmd/devtools-mcp")
	root := benchRoot(b)
	for i := 0; i < b.N; i++ {
		p := startProc(b, bin, root)
		line := p.RoundTrip(b, "initialize", mcptest.InitializeParams)
		if !bytes.Contains(line, []byte(`"serverInfo"`)) {
			b.Fatalf("bad initialize response: %s", line)
		}
		b.StopTimer()
		p.Stop()
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
		p.Initialize(b)
		p.RoundTrip(b, "ping", "{}")
		var err error
		if start, err = rssKiB(p.Pid()); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 10000; j++ {
			p.RoundTrip(b, "tools/call", readCall)
		}
		if rss, err = rssKiB(p.Pid()); err != nil {
			b.Fatal(err)
		}
		p.Stop()
	}
	b.ReportMetric(float64(start)/1024, "RSS-start-MiB")
	b.ReportMetric(float64(rss)/1024, "RSS-MiB")
}

// TestStdioDriverSeesCleanProtocol keeps the benchmark driver honest: every
// stdout line it reads must be a JSON-RPC response.
func TestStdioDriverSeesCleanProtocol(t *testing.T) {
	bin := mcptest.Build(t, "github.com/mcp-fleet/mcp-fleet/servers/devtools/cmd/devtools-mcp")
	p := startProc(t, bin, benchRoot(t))
	defer p.Stop()
	p.Initialize(t)
	var resp struct {
		JSONRPC string `json:"jsonrpc"`
		Result  struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Size int `json:"size"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(p.RoundTrip(t, "tools/call", readCall), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.JSONRPC != "2.0" || resp.Result.IsError || resp.Result.StructuredContent.Size != 1024 {
		t.Fatalf("unexpected response %+v", resp)
	}
}
