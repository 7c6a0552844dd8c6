// Command devtools-mcp is the devtools MCP server: file, shell, web,
// database and system tools confined to configured root directories.
package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/database"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/filewatch"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/webguard"
	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

func main() {
	os.Exit(kit.Main(spec(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// settings are devtools' own flags, beside the kit's.
type settings struct {
	roots []string
	// watchMaxFiles caps the files watched for resource subscribers.
	watchMaxFiles int
	// shell_execute
	shellAllow, shellPrograms, shellEnv []string
	shellTimeout, shellMaxTimeout       time.Duration
	shellMaxOutput                      int
	shellPath                           string
	// web_request, web_fetch
	webAllow                                   []string
	webMaxResponse, webMaxFetch, webMaxRequest int
	webTimeout, webMaxTimeout                  time.Duration
	webMaxRedirects                            int
	// database_query, database_tables, database_schema
	databaseURL                string
	dbPath                     string
	dbDefaultLimit, dbMaxLimit int
	dbTimeout                  time.Duration
	dbMaxBytes, dbMaxConns     int
	dbAllowSuperuser           bool
}

func (s *settings) register(f *cli.Flags) {
	f.List(&s.roots, "root", "DEVTOOLS_ROOTS", string(os.PathListSeparator),
		"directory the tools may use (repeat, or a list in the env variable; default: the working directory, or the client's roots)")
	f.Int(&s.watchMaxFiles, "watch-max-files", []string{"DEVTOOLS_WATCH_MAX_FILES"}, filewatch.DefaultMaxFiles,
		"most files watched at once for clients subscribed to file resources")
	f.Check("watch-max-files", func() error {
		if s.watchMaxFiles <= 0 {
			return fmt.Errorf("want a positive number of files, got %d", s.watchMaxFiles)
		}
		return nil
	})

	f.List(&s.shellAllow, "shell-allow", "DEVTOOLS_SHELL_ALLOW", ",",
		"extra programs for shell_execute that take ANY arguments, unchecked; interpreters (node, npm, python…) can then do anything the server's user can")
	f.List(&s.shellPrograms, "shell-programs", "DEVTOOLS_SHELL_PROGRAMS", ",",
		"narrow shell_execute's built-in read-only programs (default: cat, echo, find, git, grep, head, ls, pwd, sort, tail, uniq, wc)")
	f.List(&s.shellEnv, "shell-env", "DEVTOOLS_SHELL_ENV", ",", "environment variable names shell_execute callers may set")
	f.Duration(&s.shellTimeout, "shell-timeout", []string{"DEVTOOLS_SHELL_TIMEOUT"}, 30*time.Second, "default time limit of a command")
	f.Duration(&s.shellMaxTimeout, "shell-max-timeout", []string{"DEVTOOLS_SHELL_MAX_TIMEOUT"}, 5*time.Minute, "highest time limit a command may ask for")
	f.Int(&s.shellMaxOutput, "shell-max-output", []string{"DEVTOOLS_SHELL_MAX_OUTPUT"}, 10<<20, "cap on a command's stdout + stderr, bytes")
	f.String(&s.shellPath, "shell-path", []string{"DEVTOOLS_SHELL_PATH"}, "/usr/local/bin:/usr/bin:/bin", "PATH programs are looked up in and children get")

	f.List(&s.webAllow, "web-allow-cidrs", "DEVTOOLS_WEB_ALLOW_CIDRS", ",",
		"non-public address ranges the web tools may reach (e.g. 127.0.0.0/8); cloud metadata addresses stay refused")
	f.Int(&s.webMaxResponse, "web-max-response-bytes", []string{"DEVTOOLS_WEB_MAX_RESPONSE_BYTES"}, 5<<20, "web_request response body cap, bytes")
	f.Int(&s.webMaxFetch, "web-max-fetch-bytes", []string{"DEVTOOLS_WEB_MAX_FETCH_BYTES"}, 10<<20, "web_fetch download cap, bytes")
	f.Int(&s.webMaxRequest, "web-max-request-bytes", []string{"DEVTOOLS_WEB_MAX_REQUEST_BYTES"}, 1<<20, "request body cap, bytes")
	f.Duration(&s.webTimeout, "web-timeout", []string{"DEVTOOLS_WEB_TIMEOUT"}, 30*time.Second, "default time limit of a web call")
	f.Duration(&s.webMaxTimeout, "web-max-timeout", []string{"DEVTOOLS_WEB_MAX_TIMEOUT"}, 120*time.Second, "longest time limit a web call may ask for")
	f.Int(&s.webMaxRedirects, "web-max-redirects", []string{"DEVTOOLS_WEB_MAX_REDIRECTS"}, 5, "redirects followed, each re-checked (0: none)")

	f.Secret(&s.databaseURL, "DATABASE_URL", "database for the database tools: a PostgreSQL URL (use a read-only role) or an SQLite file (sqlite:///abs/path.db, opened read-only); unset: the embedded database")
	f.String(&s.dbPath, "db-path", []string{"DEVTOOLS_DB_PATH"}, "", "SQLite file the database tools read without DATABASE_URL (default: <data dir>/devtools.db)")
	f.Int(&s.dbDefaultLimit, "db-default-limit", []string{"DEVTOOLS_DB_DEFAULT_LIMIT"}, 100, "rows returned when a query names no limit")
	f.Int(&s.dbMaxLimit, "db-max-limit", []string{"DEVTOOLS_DB_MAX_LIMIT"}, 1000, "largest limit a query may ask for")
	f.Duration(&s.dbTimeout, "db-timeout", []string{"DEVTOOLS_DB_TIMEOUT"}, 30*time.Second, "statement timeout (calls may lower it)")
	f.Int(&s.dbMaxBytes, "db-max-bytes", []string{"DEVTOOLS_DB_MAX_BYTES"}, 5<<20, "cap on the JSON-encoded rows of one result, bytes")
	f.Int(&s.dbMaxConns, "db-max-conns", []string{"DEVTOOLS_DB_MAX_CONNS"}, 8, "open database connections")
	f.Bool(&s.dbAllowSuperuser, "db-allow-superuser", []string{"DEVTOOLS_DB_ALLOW_SUPERUSER"}, false,
		"allow a role that can run programs or read/write files on the database server (dangerous)")
}

func (s *settings) deps(env *kit.Env) (tools.Deps, error) {
	d := tools.Deps{Info: env.Info, Metrics: env.Metrics, Roots: s.roots, RootsConfigured: len(s.roots) > 0,
		Notifier: env.Notifier, WatchMaxFiles: s.watchMaxFiles, WatchHint: "--watch-max-files or DEVTOOLS_WATCH_MAX_FILES",
		Logger: env.Logger}
	if len(d.Roots) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return d, errors.New("no --root given and the working directory is unknown")
		}
		d.Roots = []string{wd}
	}
	// A configured root that is not a directory is a configuration error
	// (exit 2), told before anything opens it.
	for _, r := range s.roots {
		if st, err := os.Stat(r); err != nil || !st.IsDir() {
			why := "not a directory"
			var pe *fs.PathError
			if errors.As(err, &pe) {
				why = pe.Err.Error()
			} else if err != nil {
				why = err.Error()
			}
			return d, &cli.UsageError{Msg: fmt.Sprintf("devtools roots: cannot open root directory %q: %s (--root or DEVTOOLS_ROOTS)", r, why)}
		}
	}
	d.Shell.Programs = s.shellPrograms
	d.Shell.Allow = s.shellAllow
	d.Shell.Env = s.shellEnv
	d.Shell.DefaultTimeout = s.shellTimeout
	d.Shell.MaxTimeout = s.shellMaxTimeout
	d.Shell.MaxOutput = int64(s.shellMaxOutput)
	d.Shell.Path = s.shellPath

	cidrs, err := webguard.ParseCIDRs(s.webAllow...)
	if err != nil {
		return d, &cli.UsageError{Msg: err.Error()}
	}
	d.Web = webguard.Config{AllowCIDRs: cidrs, MaxResponseBytes: int64(s.webMaxResponse),
		MaxFetchBytes: int64(s.webMaxFetch), MaxRequestBodyBytes: int64(s.webMaxRequest),
		DefaultTimeout: s.webTimeout, MaxTimeout: s.webMaxTimeout, MaxRedirects: s.webMaxRedirects}
	if s.webMaxRedirects == 0 {
		d.Web.MaxRedirects = -1 // in the config, zero means "the default"
	}

	d.Database = database.Config{DatabaseURL: s.databaseURL, EmbeddedPath: s.dbPath,
		DefaultLimit: s.dbDefaultLimit, MaxLimit: s.dbMaxLimit, StatementTimeout: s.dbTimeout,
		MaxResultBytes: int64(s.dbMaxBytes), MaxConns: s.dbMaxConns, AllowSuperuser: s.dbAllowSuperuser, Logger: env.Logger}
	if s.databaseURL != "" {
		// A URL that cannot be a database is a configuration error (exit
		// 2); the parser's words are not repeated, since they may quote
		// the password.
		_, isSQLite, err := database.SQLitePath(s.databaseURL)
		if err == nil && !isSQLite {
			_, err = pgxpool.ParseConfig(s.databaseURL)
		}
		if err != nil {
			return d, &cli.UsageError{Msg: "DATABASE_URL is neither a PostgreSQL URL (postgres://user@host:5432/db) nor an SQLite file (sqlite:///abs/path.db)"}
		}
	}
	if s.databaseURL == "" {
		if d.Database.EmbeddedPath, err = env.DataPath(d.Database.EmbeddedPath, "devtools.db"); err != nil {
			return d, err
		}
	}
	return d, nil
}

func spec() kit.Spec {
	var s settings
	return kit.Spec{
		Info: kit.Info{Name: "devtools",
			Instructions: "Developer tools confined to the configured root directories (or the client's roots inside them). Paths are relative to the first root unless absolute inside a root; call system_info to see the roots. " +
				"Files under the roots are also resources (file:///abs/path) that a client can read and subscribe to, to hear when they change."},
		Summary:     "MCP server with file, shell, web, database and system tools confined to root directories",
		DefaultPort: 3005,
		Flags:       s.register,
		Setup: func(ctx context.Context, env *kit.Env) ([]kit.Tool, func(), error) {
			d, err := s.deps(env)
			if err != nil {
				return nil, nil, err
			}
			set, err := tools.All(d)
			if err != nil {
				return nil, nil, err
			}
			for _, t := range set.Templates {
				env.AddTemplate(t)
			}
			return set.Tools, set.Close, nil
		},
	}
}
