package compose

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/testbin"
)

const initDir = "/docker-entrypoint-initdb.d/"

// The roles the init makes, cluster-wide; the probe is this test's own login
// into the agents' role, standing for supabase-mcp's PostgreSQL backend.
var stackRoles = []string{"compose_probe", "authenticator", agentRole, "avinode"}

// testInitDB runs the postgres service's first start as the image does —
// the files the service mounts in /docker-entrypoint-initdb.d, in name
// order: .sh executed, .sql fed to psql as $POSTGRES_USER in $POSTGRES_DB,
// with the service's environment — on a throwaway PostgreSQL. Then it checks
// what each role may do, as PostgREST, supabase-mcp and avinode-mcp will use
// them.
func testInitDB(t *testing.T, p *types.Project, bins map[string]string) {
	ctx := context.Background()
	dbURL := pgtest.URL(t)
	admin := pgtest.AdminURL(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	dropStack(ctx, t, admin, dbURL, false) // left over by an interrupted run on a PGTEST_URL server
	t.Cleanup(func() { dropStack(ctx, t, admin, dbURL, true) })

	svc := p.Services["postgres"]
	type initFile struct{ name, source string }
	var files []initFile
	for _, v := range svc.Volumes {
		if v.Type == types.VolumeTypeBind && strings.HasPrefix(v.Target, initDir) {
			files = append(files, initFile{path.Base(v.Target), v.Source})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	// Every workflow-state migration must be among them, after the roles.
	schema, _ := filepath.Glob(filepath.Join(testbin.Root(t), "servers", "supabase", "internal", "schemasql", "postgres", "*.sql"))
	for _, s := range schema {
		if !slices.ContainsFunc(files, func(f initFile) bool { return f.source == s }) {
			t.Errorf("%s is not mounted in %s: the stack's database would lack it", filepath.Base(s), initDir)
		}
	}
	if len(files) == 0 || !strings.HasSuffix(files[0].name, ".sh") {
		t.Fatalf("init files %v: the roles script must run first", files)
	}

	psql := pgtest.PsqlPath(t)
	vars := map[string]string{
		"PATH": filepath.Dir(psql) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME": t.TempDir(),
	}
	for k, v := range svc.Environment {
		if v != nil {
			vars[k] = *v
		}
	}
	// The image's temporary server: here the throwaway one, and its
	// per-test database in place of POSTGRES_DB.
	vars["POSTGRES_DB"], vars["PGHOST"], vars["PGPORT"] = dbName, u.Hostname(), u.Port()
	var environ []string
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	for _, f := range files {
		var cmd *exec.Cmd
		switch filepath.Ext(f.name) {
		case ".sh":
			fi, err := os.Stat(f.source)
			if err != nil || fi.Mode().Perm()&0o111 == 0 {
				t.Fatalf("%s is not executable: the image would source it into its own shell instead of running it", f.source)
			}
			cmd = exec.Command(f.source)
		case ".sql":
			cmd = exec.Command(psql, "-v", "ON_ERROR_STOP=1", "--username", vars["POSTGRES_USER"], "--no-password",
				"--no-psqlrc", "--dbname", dbName, "-f", f.source)
		default:
			t.Fatalf("%s: the postgres image runs only .sh, .sql (and compressed .sql) files", f.name)
		}
		cmd.Env = environ
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", f.name, err, out)
		}
	}

	connect := func(t *testing.T, user, db string) (*pgx.Conn, error) {
		cu := *u
		cu.User = url.User(user)
		cu.Path = "/" + db
		return pgx.Connect(ctx, cu.String())
	}
	must := func(t *testing.T, user, db string) *pgx.Conn {
		t.Helper()
		c, err := connect(t, user, db)
		if err != nil {
			t.Fatalf("connecting as %s to %s: %v", user, db, err)
		}
		t.Cleanup(func() { c.Close(ctx) })
		return c
	}
	super := must(t, "postgres", dbName)

	t.Run("roles", func(t *testing.T) {
		type role struct {
			super, inherit, login, createRole, createDB, bypassRLS, scram bool
		}
		want := map[string]role{
			"authenticator": {login: true, scram: true},
			agentRole:       {inherit: true},
			"avinode":       {inherit: true, login: true, scram: true},
		}
		for name, w := range want {
			var got role
			err := super.QueryRow(ctx, `SELECT rolsuper, rolinherit, rolcanlogin, rolcreaterole, rolcreatedb, rolbypassrls,
				coalesce(rolpassword LIKE 'SCRAM-SHA-256$%', false) FROM pg_catalog.pg_authid WHERE rolname = $1`, name).
				Scan(&got.super, &got.inherit, &got.login, &got.createRole, &got.createDB, &got.bypassRLS, &got.scram)
			if err != nil {
				t.Errorf("role %s: %v", name, err)
				continue
			}
			if got != w {
				t.Errorf("role %s: %+v, want %+v", name, got, w)
			}
			// What supabase-mcp (shared/pgcall) refuses: a role that is, or
			// may become, a superuser or a member of the file and program roles.
			var privileged []string
			rows, _ := super.Query(ctx, `SELECT r.rolname FROM pg_catalog.pg_roles r
				WHERE (r.rolsuper OR r.rolname IN ('pg_execute_server_program', 'pg_write_server_files', 'pg_read_server_files'))
				  AND pg_has_role($1, r.oid, 'MEMBER')`, name)
			privileged, err = pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil || len(privileged) > 0 {
				t.Errorf("role %s may become %v (%v)", name, privileged, err)
			}
		}
		var member bool
		if err := super.QueryRow(ctx, `SELECT pg_has_role('authenticator', $1, 'MEMBER')`, agentRole).Scan(&member); err != nil || !member {
			t.Errorf("authenticator cannot switch to %s, the role the JWT names: %v %v", agentRole, member, err)
		}
		var roleClaim string
		if claims, err := verifyJWT(env(p.Services["supabase"], "SUPABASE_KEY"), env(p.Services["postgrest"], "PGRST_JWT_SECRET")); err == nil {
			roleClaim, _ = claims["role"].(string)
		}
		if roleClaim != agentRole {
			t.Errorf("supabase-mcp's JWT names role %q; the init makes %s", roleClaim, agentRole)
		}
	})

	t.Run("agent", func(t *testing.T) {
		// As PostgREST does it: log in as authenticator, switch to the JWT's role.
		c := must(t, "authenticator", dbName)
		expectDenied(t, c, "authenticator on its own (NOINHERIT)", `SELECT count(*) FROM iso_requests`)
		if _, err := c.Exec(ctx, "SET ROLE "+agentRole); err != nil {
			t.Fatal(err)
		}
		for _, sql := range []string{
			`INSERT INTO iso_requests (id, client_email, departure_airport, arrival_airport, passengers) VALUES ('req-compose', 'a@example.com', 'KTEB', 'KOPF', 2)`,
			`UPDATE iso_requests SET status = 'analyzing' WHERE id = 'req-compose'`,
			`INSERT INTO iso_workflows (request_id) VALUES ('req-compose')`,
			`INSERT INTO agent_errors (agent_type, error_type, error_message) VALUES ('orchestrator', 'timeout', 'x')`,
			`SELECT count(*) FROM ranked_proposals`,
			`SELECT count(*) FROM avinode_webhook_events`,
			`SELECT * FROM calculate_quote_scores('[{"id": "q1", "total_price_usd": 100}]'::jsonb)`,
		} {
			if _, err := c.Exec(ctx, sql); err != nil {
				t.Errorf("%s may not: %s: %v", agentRole, sql, err)
			}
		}
		var n int
		if err := c.QueryRow(ctx, `SELECT count(*) FROM quotes WHERE rfp_id = 'rfp-123'`).Scan(&n); err != nil || n != 3 {
			t.Errorf("the sample quotes: %d, %v", n, err)
		}
		for what, sql := range map[string]string{
			"delete":            `DELETE FROM iso_requests WHERE id = 'req-compose'`,
			"truncate":          `TRUNCATE agent_errors`,
			"create a table":    `CREATE TABLE public.intruder (x int)`,
			"become postgres":   `SET ROLE postgres`,
			"read server files": `SELECT pg_read_file('/etc/hostname')`,
			"run programs":      `COPY (SELECT 1) TO PROGRAM 'true'`,
			"alter a table":     `ALTER TABLE iso_requests ADD COLUMN x int`,
			"drop the function": `DROP FUNCTION calculate_quote_scores(jsonb, jsonb, jsonb)`,
			"create a role":     `CREATE ROLE intruder`,
		} {
			expectDenied(t, c, what, sql)
		}
		// A GRANT by a role without the grant option only warns; it must
		// have granted nothing.
		if _, err := c.Exec(ctx, `GRANT DELETE ON iso_requests TO `+agentRole); err != nil {
			t.Logf("GRANT by %s: %v", agentRole, err)
		}
		for _, priv := range []struct{ table, privilege string }{
			{"iso_requests", "DELETE"}, {"quotes", "TRUNCATE"}, {"ranked_proposals", "INSERT"}, {"ranked_proposals", "UPDATE"},
		} {
			var has bool
			err := super.QueryRow(ctx, `SELECT has_table_privilege($1, $2, $3)`, agentRole, priv.table, priv.privilege).Scan(&has)
			if err != nil || has {
				t.Errorf("%s has %s on %s (%v)", agentRole, priv.privilege, priv.table, err)
			}
		}
	})

	t.Run("databases", func(t *testing.T) {
		for _, c := range []struct{ user, db string }{
			{"authenticator", "avinode"}, {"avinode", dbName}, {agentRole, dbName},
		} {
			conn, err := connect(t, c.user, c.db)
			if err == nil {
				conn.Close(ctx)
				t.Errorf("%s connected to %s", c.user, c.db)
				continue
			}
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || (pe.Code != "42501" && pe.Code != "28000") {
				t.Errorf("%s connecting to %s: %v, want a refusal (42501 or 28000)", c.user, c.db, err)
			}
		}
	})

	t.Run("supabase-mcp", func(t *testing.T) {
		// supabase-mcp's PostgreSQL backend, as a login in the agents' role:
		// its privilege check accepts the role, and the grants hold.
		if _, err := super.Exec(ctx, "CREATE ROLE compose_probe LOGIN IN ROLE "+agentRole); err != nil {
			t.Fatal(err)
		}
		if _, err := super.Exec(ctx, `GRANT CONNECT ON DATABASE "`+dbName+`" TO compose_probe`); err != nil {
			t.Fatal(err)
		}
		as := func(user string) *mcptest.Client {
			cu := *u
			cu.User = url.User(user)
			return mcptest.StartStdio(t, bins["supabase"], []string{"DATABASE_URL=" + cu.String(), "MCP_DATA_DIR=" + t.TempDir()})
		}
		c := as("compose_probe")
		var read struct {
			Rows []map[string]any `json:"rows"`
		}
		mcptest.OK(t, c.Call("supabase_query", map[string]any{"table": "iso_requests", "filters": []any{map[string]any{"column": "id", "op": "eq", "value": "req-123"}}}), &read)
		if len(read.Rows) != 1 {
			t.Errorf("the sample request: %v", read.Rows)
		}
		mcptest.OK(t, c.Call("supabase_insert", map[string]any{"table": "iso_requests",
			"data": []any{[]any{map[string]any{"column": "id", "value": "req-probe"}, map[string]any{"column": "client_email", "value": "p@example.com"},
				map[string]any{"column": "passengers", "value": 1}}}}), nil)
		mcptest.OK(t, c.Call("supabase_update", map[string]any{"table": "iso_requests",
			"filters": []any{map[string]any{"column": "id", "op": "eq", "value": "req-probe"}}, "data": []any{map[string]any{"column": "status", "value": "quoted"}}}), nil)
		mcptest.OK(t, c.Call("supabase_rpc", map[string]any{"function": "calculate_quote_scores",
			"params": []any{map[string]any{"name": "quotes", "json": `[{"id": "q1", "total_price_usd": 100}]`}}}), nil)
		mcptest.FailCode(t, c.Call("supabase_delete", map[string]any{"table": "iso_requests",
			"filters": []any{map[string]any{"column": "id", "op": "eq", "value": "req-probe"}}}), mcperr.PermissionDeny)

		// The check is live: the superuser is refused.
		b := mcptest.FailCode(t, as("postgres").Call("supabase_query", map[string]any{"table": "iso_requests"}), mcperr.PermissionDeny)
		if !strings.Contains(b.Message, "superuser") {
			t.Errorf("the superuser's refusal: %q", b.Message)
		}
	})

	t.Run("avinode-mcp", func(t *testing.T) {
		// avinode-mcp migrates its own store in its own database, as the
		// avinode role (no superuser), when it starts.
		cu := *u
		cu.User, cu.Path = url.User("avinode"), "/avinode"
		c := mcptest.StartStdio(t, bins["avinode"], []string{"DATABASE_URL=" + cu.String(), "MCP_DATA_DIR=" + t.TempDir()},
			"--webhook-processing", "service")
		if len(c.ToolNames()) == 0 {
			t.Fatal("avinode-mcp serves no tools")
		}
		st := must(t, "avinode", "avinode")
		var version int
		if err := st.QueryRow(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&version); err != nil || version < 2 {
			t.Errorf("the avinode store's schema version: %d, %v", version, err)
		}
		var foreign []string
		rows, _ := st.Query(ctx, `SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = 'public' AND tableowner <> 'avinode'`)
		foreign, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(foreign) > 0 {
			t.Errorf("tables of the avinode store not owned by avinode: %v %v", foreign, err)
		}
		var events int
		if err := st.QueryRow(ctx, `SELECT count(*) FROM avinode_webhook_events`).Scan(&events); err != nil {
			t.Errorf("the webhook queue: %v", err)
		}
	})
}

// expectDenied runs sql, which must fail for lack of privilege (42501).
func expectDenied(t *testing.T, c *pgx.Conn, what, sql string) {
	t.Helper()
	_, err := c.Exec(context.Background(), sql)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42501" {
		t.Errorf("%s: %s: %v, want permission denied (42501)", what, sql, err)
	}
}

// dropStack removes what the init made outside the test's own database
// (the roles and the avinode database are cluster-wide), so the test can
// run again on a PGTEST_URL server.
func dropStack(ctx context.Context, t *testing.T, admin, dbURL string, report bool) {
	fail := func(err error) {
		if report && err != nil {
			t.Errorf("cleaning up: %v", err)
		}
	}
	if c, err := pgx.Connect(ctx, dbURL); err == nil {
		for _, r := range stackRoles {
			var exists bool
			_ = c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, r).Scan(&exists)
			if exists {
				_, err := c.Exec(ctx, "DROP OWNED BY "+r)
				fail(err)
			}
		}
		c.Close(ctx)
	}
	c, err := pgx.Connect(ctx, admin)
	if err != nil {
		fail(err)
		return
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "DROP DATABASE IF EXISTS avinode WITH (FORCE)")
	fail(err)
	for _, r := range stackRoles {
		_, err := c.Exec(ctx, "DROP ROLE IF EXISTS "+r)
		fail(err)
	}
}
