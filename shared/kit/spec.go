package kit

import (
	"cmp"
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/mcp-fleet/mcp-fleet/shared/buildinfo"
	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/datadir"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
	"github.com/rs/zerolog"
)

// Spec describes a server binary to Main. An empty Info.Version or
// Info.Commit is the one the binary was linked with (shared/buildinfo).
type Spec struct {
	Info
	Summary     string // one line for --help
	DefaultPort int
	// Flags registers the server's own flags.
	Flags func(f *cli.Flags)
	// Setup builds the server's tools once flags are parsed, and may add
	// resources, workers, listeners and health checks through env. The
	// returned cleanup runs after everything has stopped.
	Setup func(ctx context.Context, env *Env) (tools []Tool, cleanup func(), err error)
	// Commands are subcommands: `<server>-mcp <name> [flags]`. Every
	// server also has "docs" (the Markdown reference).
	Commands []Command
}

// Command is a subcommand, such as `gmail-mcp auth` or `avinode-mcp
// webhooks`. It has its own flags and --help; with ServerFlags it also
// accepts the server's flags (credentials, data directory…) and logging.
// A command that registers workers or listeners on env keeps running them,
// under the same signals and grace period as the server, after Run returns.
type Command struct {
	Name    string
	Summary string
	Flags   func(f *cli.Flags)
	// ServerFlags: also accept Spec.Flags and --log-level.
	ServerFlags bool
	Run         func(ctx context.Context, env *Env) error
}

// Env is what Setup and commands get: the process's configuration and
// shared services, and the places to register what runs beside the tools.
type Env struct {
	Info     Info
	Getenv   func(string) string
	Logger   *zerolog.Logger
	Redactor *logging.Redactor
	Metrics  *metrics.Registry
	Notifier *Notifier
	Health   *Health
	// ReadOnly tells a server that only read-only tools will be served, so it
	// can open its backend read-only too.
	ReadOnly bool
	// Stdout is where a command writes its output (not the MCP stream).
	Stdout io.Writer
	// Args are a command's positional arguments.
	Args []string

	resources []Resource
	templates []ResourceTemplate
	workers   []Worker
	listeners []Listener
	cleanups  []func()
}

// AddCleanup runs fn once everything has stopped (after the transport, the
// workers and the listeners), in the reverse order of registration. A
// command uses it to close what its workers shared.
func (e *Env) AddCleanup(fn func()) { e.cleanups = append(e.cleanups, fn) }

func (e *Env) cleanup() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

// DataDir returns (and creates, 0700) the server's local state directory.
func (e *Env) DataDir() (string, error) {
	getenv := e.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return datadir.Ensure(e.Info.Name, getenv)
}

// DataPath is where the server keeps a file or directory a flag may place
// elsewhere: path when it is set, else name in the data directory (which
// it creates, as DataDir does).
func (e *Env) DataPath(path, name string) (string, error) {
	if path != "" {
		return path, nil
	}
	dir, err := e.DataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// AddResource serves a static resource beside the tools.
func (e *Env) AddResource(r Resource) { e.resources = append(e.resources, r) }

// AddTemplate serves a resource template beside the tools.
func (e *Env) AddTemplate(t ResourceTemplate) { e.templates = append(e.templates, t) }

// AddWorker runs a background worker for as long as the process serves.
func (e *Env) AddWorker(w Worker) { e.workers = append(e.workers, w) }

// AddListener serves an extra HTTP listener beside the transport.
func (e *Env) AddListener(l Listener) { e.listeners = append(e.listeners, l) }

// AddHealthCheck adds a backend check to /healthz.
func (e *Env) AddHealthCheck(name string, fn func(ctx context.Context) error) {
	e.Health.AddCheck(name, fn)
}

// IO is the process's standard streams and environment, so Main can be
// driven by tests.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// StdinIsTerminal: stdin is a terminal (a person, not an MCP client).
	StdinIsTerminal bool
}

// NewEnv builds the Env that Main gives Setup and commands: the spec's Info
// (with the linked version and commit where it names none), its own
// metrics, notifier and health, and a logger writing to logs at level
// (debug, info, warn, error), passed through red (an empty redactor when
// nil). Tests and tools that run a Setup or a command outside Main build
// their Env with it, so that what they run logs and reports its version as
// under Main.
func NewEnv(spec Spec, getenv func(string) string, logs io.Writer, level string, red *logging.Redactor) *Env {
	spec = linked(spec)
	if red == nil {
		red = logging.NewRedactor()
	}
	log := logging.New(logs, level, red, spec.Name)
	return &Env{Info: spec.Info, Getenv: getenv, Logger: &log, Redactor: red, Metrics: metrics.New(spec.Name),
		Notifier: NewNotifier(), Health: NewHealth()}
}

// linked gives a spec without a version the one the binary was linked with
// (shared/buildinfo); a spec names its own only in tests. Whatever builds an
// Env goes through it, so clients and upstream user agents never see an
// empty version.
func linked(spec Spec) Spec {
	spec.Version = cmp.Or(spec.Version, buildinfo.Version())
	spec.Commit = cmp.Or(spec.Commit, buildinfo.Commit())
	return spec
}
