//go:build cpuprofile

// A CPU profile of a running process, for performance work: built only with
// -tags cpuprofile (the shipped binary has no such hook). Set
// AVINODE_CPU_PROFILE to the file to write; the profile starts after
// AVINODE_CPU_PROFILE_DELAY (default 0s) and is written after
// AVINODE_CPU_PROFILE_FOR (default 10s), while the process runs on, with
// what was allocated meanwhile beside it (the file's name plus .mem: bytes,
// objects, collections; plus .allocs: the allocation profile). The
// receiver under BenchmarkReceiverVsPgbench passes its RECEIVER_-prefixed
// copies of these on to the receiver process:
//
//	GOFLAGS=-tags=cpuprofile RECEIVER_AVINODE_CPU_PROFILE=/tmp/receiver.prof RECEIVER_AVINODE_CPU_PROFILE_DELAY=6s \
//	  go test ./servers/avinode/cmd/avinode-mcp -run '^$' -bench ReceiverVsPgbench -benchtime 1x
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

func init() {
	path := os.Getenv("AVINODE_CPU_PROFILE")
	if path == "" {
		return
	}
	duration := func(name string, def time.Duration) time.Duration {
		if v := os.Getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
				os.Exit(2)
			}
			return d
		}
		return def
	}
	delay, span := duration("AVINODE_CPU_PROFILE_DELAY", 0), duration("AVINODE_CPU_PROFILE_FOR", 10*time.Second)
	go func() {
		time.Sleep(delay)
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "AVINODE_CPU_PROFILE: %v\n", err)
			return
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "AVINODE_CPU_PROFILE: %v\n", err)
			return
		}
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		time.Sleep(span)
		pprof.StopCPUProfile()
		_ = f.Close()
		// Beside it, what was allocated meanwhile: bytes, objects and
		// collections (PATH.mem), and where (PATH.allocs, since start).
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		_ = os.WriteFile(path+".mem", fmt.Appendf(nil, "bytes %d\nobjects %d\ncollections %d\n",
			after.TotalAlloc-before.TotalAlloc, after.Mallocs-before.Mallocs, after.NumGC-before.NumGC), 0o644)
		if a, err := os.Create(path + ".allocs"); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(a, 0)
			_ = a.Close()
		}
	}()
}
