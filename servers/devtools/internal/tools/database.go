package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/bytesize"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/database"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/schema"
)

// DatabaseTools returns database_query, database_tables and database_schema
// on db. All three are read-only; they are marked open-world because with a
// DATABASE_URL they reach a database outside this process. What they return
// comes from the database, which anyone with write access to it filled: it
// reaches the model fenced as untrusted data. The database package's errors
// carry their own codes and messages written for the agent.
func DatabaseTools(db *database.DB) []kit.Tool {
	return []kit.Tool{databaseQuery(db), databaseTables(db), databaseSchema(db)}
}

// dbToolTimeout leaves room around the statement timeout for connecting,
// BEGIN and the session reset, so that the database's own timeout, with its
// clearer message, fires first.
func dbToolTimeout(db *database.DB) time.Duration {
	return db.Config().StatementTimeout + 10*time.Second
}

func backendDescription(db *database.DB) string {
	switch {
	case db.Backend() == database.Postgres:
		return "Backend: PostgreSQL (DATABASE_URL)."
	case db.Named():
		return "Backend: the SQLite file named by DATABASE_URL, opened read-only."
	case db.Empty():
		return "Backend: the embedded SQLite database, which was empty (no tables) when the server started: " +
			"to query your own database, the user restarts the server with DATABASE_URL=postgres://… or " +
			"DATABASE_URL=sqlite:///absolute/path/app.db (or --db-path)."
	}
	return "Backend: the embedded SQLite database (no DATABASE_URL is configured)."
}

// queryArgs are database_query's arguments.
type queryArgs struct {
	Query string `json:"query" jsonschema:"exactly one SQL statement" mcp:"minLength=1,maxLength=100000"`
	// Params are decoded one by one with UseNumber, so that large integers
	// and decimals keep every digit.
	Params    []json.RawMessage `json:"params,omitempty" jsonschema:"positional parameter values for the placeholders, in order" mcp:"itemType=string|number|boolean|null,maxItems=1000"`
	Limit     int               `json:"limit,omitempty" jsonschema:"maximum number of rows to return" mcp:"min=1,max={maxLimit},default={defaultLimit}"`
	TimeoutMS int64             `json:"timeout_ms,omitempty" jsonschema:"lower the statement timeout for this call (milliseconds)" mcp:"min=1,max={maxTimeoutMS}"`
}

// queryResult is database_query's result: the rows that fit and how to
// get the rest.
type queryResult struct {
	database.Result
	Rest string `json:"rest,omitempty" jsonschema:"how to get the rows left out, when truncated"`
}

func databaseQuery(db *database.DB) kit.Tool {
	cfg := db.Config()
	kinds := "SELECT, WITH, VALUES, TABLE, EXPLAIN, SHOW"
	placeholders := "$1, $2, … (PostgreSQL infers each parameter's type from the statement; cast with $1::int when it cannot)"
	enforced := "every call runs in its own READ ONLY transaction, which is always rolled back, and settings never carry over to the next call"
	if db.Backend() == database.SQLite {
		kinds = "SELECT, WITH, VALUES, EXPLAIN, or a PRAGMA that only reads"
		placeholders = "? (in order), ?1/?2 or $1/$2 (by position)"
		enforced = "the file is opened read-only and SQLite may compile nothing but reads"
	}
	return kit.NewTool(kit.Tool{
		Name:  "database_query",
		Title: "Run a read-only SQL query",
		Description: "Run ONE read-only SQL statement (" + kinds + ") and return its rows. " + backendDescription(db) + " " +
			"Pass values as params, not in the SQL; placeholders: " + placeholders + ". " +
			"The database itself enforces read-only: " + enforced + "; writes, DDL, transaction control and multiple statements " +
			"are refused. " +
			"Rows come as arrays in column order; truncated, truncated_by and rest say what was left out and how to get it. " +
			"Values: NULL→null, numeric→string (exact), bytea/BLOB→base64, timestamps→RFC 3339, json→JSON. " +
			"Default limit " + itoa(int64(cfg.DefaultLimit)) + " rows, at most " + itoa(int64(cfg.MaxLimit)) + "; rows are capped at " +
			bytesize.Format(cfg.MaxResultBytes) + " and the result budget; statement timeout " + cfg.StatementTimeout.String() + ". Explore with database_tables and database_schema.",
		Vars: schema.Vars{"maxLimit": cfg.MaxLimit, "defaultLimit": cfg.DefaultLimit,
			"maxTimeoutMS": cfg.StatementTimeout.Milliseconds()},
		Paging:    "select fewer columns, or page with ORDER BY … LIMIT n OFFSET m in the SQL",
		Effect:    kit.ReadOnly,
		OpenWorld: true,
		Timeout:   dbToolTimeout(db),
	}, func(ctx context.Context, c *kit.Call, a queryArgs) (kit.Fenced[queryResult], error) {
		params := make([]any, len(a.Params))
		for i, raw := range a.Params {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&params[i]); err != nil {
				return kit.Fenced[queryResult]{}, mcperr.Invalid("params", nil, "strings, numbers, booleans or null", "params[%d] is not a JSON scalar", i)
			}
		}
		res, err := db.Query(ctx, database.Query{SQL: a.Query, Params: params, Limit: a.Limit,
			Timeout: time.Duration(a.TimeoutMS) * time.Millisecond})
		if err != nil {
			return kit.Fenced[queryResult]{}, err
		}
		out := queryResult{Result: *res}
		n, err := kit.FitItems(res.Rows, c.Room()-kit.CostOf(res.Columns))
		if err != nil {
			return kit.Fenced[queryResult]{}, err
		}
		if n < len(res.Rows) {
			out.Rows, out.RowCount = res.Rows[:n], n
			out.Truncated, out.TruncatedBy = true, "result_budget"
		}
		if out.Truncated {
			out.Rest = queryRest(out.TruncatedBy, out.RowCount)
		}
		return kit.Fenced[queryResult]{Source: "rows from the " + db.Source(), Value: out}, nil
	})
}

// queryRest says how to get the rows a truncated query left out.
func queryRest(by string, got int) string {
	page := "add ORDER BY on a unique key and LIMIT/OFFSET to the SQL and run it again with OFFSET " + itoa(int64(got)) + " for the next rows"
	switch by {
	case "limit":
		return "more rows exist than limit: raise limit, or " + page
	case "max_bytes":
		return "the rows reached the result size cap: select fewer or narrower columns, or " + page
	}
	return "only " + itoa(int64(got)) + " rows fit the result budget: select fewer or narrower columns, or " + page
}

// tablesArgs are database_tables' arguments.
type tablesArgs struct {
	Schema string `json:"schema,omitempty" jsonschema:"schema name (default {defaultSchema})" mcp:"minLength=1,maxLength=256"`
}

func databaseTables(db *database.DB) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "database_tables",
		Title: "List database tables",
		Description: "List the tables and views of a schema (default \"" + db.DefaultSchema() + "\"): name, type and comment. " +
			backendDescription(db) + " A schema that does not exist is NOT_FOUND.",
		Vars:      schema.Vars{"defaultSchema": db.DefaultSchema()},
		Paging:    "list the tables of one schema at a time",
		Effect:    kit.ReadOnly,
		OpenWorld: true,
		Timeout:   dbToolTimeout(db),
	}, func(ctx context.Context, c *kit.Call, a tablesArgs) (kit.Fenced[tablesResult], error) {
		res, err := db.Tables(ctx, a.Schema)
		if err != nil {
			return kit.Fenced[tablesResult]{}, err
		}
		out := tablesResult{Backend: res.Backend, Schema: res.Schema, Tables: res.Tables, Note: res.Note}
		n, err := kit.FitItems(res.Tables, c.Room()-kit.Cost(res.Note))
		if err != nil {
			return kit.Fenced[tablesResult]{}, err
		}
		if n < len(res.Tables) {
			out.Tables, out.Truncated = res.Tables[:n], true
			out.Rest = "only " + itoa(int64(n)) + " of " + itoa(int64(len(res.Tables))) + " tables fit the result budget: " +
				"list the rest with database_query on the catalog (information_schema.tables, or sqlite_master) with LIMIT/OFFSET"
		}
		return kit.Fenced[tablesResult]{Source: "table list of the " + db.Source(), Value: out}, nil
	})
}

// tablesResult is database_tables' result: the tables that fit.
type tablesResult struct {
	Backend string           `json:"backend"`
	Schema  string           `json:"schema"`
	Tables  []database.Table `json:"tables"`
	// Note tells a caller facing an empty SQLite database how to point the
	// tools at a database of their own.
	Note      string `json:"note,omitempty"`
	Truncated bool   `json:"truncated" jsonschema:"more tables exist than fit the result budget"`
	Rest      string `json:"rest,omitempty" jsonschema:"how to list the tables left out, when truncated"`
}

// schemaArgs are database_schema's arguments.
type schemaArgs struct {
	Table  string `json:"table" jsonschema:"table or view name" mcp:"minLength=1,maxLength=256"`
	Schema string `json:"schema,omitempty" jsonschema:"schema name (default {defaultSchema})" mcp:"minLength=1,maxLength=256"`
}

func databaseSchema(db *database.DB) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "database_schema",
		Title: "Describe a database table",
		Description: "Describe one table or view: its columns in order (name, declared type, nullable, default, position in the primary key, " +
			"identity/generated, comment) and its primary key. " + backendDescription(db) +
			" Names are exact (no quoting needed); a table that does not exist is NOT_FOUND.",
		Vars:      schema.Vars{"defaultSchema": db.DefaultSchema()},
		Effect:    kit.ReadOnly,
		OpenWorld: true,
		Timeout:   dbToolTimeout(db),
	}, func(ctx context.Context, c *kit.Call, a schemaArgs) (kit.Fenced[database.TableSchema], error) {
		res, err := db.Schema(ctx, a.Schema, a.Table)
		if err != nil {
			return kit.Fenced[database.TableSchema]{}, err
		}
		return kit.Fenced[database.TableSchema]{Source: "description of table " + a.Table + " in the " + db.Source(), Value: *res}, nil
	})
}
