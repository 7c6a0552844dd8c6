package tools

import (
	"context"
	"os"
	"runtime"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
)

// SystemDeps is what the system tools report on.
type SystemDeps struct {
	Info    kit.Info
	Metrics *metrics.Registry
	// Roots are the roots system_info reports, as the calling client sees
	// them.
	Roots *Roots
}

// SystemTools returns system_info and system_health.
func SystemTools(d SystemDeps) []kit.Tool {
	return []kit.Tool{systemInfo(d), systemHealth(d)}
}

// noArgs is the arguments of a tool that takes none.
type noArgs struct{}

type systemInfoResult struct {
	Server    string   `json:"server"`
	Version   string   `json:"version"`
	Commit    string   `json:"commit"`
	OS        string   `json:"os"`
	Arch      string   `json:"arch"`
	GoVersion string   `json:"go_version"`
	CPUs      int      `json:"cpus"`
	PID       int      `json:"pid"`
	Hostname  string   `json:"hostname"`
	StartedAt string   `json:"started_at"`
	UptimeSec float64  `json:"uptime_seconds"`
	Roots     []string `json:"roots"`
}

func systemInfo(d SystemDeps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:        "system_info",
		Title:       "System information",
		Description: "Describe the machine and this server: OS, architecture, CPUs, Go version, server version, uptime and the root directories the file tools may use.",
		Effect:      kit.ReadOnly,
	}, func(ctx context.Context, c *kit.Call, _ noArgs) (systemInfoResult, error) {
		scope, err := d.Roots.For(ctx, c)
		if err != nil {
			return systemInfoResult{}, err
		}
		defer scope.Release()
		host, _ := os.Hostname()
		started := d.Metrics.Started()
		return systemInfoResult{
			Server: d.Info.Name, Version: d.Info.Version, Commit: d.Info.Commit,
			OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version(), CPUs: runtime.NumCPU(),
			PID: os.Getpid(), Hostname: host, StartedAt: started.UTC().Format(time.RFC3339),
			UptimeSec: time.Since(started).Round(time.Millisecond).Seconds(), Roots: scope.FS.Roots(),
		}, nil
	})
}

type healthResult struct {
	Status     string                 `json:"status"`
	UptimeSec  float64                `json:"uptime_seconds"`
	Goroutines int                    `json:"goroutines"`
	HeapBytes  uint64                 `json:"heap_alloc_bytes"`
	SysBytes   uint64                 `json:"sys_bytes"`
	TotalCalls uint64                 `json:"total_calls"`
	TotalErrs  uint64                 `json:"total_errors"`
	Tools      []metrics.ToolSnapshot `json:"tools"`
}

func systemHealth(d SystemDeps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:        "system_health",
		Title:       "Server health",
		Description: "Report this server's health: status, uptime, memory, and per-tool call counts, errors by code and latency percentiles (p50/p95/p99, milliseconds).",
		Effect:      kit.ReadOnly,
	}, func(ctx context.Context, _ *kit.Call, _ noArgs) (healthResult, error) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		snap := d.Metrics.Snapshot()
		r := healthResult{Status: "ok", UptimeSec: time.Since(d.Metrics.Started()).Round(time.Millisecond).Seconds(),
			Goroutines: runtime.NumGoroutine(), HeapBytes: ms.HeapAlloc, SysBytes: ms.Sys, Tools: snap}
		for _, t := range snap {
			r.TotalCalls += t.Calls
			r.TotalErrs += t.Errors
		}
		return r, nil
	})
}
