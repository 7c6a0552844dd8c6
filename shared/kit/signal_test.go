package kit_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

var (
	sideAddrRE = regexp.MustCompile(`"side_addr":"([^"]+)"`)
	addrRE     = regexp.MustCompile(`"addr":"([^"]+)"`)
)

// TestSignalStopsWorkerAndListener runs the kit's test server as a real
// process over streamable HTTP with a worker and a side listener: /healthz
// answers 200, then 503 naming the worker once it reports being stuck; a
// SIGTERM stops the transport, the worker and the listener within the grace
// period, a call in flight still finishes, and the exit status is 0.
func TestSignalStopsWorkerAndListener(t *testing.T) {
	bin := mcptest.Build(t, "github.com/mcp-fleet/mcp-fleet/shared/kit/internal/testserver")
	cmd := exec.Command(bin, "--transport", "http", "--port", "0", "--shutdown-grace", "5s")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "MCP_AUTH_TOKEN=" + httpToken}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	var mcpAddr, sideAddr string
	logs := make(chan string, 1000)
	sc := bufio.NewScanner(stderr)
	for (mcpAddr == "" || sideAddr == "") && sc.Scan() {
		line := sc.Text()
		if m := sideAddrRE.FindStringSubmatch(line); m != nil {
			sideAddr = m[1]
		}
		if m := addrRE.FindStringSubmatch(line); m != nil && strings.Contains(line, "/mcp") {
			mcpAddr = m[1]
		}
	}
	go func() {
		for sc.Scan() {
			logs <- sc.Text()
		}
		close(logs)
	}()
	health := func() (int, string) {
		resp, err := http.Get("http://" + sideAddr + "/healthz")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		b, _ := json.Marshal(m)
		return resp.StatusCode, string(b)
	}
	mcptest.WaitFor(t, "a healthy worker", func() bool { code, _ := health(); return code == 200 })
	base := "http://" + mcpAddr
	sid := initSession(t, base, httpToken)
	if r := post(t, base, httpToken, sid, rpcCall(2, "tools/call", `{"name":"break_worker"}`)); r.Status != 200 {
		t.Fatalf("break_worker: %d %s", r.Status, r.Body)
	}
	mcptest.WaitFor(t, "/healthz to name the stuck worker", func() bool {
		code, body := health()
		return code == 503 && strings.Contains(body, "worker ticker") && strings.Contains(body, "ticker is stuck")
	})

	// A call in flight when the signal comes still gets its answer.
	done := make(chan httpResult, 1)
	go func() {
		done <- post(t, base, httpToken, sid, rpcCall(3, "tools/call", `{"name":"sleep","arguments":{"ms":600}}`))
	}()
	for sleeping := false; !sleeping; {
		select {
		case l, ok := <-logs:
			if !ok {
				t.Fatal("the server exited before the call was in flight")
			}
			sleeping = strings.Contains(l, `"message":"sleeping"`)
		case r := <-done:
			t.Fatalf("the call ended before it slept: %d %s", r.Status, r.Body)
		case <-time.After(10 * time.Second):
			t.Fatal("the call never reached the server")
		}
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.Status != 200 || !strings.Contains(r.Body, "slept_ms") {
		t.Fatalf("the call in flight was cut: %d %s", r.Status, r.Body)
	}
	err := cmd.Wait()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	if took > 5*time.Second {
		t.Fatalf("shutdown took %v, grace 5s", took)
	}
	stopped := false
	for l := range logs {
		if strings.Contains(l, "ticker stopped") {
			stopped = true
		}
	}
	if !stopped {
		t.Fatal("the worker was not stopped")
	}
	if code, _ := health(); code != 0 {
		t.Fatal("the side listener still answers")
	}
}

// TestBurstToSlowSubscriber: 10 000 updates to 100 URIs while the
// subscriber reads nothing: afterwards every URI's update arrives, none is
// dropped, and the process stays small (from /proc).
func TestBurstToSlowSubscriber(t *testing.T) {
	bin := mcptest.Build(t, "github.com/mcp-fleet/mcp-fleet/shared/kit/internal/testserver")
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	r := bufio.NewReaderSize(out, 1<<20)
	send := func(s string) {
		if _, err := in.Write([]byte(s + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	readLine := func() map[string]any {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(line, &m)
		return m
	}
	send(initLine)
	readLine()
	for i := 0; i < 100; i++ {
		send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(10+i) + `,"method":"resources/subscribe","params":{"uri":"counter://` + strconv.Itoa(i) + `"}}`)
		readLine()
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bump","arguments":{"updates":10000,"uris":100}}}`)
	time.Sleep(time.Second) // a slow subscriber: nothing read while the burst happens
	seen := map[string]bool{}
	answered := false
	for !answered || len(seen) < 100 {
		m := readLine()
		if m["method"] == "notifications/resources/updated" {
			seen[m["params"].(map[string]any)["uri"].(string)] = true
		}
		if m["id"] == 1.0 {
			answered = true
		}
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var peak int
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "VmHWM:" {
			peak, _ = strconv.Atoi(f[1])
		}
	}
	t.Logf("10 000 updates to 100 URIs, slow subscriber: peak resident set %d MiB", peak/1024)
	if peak > 40<<10 {
		t.Fatalf("peak resident set %d KiB, want under 40 MiB", peak)
	}
	// Each URI's last state is readable and every update was delivered or
	// coalesced, none dropped.
	send(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"counter://99"}}`)
	for {
		m := readLine()
		if m["id"] == 2.0 {
			if !strings.Contains(fmt.Sprint(m["result"]), "text:100") {
				t.Fatalf("counter 99: %v", m)
			}
			break
		}
	}
}
