package tools_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/fsroot"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
)

type systemInfoOut = tools.SystemInfoResult

// toolOf is name's entry in a system_health result.
func toolOf(h tools.HealthResult, name string) (metrics.ToolSnapshot, bool) {
	for _, t := range h.Tools {
		if t.Tool == name {
			return t, true
		}
	}
	return metrics.ToolSnapshot{}, false
}

// hasUptime: the result states uptime_seconds, zero included.
func hasUptime(res *mcp.CallToolResult) bool {
	m, _ := res.StructuredContent.(map[string]any)
	_, has := m["uptime_seconds"]
	return has
}

func TestSystemInfo(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t)
	var out systemInfoOut
	res := e.c.Call("system_info", map[string]any{})
	ok(t, res, &out)
	host, _ := os.Hostname()
	want := systemInfoOut{Server: "devtools", Version: "1.2.3", Commit: "abc1234", OS: runtime.GOOS, Arch: runtime.GOARCH,
		GoVersion: runtime.Version(), CPUs: runtime.NumCPU(), PID: os.Getpid(), Hostname: host}
	got := out
	got.StartedAt, got.UptimeSec, got.Roots = "", 0, nil
	if got.Server != want.Server || got.Version != want.Version || got.Commit != want.Commit || got.OS != want.OS ||
		got.Arch != want.Arch || got.GoVersion != want.GoVersion || got.CPUs != want.CPUs || got.PID != want.PID || got.Hostname != want.Hostname {
		t.Errorf("system_info = %+v, want %+v", got, want)
	}
	started, err := time.Parse(time.RFC3339, out.StartedAt)
	if err != nil || started.After(time.Now()) || time.Since(started) > time.Hour {
		t.Errorf("started_at %q: %v", out.StartedAt, err)
	}
	if started.Truncate(time.Second) != e.reg.Started().UTC().Truncate(time.Second) {
		t.Errorf("started_at %v, registry started %v", started, e.reg.Started())
	}
	if !hasUptime(res) || out.UptimeSec < 0 {
		t.Errorf("uptime_seconds = %v", out.UptimeSec)
	}
	if !slices.Equal(out.Roots, []string{e.root}) {
		t.Errorf("roots = %q, want [%q]", out.Roots, e.root)
	}
	t.Run("no arguments at all", func(t *testing.T) {
		ok(t, e.c.Call("system_info", nil), &out)
	})
}

// TestSystemInfoRoots: every root is reported, the one relative paths use
// first, deduplicated, as absolute paths.
func TestSystemInfoRoots(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	must(t, os.Mkdir(a, 0o755))
	must(t, os.Mkdir(b, 0o755))
	must(t, os.Symlink(a, filepath.Join(base, "a-link")))
	fsys, err := fsroot.Open([]string{b, a, filepath.Join(base, "a-link"), b + "/"}, fsroot.Limits{})
	must(t, err)
	t.Cleanup(func() { _ = fsys.Close() })
	reg := metrics.New("devtools")
	s, err := kit.New(kit.Info{Name: "devtools"}, tools.SystemTools(tools.SystemDeps{Info: kit.Info{Name: "devtools"}, Metrics: reg, Roots: tools.NewRoots(fsys, true, nil)}),
		kit.Options{Metrics: reg})
	must(t, err)
	c := mcptest.NewInProcess(t, s, "")
	var out systemInfoOut
	ok(t, c.Call("system_info", map[string]any{}), &out)
	if !slices.Equal(out.Roots, []string{b, a}) {
		t.Errorf("roots = %q, want %q", out.Roots, []string{b, a})
	}
}

func TestSystemHealth(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t)
	var first tools.HealthResult
	ok(t, e.c.Call("system_health", map[string]any{}), &first)
	if first.TotalCalls != 0 || first.TotalErrs != 0 {
		t.Errorf("before any call: total_calls %d total_errors %d", first.TotalCalls, first.TotalErrs)
	}
	for range 3 {
		ok(t, e.c.Call("file_read", map[string]any{"path": "hello.txt"}), nil)
	}
	mcptest.FailCode(t, e.c.Call("file_read", map[string]any{"path": "nope.txt"}), mcperr.NotFound)
	mcptest.FailCode(t, e.c.Call("file_read", map[string]any{"path": "../x"}), mcperr.PermissionDeny)
	mcptest.FailCode(t, e.c.Call("file_write", map[string]any{"path": "x"}), mcperr.Validation)
	ok(t, e.c.Call("file_list", nil), nil)
	// The kit records a call's metrics just after its response is written:
	// let the last ones land before asking.
	waitCalls(t, e.reg, 8)

	var h tools.HealthResult
	res := e.c.Call("system_health", nil)
	ok(t, res, &h)
	if h.Status != "ok" || !hasUptime(res) || h.UptimeSec < 0 || h.Goroutines <= 0 || h.HeapBytes == 0 || h.SysBytes < h.HeapBytes {
		t.Errorf("health = status %q uptime %v goroutines %d heap %d sys %d", h.Status, h.UptimeSec, h.Goroutines, h.HeapBytes, h.SysBytes)
	}
	// The first system_health call is counted; this one is not yet.
	if h.TotalCalls != 8 || h.TotalErrs != 3 {
		t.Errorf("total_calls %d total_errors %d, want 8 and 3", h.TotalCalls, h.TotalErrs)
	}
	var names []string
	for _, ts := range h.Tools {
		names = append(names, ts.Tool)
	}
	wantNames := []string{"file_delete", "file_info", "file_list", "file_read", "file_search", "file_write", "system_health", "system_info"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("tools = %q, want every registered tool, sorted: %q", names, wantNames)
	}
	tests := []struct {
		tool   string
		calls  uint64
		byCode map[string]uint64
	}{
		{"file_read", 5, map[string]uint64{"NOT_FOUND": 1, "PERMISSION_DENIED": 1}},
		{"file_write", 1, map[string]uint64{"VALIDATION_ERROR": 1}},
		{"file_list", 1, nil},
		{"system_health", 1, nil},
		{"file_delete", 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			ts, found := toolOf(h, tc.tool)
			if !found {
				t.Fatalf("%s missing from %+v", tc.tool, h.Tools)
			}
			var errs uint64
			for _, n := range tc.byCode {
				errs += n
			}
			if ts.Calls != tc.calls || ts.Errors != errs || len(ts.ByCode) != len(tc.byCode) {
				t.Errorf("%+v, want calls %d errors_by_code %v", ts, tc.calls, tc.byCode)
			}
			for code, n := range tc.byCode {
				if ts.ByCode[code] != n {
					t.Errorf("errors_by_code[%s] = %d, want %d", code, ts.ByCode[code], n)
				}
			}
			if tc.calls == 0 {
				if ts.P50Ms != 0 || ts.MeanMs != 0 || ts.LastCall != nil {
					t.Errorf("uncalled tool has numbers: %+v", ts)
				}
				return
			}
			if ts.P50Ms <= 0 || ts.P95Ms < ts.P50Ms || ts.P99Ms < ts.P95Ms || ts.MeanMs <= 0 {
				t.Errorf("latencies p50 %v p95 %v p99 %v mean %v", ts.P50Ms, ts.P95Ms, ts.P99Ms, ts.MeanMs)
			}
			if ts.LastCall == nil || time.Since(*ts.LastCall) > time.Minute {
				t.Errorf("last_call = %v", ts.LastCall)
			}
		})
	}
}

func TestSystemToolsBadArguments(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t)
	tests := []struct {
		tool  string
		args  map[string]any
		field string
	}{
		{"system_info", map[string]any{"verbose": true}, "verbose"},
		{"system_info", map[string]any{"roots": []string{"/"}}, "roots"},
		{"system_health", map[string]any{"tool": "file_read"}, "tool"},
	}
	for _, tc := range tests {
		t.Run(tc.tool+"/"+tc.field, func(t *testing.T) {
			b := mcptest.FailCode(t, e.c.Call(tc.tool, tc.args), mcperr.Validation)
			if b.Data.Field != tc.field {
				t.Errorf("field = %q, want %q (message %q)", b.Data.Field, tc.field, b.Message)
			}
		})
	}
}

// waitCalls waits until the registry has recorded n calls in all (the wait
// only guards against a hang).
func waitCalls(t *testing.T, reg *metrics.Registry, n uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var total uint64
		for _, ts := range reg.Snapshot() {
			total += ts.Calls
		}
		if total >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls recorded, want %d", total, n)
		}
		time.Sleep(time.Millisecond)
	}
}
