package database

import (
	"sync"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

// TestMain shares one throwaway PostgreSQL cluster among the tests.
func TestMain(m *testing.M) { pgtest.Main(m) }

// concurrently runs call(worker, round) for rounds rounds in each of workers
// goroutines at once, as clients sharing one DB would, and reports every
// error a call returns.
func concurrently(t *testing.T, workers, rounds int, call func(worker, round int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range rounds {
				if err := call(i, j); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
