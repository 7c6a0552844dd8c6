package kit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/engine"
	"github.com/rs/zerolog"
)

// Worker is a background task that runs as long as the server: a webhook
// processor, a poller, a cache refresher. Run should return nil only once
// ctx has ended; returning earlier, with or without an error, means the
// worker died, and a dead worker takes the process down (after marking
// /healthz unavailable and logging why) rather than leaving a half-alive
// server.
type Worker struct {
	Name string
	Run  func(ctx context.Context) error
}

// Listener is an extra HTTP listener beside the MCP transport, such as a
// webhook receiver. It is started with the transport and shut down with it.
type Listener struct {
	Name    string
	Addr    string
	Handler http.Handler
	// Ready, when set, learns the address (useful with port 0).
	Ready func(addr net.Addr)
}

// group runs the transport, listeners and workers of one process under one
// context: the first to fail stops the rest; a signal stops them all; each
// gets the grace period to finish what it is doing.
type group struct {
	log    *zerolog.Logger
	health *Health
	grace  time.Duration
	mu     sync.Mutex
	errs   []error
}

// run starts every part and waits for all of them. ctx ending is a normal
// stop; the first part to end otherwise stops the others.
func (g *group) run(ctx context.Context, main func(ctx context.Context) error, listeners []Listener, workers []Worker) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	fail := func(what string, err error) {
		g.mu.Lock()
		g.errs = append(g.errs, fmt.Errorf("%s: %w", what, err))
		g.mu.Unlock()
		stop()
	}
	for _, l := range listeners {
		ln, err := net.Listen("tcp", l.Addr)
		if err != nil {
			stop()
			wg.Wait()
			return fmt.Errorf("listener %s: listen on %s: %w", l.Name, l.Addr, err)
		}
		g.log.Info().Str("listener", l.Name).Str("addr", ln.Addr().String()).Msg("listening")
		if l.Ready != nil {
			l.Ready(ln.Addr())
		}
		wg.Go(func() {
			if err := engine.ServeListener(ctx, ln, l.Handler, g.grace, nil); err != nil {
				fail("listener "+l.Name, err)
			}
		})
	}
	for _, w := range workers {
		g.health.Set("worker "+w.Name, nil)
		wg.Go(func() {
			err := runWorker(ctx, w)
			if ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled)) {
				return // stopped, as asked
			}
			if err == nil {
				err = errors.New("stopped on its own")
			}
			g.health.Set("worker "+w.Name, err)
			g.log.Error().Str("worker", w.Name).Err(err).Msg("background worker died; shutting the server down")
			fail("worker "+w.Name, err)
		})
	}
	if main != nil {
		wg.Go(func() {
			err := main(ctx)
			if err != nil {
				fail("server", err)
			}
			stop() // the transport ended (stdin closed): stop the rest
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		timer := time.NewTimer(g.grace + time.Second)
		defer timer.Stop()
		select {
		case <-done:
		case <-timer.C:
			g.mu.Lock()
			g.errs = append(g.errs, fmt.Errorf("some parts did not stop within the %s grace period", g.grace))
			g.mu.Unlock()
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return errors.Join(g.errs...)
}

// runWorker runs one worker, turning a panic into an error.
func runWorker(ctx context.Context, w Worker) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panicked: %v", p)
		}
	}()
	return w.Run(ctx)
}
