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
	Params    []json.RawMessage `json:"params,omitempty" jsonschema:"positional parameter values for the placeholders, in order" mcp:"maxItems=1000"`
	Limit     int               `json:"limit,omitempty" jsonschema:"maximum number of rows to return" mcp:"min=1,max={maxLimit},default={defaultLimit}"`
	TimeoutMS int64             `json:"timeout_ms,omitempty" jsonschema:"lower the statement timeout for this call (milliseconds)" mcp:"min=1,max={maxTimeoutMS}"`
}

// queryParamTypes are the JSON types a parameter may have. The schema
// package has no tag for a union of types, so it is set on the derived
// schema.
var queryParamTypes = []string{"string", "number", "boolean", "null"}

// queryInputSchema is queryArgs' schema, with the types of params' items.
func queryInputSchema(cfg database.Config) json.RawMessage {
	raw := schema.MustFor[queryArgs](schema.Vars{"maxLimit": cfg.MaxLimit, "defaultLimit": cfg.DefaultLimit,
		"maxTimeoutMS": cfg.StatementTimeout.Milliseconds()})
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		panic(err)
	}
	props := s["properties"].(map[string]any)
	params := props["params"].(map[string]any)
	// anyOf, not a type array: Gemini refuses several types in one schema.
	branches := make([]any, len(queryParamTypes))
	for i, t := range queryParamTypes {
		branches[i] = map[string]any{"type": t}
	}
	params["items"] = map[string]any{"anyOf": branches}
	out, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return out
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
	return kit.Tool{
		Name:  "database_query",
		Title: "Run a read-only SQL query",
		Description: "Run ONE read-only SQL statement (" + kinds + ") and return its rows. " + backendDescription(db) + " " +
			"Pass values as params, not in the SQL; placeholders: " + placeholders + ". " +
			"The database itself enforces read-only: " + enforced + "; writes, DDL, transaction control and multiple statements " +
			"are refused and change nothing. " +
			"Returns columns (name, type), rows as arrays in column order, row_count, truncated (truncated_by says why), and duration_ms. " +
			"Values: NULL→null, numeric→string (exact), bytea/BLOB→base64, timestamps→RFC 3339, json→JSON. " +
			"Default limit " + itoa(int64(cfg.DefaultLimit)) + " rows, at most " + itoa(int64(cfg.MaxLimit)) + "; results are capped at " +
			bytesize.Format(cfg.MaxResultBytes) + "; statement timeout " + cfg.StatementTimeout.String() + ". Explore with database_tables and database_schema.",
		InputSchema: queryInputSchema(cfg),
		Effect:      kit.ReadOnly,
		OpenWorld:   true,
		Timeout:     dbToolTimeout(db),
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a queryArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			params := make([]any, len(a.Params))
			for i, raw := range a.Params {
				dec := json.NewDecoder(bytes.NewReader(raw))
				dec.UseNumber()
				if err := dec.Decode(&params[i]); err != nil {
					return nil, mcperr.Invalid("params", nil, "strings, numbers, booleans or null", "params[%d] is not a JSON scalar", i)
				}
			}
			res, err := db.Query(ctx, database.Query{SQL: a.Query, Params: params, Limit: a.Limit,
				Timeout: time.Duration(a.TimeoutMS) * time.Millisecond})
			if err != nil {
				return nil, err
			}
			return kit.Untrusted{Source: "rows from the " + db.Source(), Value: res}, nil
		},
	}
}

// tablesArgs are database_tables' arguments.
type tablesArgs struct {
	Schema string `json:"schema,omitempty" jsonschema:"schema name (default {defaultSchema})" mcp:"minLength=1,maxLength=256"`
}

func databaseTables(db *database.DB) kit.Tool {
	return kit.Tool{
		Name:  "database_tables",
		Title: "List database tables",
		Description: "List the tables and views of a schema (default \"" + db.DefaultSchema() + "\"): name, type and comment. " +
			backendDescription(db) + " A schema that does not exist is NOT_FOUND.",
		InputSchema: schema.MustFor[tablesArgs](schema.Vars{"defaultSchema": db.DefaultSchema()}),
		Effect:      kit.ReadOnly,
		OpenWorld:   true,
		Timeout:     dbToolTimeout(db),
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a tablesArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			res, err := db.Tables(ctx, a.Schema)
			if err != nil {
				return nil, err
			}
			return kit.Untrusted{Source: "table list of the " + db.Source(), Value: res}, nil
		},
	}
}

// schemaArgs are database_schema's arguments.
type schemaArgs struct {
	Table  string `json:"table" jsonschema:"table or view name" mcp:"minLength=1,maxLength=256"`
	Schema string `json:"schema,omitempty" jsonschema:"schema name (default {defaultSchema})" mcp:"minLength=1,maxLength=256"`
}

func databaseSchema(db *database.DB) kit.Tool {
	return kit.Tool{
		Name:  "database_schema",
		Title: "Describe a database table",
		Description: "Describe one table or view: its columns in order (name, declared type, nullable, default, position in the primary key, " +
			"identity/generated, comment) and its primary key. " + backendDescription(db) +
			" Names are exact (no quoting needed); a table that does not exist is NOT_FOUND.",
		InputSchema: schema.MustFor[schemaArgs](schema.Vars{"defaultSchema": db.DefaultSchema()}),
		Effect:      kit.ReadOnly,
		OpenWorld:   true,
		Timeout:     dbToolTimeout(db),
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a schemaArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			res, err := db.Schema(ctx, a.Schema, a.Table)
			if err != nil {
				return nil, err
			}
			return kit.Untrusted{Source: "description of table " + a.Table + " in the " + db.Source(), Value: res}, nil
		},
	}
}
