package kit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// service is a spec whose setup registers a worker, a listener with the
// health report, and a health part the test can fail.
type service struct {
	workerStopped atomic.Bool
	workerErr     chan error
	addr          chan string
	health        *kit.Health
	commandRan    atomic.Bool
}

func newService() *service {
	return &service{workerErr: make(chan error, 1), addr: make(chan string, 1)}
}

func (sv *service) spec() kit.Spec {
	return kit.Spec{
		Info: kit.Info{Name: "svc", Version: "1"}, Summary: "a service",
		Setup: func(ctx context.Context, env *kit.Env) ([]kit.Tool, func(), error) {
			sv.health = env.Health
			env.AddWorker(kit.Worker{Name: "processor", Run: func(ctx context.Context) error {
				select {
				case <-ctx.Done():
					sv.workerStopped.Store(true)
					return nil
				case err := <-sv.workerErr:
					return err
				}
			}})
			mux := http.NewServeMux()
			mux.Handle("/healthz", env.Health.HealthHandler(map[string]any{"server": "svc"}))
			env.AddListener(kit.Listener{Name: "receiver", Addr: "127.0.0.1:0", Handler: mux,
				Ready: func(a net.Addr) { sv.addr <- a.String() }})
			return testTools(nil), nil, nil
		},
		Commands: []kit.Command{{Name: "greet", Summary: "say hello", ServerFlags: true,
			Flags: func(f *cli.Flags) {},
			Run: func(ctx context.Context, env *kit.Env) error {
				sv.commandRan.Store(true)
				if len(env.Args) > 0 && env.Args[0] == "fail" {
					return errors.New("asked to fail")
				}
				_, err := io.WriteString(env.Stdout, "hello "+strings.Join(env.Args, " ")+"\n")
				return err
			}}},
	}
}

func healthz(t *testing.T, addr string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func TestWorkersAndListenersStopTogether(t *testing.T) {
	sv := newService()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	defer inW.Close()
	done := make(chan error, 1)
	go func() {
		done <- kit.RunArgs(ctx, sv.spec(), nil, func(string) string { return "" }, inR, io.Discard, io.Discard)
	}()
	addr := <-sv.addr
	if code, m := healthz(t, addr); code != 200 || m["status"] != "ok" || !strings.Contains(strings.Join(toStrings(m["checked"]), ","), "worker processor") {
		t.Fatalf("healthz: %d %v", code, m)
	}
	sv.health.Set("feed", errors.New("upstream unreachable"))
	time.Sleep(1100 * time.Millisecond) // past the report's one-second cache
	code, m := healthz(t, addr)
	if code != 503 || m["status"] != "unavailable" || !strings.Contains(toJSON(m["failing"]), "upstream unreachable") {
		t.Fatalf("healthz after a failing part: %d %v", code, m)
	}
	cancel() // SIGTERM
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("a signal is a normal stop: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("did not stop within the grace period")
	}
	if !sv.workerStopped.Load() {
		t.Fatal("the worker was not stopped")
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Fatal("the listener still answers after shutdown")
	}
}

func TestDeadWorkerTakesTheProcessDown(t *testing.T) {
	sv := newService()
	var logs mcptest.Buffer
	inR, inW := io.Pipe()
	defer inW.Close()
	done := make(chan error, 1)
	go func() {
		done <- kit.RunArgs(context.Background(), sv.spec(), nil, func(string) string { return "" }, inR, io.Discard, &logs)
	}()
	<-sv.addr
	sv.workerErr <- errors.New("lost its database")
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "worker processor") || !strings.Contains(err.Error(), "lost its database") {
			t.Fatalf("error %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("a dead worker left the process running")
	}
	if !strings.Contains(logs.String(), "background worker died") {
		t.Fatalf("no clear log line:\n%s", logs.String())
	}
}

func TestSubcommands(t *testing.T) {
	sv := newService()
	var out, errOut bytes.Buffer
	code := kit.Main(sv.spec(), []string{"greet", "--log-level", "warn", "world"}, func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
	if code != 0 || out.String() != "hello world\n" {
		t.Fatalf("greet: %d %q %q", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := kit.Main(sv.spec(), []string{"greet", "--help"}, func(string) string { return "" }, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "svc-mcp greet") || !strings.Contains(out.String(), "--log-level") {
		t.Fatalf("greet --help: %d %q", code, out.String())
	}
	errOut.Reset()
	if code := kit.Main(sv.spec(), []string{"greet", "fail"}, func(string) string { return "" }, nil, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "asked to fail") {
		t.Fatalf("failing command: %d %q", code, errOut.String())
	}
	errOut.Reset()
	if code := kit.Main(sv.spec(), []string{"gret"}, func(string) string { return "" }, nil, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), `unknown command "gret"`) || !strings.Contains(errOut.String(), `did you mean "greet"`) {
		t.Fatalf("unknown command: %d %q", code, errOut.String())
	}
	errOut.Reset()
	if code := kit.Main(sv.spec(), []string{"greet", "--nope"}, func(string) string { return "" }, nil, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "unknown flag --nope") {
		t.Fatalf("bad command flag: %d %q", code, errOut.String())
	}
	out.Reset()
	if code := kit.Main(sv.spec(), []string{"--help"}, func(string) string { return "" }, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "Commands") || !strings.Contains(out.String(), "greet") || !strings.Contains(out.String(), "docs") {
		t.Fatalf("--help lists commands: %q", out.String())
	}
}

func TestDocsCommand(t *testing.T) {
	sv := newService()
	var out, errOut bytes.Buffer
	if code := kit.Main(sv.spec(), []string{"docs"}, func(string) string { return "" }, nil, &out, &errOut); code != 0 {
		t.Fatalf("docs: %d %s", code, errOut.String())
	}
	doc := out.String()
	for _, want := range []string{"## svc-mcp reference", "#### echo", "| `text` | string | yes |", "≥ 1", "one of plain, upper",
		"Effect: destructive, idempotent.", "`--transport`", "`MCP_TRANSPORT`", "`svc-mcp greet`", "`svc-mcp docs`"} {
		if !strings.Contains(doc, want) {
			t.Errorf("reference lacks %q", want)
		}
	}
	var again bytes.Buffer
	kit.Main(sv.spec(), []string{"docs"}, func(string) string { return "" }, nil, &again, &errOut)
	if again.String() != doc {
		t.Fatal("the reference is not deterministic")
	}
}

func toStrings(v any) []string {
	var out []string
	if a, ok := v.([]any); ok {
		for _, x := range a {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestCommandCleanupAndGrace(t *testing.T) {
	var cleaned []string
	spec := kit.Spec{Info: kit.Info{Name: "svc"}, Setup: func(ctx context.Context, env *kit.Env) ([]kit.Tool, func(), error) {
		return testTools(nil), nil, nil
	}, Commands: []kit.Command{{Name: "serve-side", ServerFlags: true, Run: func(ctx context.Context, env *kit.Env) error {
		env.AddCleanup(func() { cleaned = append(cleaned, "first") })
		env.AddCleanup(func() { cleaned = append(cleaned, "second") })
		return nil
	}}}}
	var out, errOut bytes.Buffer
	if code := kit.Main(spec, []string{"serve-side", "--shutdown-grace", "3s"}, func(string) string { return "" }, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if strings.Join(cleaned, ",") != "second,first" {
		t.Fatalf("cleanups ran %v, want the reverse of registration", cleaned)
	}
}

func TestHealthCommand(t *testing.T) {
	var status atomic.Int32
	status.Store(200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(int(status.Load()))
		_, _ = io.WriteString(w, `{"status":"x"}`)
	}))
	defer srv.Close()
	sv := newService()
	var out, errOut bytes.Buffer
	if code := kit.Main(sv.spec(), []string{"health", "--url", srv.URL + "/healthz"}, func(string) string { return "" }, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "status") {
		t.Fatalf("healthy: exit %d %q %q", code, out.String(), errOut.String())
	}
	status.Store(503)
	if code := kit.Main(sv.spec(), []string{"health", "--url", srv.URL + "/healthz"}, func(string) string { return "" }, nil, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "answered 503") {
		t.Fatalf("unhealthy: exit %d %q", code, errOut.String())
	}
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	env := map[string]string{"MCP_HOST": "0.0.0.0", "MCP_PORT": port}
	status.Store(200)
	if code := kit.Main(sv.spec(), []string{"health"}, func(k string) string { return env[k] }, nil, &out, &errOut); code != 0 {
		t.Fatalf("health from MCP_HOST/MCP_PORT (%s): exit %d %q", host, code, errOut.String())
	}
	var help bytes.Buffer
	kit.Main(sv.spec(), []string{"--help"}, func(string) string { return "" }, nil, &help, &errOut)
	if !strings.Contains(help.String(), "$MCP_DATA_DIR") || !strings.Contains(help.String(), "$SVC_DATA_DIR") {
		t.Fatalf("--help lacks the data directory variables:\n%s", help.String())
	}
}

// TestSecretFlagsAreRedacted: the values of a server's Secret flags — and
// the password inside one that is a URL — never reach its log, though the
// server did nothing to register them.
func TestSecretFlagsAreRedacted(t *testing.T) {
	var key, dbURL string
	spec := kit.Spec{Info: kit.Info{Name: "secretive", Version: "1"},
		Flags: func(f *cli.Flags) {
			f.Secret(&key, "SECRETIVE_KEY", "an API key")
			f.Secret(&dbURL, "SECRETIVE_DB", "a database URL")
		},
		Setup: func(ctx context.Context, env *kit.Env) ([]kit.Tool, func(), error) {
			env.Logger.Info().Str("key", key).Str("url", dbURL).Str("password", "hunter2-pass-word").Msg("careless")
			return nil, nil, errors.New("stop here")
		}}
	vars := map[string]string{"SECRETIVE_KEY": "sk-live-0123456789abcdef", "SECRETIVE_DB": "postgres://app:hunter2-pass-word@db/x"}
	var logs mcptest.Buffer
	err := kit.RunArgs(context.Background(), spec, nil, func(k string) string { return vars[k] }, strings.NewReader(""), io.Discard, &logs)
	if err == nil || !strings.Contains(logs.String(), "careless") {
		t.Fatalf("err %v, logs:\n%s", err, logs.String())
	}
	for _, secret := range []string{"sk-live-0123456789abcdef", "hunter2-pass-word"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("%q reached the log:\n%s", secret, logs.String())
		}
	}
}
