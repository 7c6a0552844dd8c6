package webhooks_test

import (
	"bufio"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
	"github.com/mcp-fleet/mcp-fleet/shared/ratelimit"
)

// BenchmarkReceive is the receiver in process on PostgreSQL: 16 senders on
// their own keep-alive connections post signed notifications (HTTP Basic
// and the HMAC header, as BenchmarkReceiverVsPgbench's do), each answered
// once stored, with the audit lines logged through a redacting logger. It
// reports what one answer costs this process — the receiver and the
// senders, whose share does not change with the receiver — in allocations
// and CPU time (cpu-µs/op, from getrusage); ns/op is the wall time per
// answer at 16 senders.
func BenchmarkReceive(b *testing.B) {
	const signing = "signing-secret-5d0c8e1f"
	st := storetest.NewDB(b, "postgres").Open(b, store.Options{})
	log := logging.New(io.Discard, "info", logging.NewRedactor(secret, signing), "avinode")
	rc, err := webhooks.NewReceiver(webhooks.ReceiverConfig{Store: st, ClientID: user, ClientSecret: secret, SigningSecret: signing,
		Rate: ratelimit.Rate{PerMinute: 1e9, Burst: 1e6}, Logger: &log, Metrics: metrics.New("avinode")})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	host := srv.Listener.Addr().String()
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+secret))
	var seq atomic.Int64
	post := func(n int) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				conn, err := net.Dial("tcp", host)
				if err != nil {
					b.Error(err)
					return
				}
				defer conn.Close()
				r := bufio.NewReader(conn)
				var req []byte
				for next.Add(1) <= int64(n) {
					id := "amsg-" + strconv.FormatInt(seq.Add(1), 10)
					body := `{"id":"` + id + `","href":"http://127.0.0.1:40000/tripmsgs/` + id + `","type":"tripmsgs","tripId":"T00001"}`
					req = append(req[:0], "POST "+webhooks.Path+" HTTP/1.1\r\nHost: "+host+"\r\nContent-Type: application/json\r\nAuthorization: "+
						auth+"\r\n"+webhooks.DefaultSignatureHeader+": "+webhooks.Sign(signing, []byte(body))+
						"\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body...)
					if _, err := conn.Write(req); err != nil {
						b.Error(err)
						return
					}
					resp, err := http.ReadResponse(r, nil)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Errorf("%s answered %d", id, resp.StatusCode)
						return
					}
				}
			})
		}
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
	}
	post(500) // connections made, code paths hot
	b.ReportAllocs()
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	post(b.N)
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano()
	b.ReportMetric(float64(cpu)/1e3/float64(b.N), "cpu-µs/op")
}
