package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The abuse tests drive the built binary with hostile input, over stdio and
// HTTP, and read its memory from /proc: under any single hostile request or
// burst the process stays under memLimit, keeps answering pings, and gives
// its memory back afterwards.

const memLimitMiB = 256

// procMem reads VmRSS and VmHWM (peak) of pid in MiB.
func procMem(t *testing.T, pid int) (rss, peak int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "VmRSS:":
			rss = n / 1024
		case "VmHWM:":
			peak = n / 1024
		}
	}
	return rss, peak
}

// waitMem waits for the resident set to come back under mib.
func waitMem(t *testing.T, pid, mib int) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rss, _ := procMem(t, pid)
		if rss <= mib || time.Now().After(deadline) {
			return rss
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startRawStdio starts the binary with a data directory of its own and
// opens the session.
func startRawStdio(t *testing.T, args ...string) *rawProc {
	t.Helper()
	p := startRaw(t, "", []string{"MCP_DATA_DIR=" + t.TempDir()}, args...)
	p.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"abuse","version":"1"}}}`)
	p.recvID(t, "0")
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

func manyKeys(n int, known string) string {
	var b strings.Builder
	b.WriteString("{" + known)
	for i := 0; i < n; i++ {
		if i > 0 || known != "" {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	b.WriteString("}")
	return b.String()
}

func TestHostileRequestsStdio(t *testing.T) {
	p := startRawStdio(t, "--root", tempRoot(t))
	pid := p.cmd.Process.Pid
	base, _ := procMem(t, pid)

	// A million keys: refused at the message cap (about 12 MiB of keys fits
	// under it only just; the cap is the bound).
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"file_read","arguments":`+manyKeys(1_000_000, "")+`}}`)
	m := p.recvID(t, "<nil>")
	if m["error"] == nil || m["_bytes"].(int) > 1024 {
		t.Fatalf("a million keys: %v", m)
	}
	// 90 000 unknown keys under the cap: a validation error of bounded size.
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"file_read","arguments":`+manyKeys(90_000, `"path":"a.txt"`)+`}}`)
	m = p.recvID(t, "2")
	if m["_bytes"].(int) > 2048 || !strings.Contains(fmt.Sprint(m), "VALIDATION_ERROR") || !strings.Contains(fmt.Sprint(m), "89995 more") {
		t.Fatalf("90 000 keys: %d bytes: %.300v", m["_bytes"], m)
	}
	// 200 000 values in an array: refused by the decoder's budget, id kept.
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"file_read","arguments":{"path":[`+strings.Repeat("0,", 200_000)+`0]}}}`)
	if m = p.recvID(t, "3"); !strings.Contains(fmt.Sprint(m), "more than 100000 values") {
		t.Fatalf("200 000 values: %.300v", m)
	}
	// Nesting a million deep: an error with the request's id.
	p.send(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"file_read","arguments":{"path":`+strings.Repeat("[", 1_000_000)+strings.Repeat("]", 1_000_000)+`}}}`)
	if m = p.recvID(t, "4"); !strings.Contains(fmt.Sprint(m), "nested deeper") {
		t.Fatalf("deep nesting: %.300v", m)
	}
	// A 1 MiB tool name comes back cut.
	p.send(t, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"`+strings.Repeat("x", 1<<20)+`"}}`)
	if m = p.recvID(t, "5"); m["_bytes"].(int) > 512 {
		t.Fatalf("huge name echoed: %d bytes", m["_bytes"])
	}
	p.send(t, `{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	p.recvID(t, "6")
	_, peak := procMem(t, pid)
	t.Logf("stdio: resident at start %d MiB, peak %d MiB", base, peak)
	if peak > memLimitMiB {
		t.Fatalf("peak resident set %d MiB, limit %d MiB", peak, memLimitMiB)
	}
	if audit := p.stderr.String(); len(audit) > 64<<10 {
		t.Fatalf("the audit log grew by %d bytes for five hostile requests", len(audit))
	}
	if rss := waitMem(t, pid, base+16); rss > base+16 {
		t.Fatalf("memory not given back: %d MiB resident, %d MiB at start", rss, base)
	}
}

// httpServer runs the binary over streamable HTTP on a free port.
func httpServer(t *testing.T, args ...string) (*httpProc, *httpDriver) {
	t.Helper()
	proc := startHTTPProc(t, binary(t), []string{"MCP_AUTH_TOKEN=" + benchToken, "MCP_DATA_DIR=" + t.TempDir()},
		append([]string{"--transport", "http", "--port", "0"}, args...)...)
	d := newDriver(proc.base, benchToken, 64)
	d.initialize(t)
	return proc, d
}

func TestConcurrentLargeBodiesHTTP(t *testing.T) {
	proc, d := httpServer(t, "--root", tempRoot(t))
	pid := proc.cmd.Process.Pid
	base, _ := procMem(t, pid)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"file_write","arguments":{"path":"big.txt","overwrite":true,"content":"` +
		strings.Repeat("x", 15<<20) + `"}}}`
	// Each body stops after its first MiB until the pings are done: a ping
	// that had to wait for the bodies would never be answered (the client's
	// timeout fails the test), so the order is the assertion, not a time.
	held := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := 0; i < 40; i++ {
		wg.Go(func() {
			resp, _, err := d.postFrom(io.MultiReader(strings.NewReader(body[:1<<20]), gate(held), strings.NewReader(body[1<<20:])), int64(len(body)))
			if err != nil {
				// Refused before its body was read, the request's connection
				// is closed once the answer is written; a client still
				// sending 15 MiB may see the close (a broken pipe) before
				// the 503. Either way the server did not take the body.
				if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
					mu.Lock()
					statuses[-1]++
					mu.Unlock()
					return
				}
				t.Error(err)
				return
			}
			mu.Lock()
			statuses[resp.StatusCode]++
			if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
			mu.Unlock()
		})
	}
	// Pings get through while the bodies are in flight.
	ping := func(i int) {
		if resp, raw, err := d.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 100+i)); err != nil || resp.StatusCode != 200 ||
			!bytes.Contains(raw, []byte(`"result"`)) || bytes.Contains(raw, []byte(`"error"`)) {
			t.Fatalf("ping: %v %s", err, raw)
		}
	}
	pings := timePings(20, 5*time.Millisecond, ping)
	// And while the rest of the bodies stream in: answered, if slower (a
	// bound for a server stalled by the reading, far above a loaded run's).
	close(held)
	streaming := timePings(10, 5*time.Millisecond, ping)
	wg.Wait()
	if worst := streaming[len(streaming)-1]; worst > 5*time.Second {
		t.Fatalf("a ping waited %v while the bodies streamed", worst)
	}
	_, peak := procMem(t, pid)
	t.Logf("HTTP: 40 × 15 MiB bodies: statuses %v (-1: closed unread); peak %d MiB (start %d); ping p50 %v max %v", statuses, peak, base, pings[len(pings)/2], pings[len(pings)-1])
	if peak > memLimitMiB {
		t.Fatalf("peak resident set %d MiB, limit %d MiB", peak, memLimitMiB)
	}
	if statuses[http.StatusServiceUnavailable]+statuses[-1] == 0 || statuses[http.StatusOK] == 0 {
		t.Fatalf("want some bodies served and the rest refused as busy: %v", statuses)
	}
	if rss := waitMem(t, pid, base+16); rss > base+16 {
		t.Fatalf("memory not given back: %d MiB resident, %d MiB at start", rss, base)
	}
	// One hostile body of keys over HTTP.
	resp, raw, err := d.post(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"file_read","arguments":` + manyKeys(350_000, `"path":"a.txt"`) + `}}`)
	if err != nil || resp.StatusCode != 200 || len(raw) > 2048 || !bytes.Contains(raw, []byte("VALIDATION_ERROR")) {
		t.Fatalf("keys over HTTP: %v %d bytes %.300s", err, len(raw), raw)
	}
}

// gate is a reader that blocks until open is closed, then ends.
type gate <-chan struct{}

func (g gate) Read([]byte) (int, error) {
	<-g
	return 0, io.EOF
}

// timePings sends n pings through ping, pause apart, while a load is in
// flight, and returns how long each took, shortest first.
func timePings(n int, pause time.Duration, ping func(i int)) []time.Duration {
	pings := make([]time.Duration, 0, n)
	for i := range n {
		t0 := time.Now()
		ping(i)
		pings = append(pings, time.Since(t0))
		time.Sleep(pause)
	}
	slices.Sort(pings)
	return pings
}

// TestSlowCallBurst: a thousand slow calls at once are not a thousand
// calls at once: past the session's slots they wait briefly and are refused
// as retryable, and a ping never waits behind them — the slow page is held
// until the pings are answered (and for 3 s at least, which outlasts the
// calls' wait for a slot), so a ping queued behind the calls would never be.
func TestSlowCallBurst(t *testing.T) {
	var held chan struct{}
	var burst time.Time
	release := func() {
		time.Sleep(time.Until(burst.Add(3 * time.Second)))
		close(held)
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-held:
		case <-r.Context().Done():
		}
		_, _ = w.Write([]byte("late"))
	}))
	defer slow.Close()
	for _, transport := range []string{"stdio", "http"} {
		held = make(chan struct{})
		t.Run(transport, func(t *testing.T) {
			args := []string{"--root", tempRoot(t), "--web-allow-cidrs", "127.0.0.0/8"}
			call := func(i int) string {
				return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"web_fetch","arguments":{"url":%q,"format":"text"}}}`, 1000+i, slow.URL)
			}
			var pings []time.Duration
			var pid int
			limited, ok := 0, 0
			if transport == "stdio" {
				p := startRawStdio(t, args...)
				pid = p.cmd.Process.Pid
				burst = time.Now()
				for i := 0; i < 1000; i++ {
					p.send(t, call(i))
				}
				p.by = time.Now().Add(30 * time.Second) // a ping queued behind the calls would wait for ever
				pings = timePings(20, 20*time.Millisecond, func(i int) {
					p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":"ping-%d","method":"ping"}`, i))
					if m := p.recvID(t, fmt.Sprintf("ping-%d", i)); m["error"] != nil || m["result"] == nil {
						t.Fatalf("ping: %v", m)
					}
				})
				p.by = time.Time{}
				release()
				for got := 0; got < 1000; {
					line := p.next(t)
					var m map[string]any
					_ = json.Unmarshal(line, &m)
					id, _ := m["id"].(float64)
					if id < 1000 || id >= 2000 {
						continue
					}
					got++
					switch s := fmt.Sprint(m["result"]); {
					case strings.Contains(s, "RATE_LIMIT_ERROR"):
						limited++
					case strings.Contains(s, "late"):
						ok++
					default:
						t.Logf("unexpected answer: %.200s", line)
					}
				}
			} else {
				proc, d := httpServer(t, args...)
				pid = proc.cmd.Process.Pid
				// The burst gets a connection per call; pings their own client,
				// so they measure the server, not the client's pool.
				callers := newDriver(proc.base, benchToken, 1000)
				callers.sid = d.sid
				var wg sync.WaitGroup
				var mu sync.Mutex
				burst = time.Now()
				for i := 0; i < 1000; i++ {
					wg.Go(func() {
						_, raw, err := callers.post(call(i))
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err != nil:
							t.Errorf("call: %v", err)
						case bytes.Contains(raw, []byte("RATE_LIMIT_ERROR")):
							limited++
						case bytes.Contains(raw, []byte("late")):
							ok++
						default:
							t.Logf("unexpected answer: %.200s", raw)
						}
					})
				}
				time.Sleep(100 * time.Millisecond)
				pings = timePings(20, 20*time.Millisecond, func(i int) {
					if resp, raw, err := d.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","method":"ping"}`, i)); err != nil || resp.StatusCode != 200 ||
						!bytes.Contains(raw, []byte(`"result"`)) || bytes.Contains(raw, []byte(`"error"`)) {
						t.Fatalf("ping: %v %s", err, raw)
					}
				})
				release()
				wg.Wait()
			}
			_, peak := procMem(t, pid)
			t.Logf("%s: 1000 slow calls: %d served, %d refused as busy; peak %d MiB; ping p50 %v p95 %v max %v",
				transport, ok, limited, peak, pings[len(pings)/2], pings[len(pings)*95/100], pings[len(pings)-1])
			if ok == 0 || limited == 0 || ok+limited != 1000 {
				t.Fatalf("served %d, refused %d of 1000", ok, limited)
			}
			if ok > 64 {
				t.Fatalf("%d slow calls ran: the caps did not hold", ok)
			}
			if peak > memLimitMiB {
				t.Fatalf("peak %d MiB", peak)
			}
		})
	}
}

// protocolCases are messages the specification answers with an error the
// client can match to its request wherever the id could be read; a
// notification is never answered.
var protocolCases = []struct {
	name, line string
	code       float64
	id         any
}{
	{"empty method", `{"jsonrpc":"2.0","id":31,"method":""}`, -32600, 31.0},
	{"batch", `[{"jsonrpc":"2.0","id":32,"method":"ping"}]`, -32600, nil},
	{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, nil},
	{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, nil},
	{"unknown method", `{"jsonrpc":"2.0","id":33,"method":"nope"}`, -32601, 33.0},
	{"params not an object", `{"jsonrpc":"2.0","id":34,"method":"tools/list","params":7}`, -32600, 34.0},
}

func TestProtocolAnswersBinary(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		p := startRawStdio(t, "--root", tempRoot(t))
		for _, c := range protocolCases {
			p.send(t, c.line)
			p.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":"malformed"}`)
			m := p.recvID(t, fmt.Sprint(c.id))
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != c.code {
				t.Errorf("%s: %v", c.name, m)
			}
		}
		// The malformed notifications were never answered: the next answer
		// is the ping's.
		p.send(t, `{"jsonrpc":"2.0","id":"last","method":"ping"}`)
		if line := p.next(t); !bytes.Contains(line, []byte(`"id":"last"`)) {
			t.Fatalf("an extra answer arrived: %s", line)
		}
	})
	t.Run("http", func(t *testing.T) {
		_, d := httpServer(t, "--root", tempRoot(t))
		for _, c := range protocolCases {
			resp, raw, err := d.post(c.line)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != c.code || m["id"] != c.id || (c.code == -32600 && resp.StatusCode != http.StatusBadRequest) {
				t.Errorf("%s: %d %s", c.name, resp.StatusCode, raw)
			}
		}
		if resp, raw, _ := d.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"malformed"}`); resp.StatusCode != http.StatusAccepted || len(raw) != 0 {
			t.Fatalf("a malformed notification was answered: %d %s", resp.StatusCode, raw)
		}
	})
}
