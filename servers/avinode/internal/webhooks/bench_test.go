package webhooks_test

import (
	"io"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks/webhookstest"
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
	var seq atomic.Int64
	post := func(n int) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				snd, err := webhookstest.Dial(host, user, secret, signing)
				if err != nil {
					b.Error(err)
					return
				}
				defer snd.Close()
				for next.Add(1) <= int64(n) {
					if err := snd.Post("amsg-" + strconv.FormatInt(seq.Add(1), 10)); err != nil {
						b.Error(err)
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
