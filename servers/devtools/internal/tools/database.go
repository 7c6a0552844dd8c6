package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/bytesize"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/database"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// DatabaseTools returns database_query, database_tables and database_schema
// on db. All three are read-only; they are marked open-world because with a
// DATABASE_URL they reach a database outside this process.
func DatabaseTools(db *database.DB) []kit.Tool {
	return []kit.Tool{databaseQuery(db), databaseTables(db), databaseSchema(db)}
}

// dbToolTimeout leaves room around the statement timeout for connecting,
// BEGIN, ROLLBACK and the session reset, so that the database's own timeout,
// with its clearer message, fires first.
func dbToolTimeout(db *database.DB) time.Duration {
	return db.Config().StatementTimeout + 10*time.Second
}

// dbError maps the database package's error kinds onto the fleet's codes.
// Its messages are written for the caller (the database's own message, never
// the connection URL), so they are passed on as they are.
func dbError(err error) error {
	var de *database.Error
	if !errors.As(err, &de) {
		return err // context errors become TIMEOUT/CANCELLED in the kit; the rest INTERNAL
	}
	switch de.Kind {
	case database.Invalid:
		return mcperr.Invalid(de.Field, nil, "", "%s", de.Msg).WithCause(err)
	case database.Denied:
		return mcperr.New(mcperr.PermissionDeny, "%s", de.Msg).WithCause(err)
	case database.NotFound:
		e := mcperr.New(mcperr.NotFound, "%s", de.Msg).WithCause(err)
		e.Field = de.Field
		return e
	case database.Timeout:
		// The same statement would time out again: narrow it instead.
		return mcperr.New(mcperr.Timeout, "%s; narrow the query (a WHERE clause, a LIMIT, an indexed column)", de.Msg).
			WithCause(err).WithRetryable(false)
	case database.Busy:
		return mcperr.New(mcperr.Upstream, "%s", de.Msg).WithCause(err).WithRetryable(true)
	}
	return mcperr.New(mcperr.Upstream, "%s", de.Msg).WithCause(err)
}

func backendDescription(db *database.DB) string {
	if db.Backend() == database.Postgres {
		return "Backend: PostgreSQL (DATABASE_URL)."
	}
	return "Backend: the embedded SQLite database (no DATABASE_URL is configured)."
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
			"Pass values as params, never inside the SQL text; placeholders: " + placeholders + ". " +
			"The database itself enforces read-only: " + enforced + "; writes, DDL, transaction control and multiple statements " +
			"are refused (PERMISSION_DENIED or VALIDATION_ERROR) and change nothing. " +
			"Returns columns (name, type), rows as arrays in column order, row_count, truncated (with truncated_by: limit or max_bytes), and duration_ms. " +
			"Values: NULL→null, numeric→string (exact), bytea/BLOB→base64, timestamps→RFC 3339, json→JSON. " +
			"Default limit " + itoa(int64(cfg.DefaultLimit)) + " rows, at most " + itoa(int64(cfg.MaxLimit)) + "; results are capped at " +
			bytesize.Format(cfg.MaxResultBytes) + "; statement timeout " + cfg.StatementTimeout.String() + ". Use database_tables and database_schema to explore first.",
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 100000, "description": "exactly one SQL statement"},
    "params": {"type": "array", "maxItems": 1000, "items": {"type": ["string", "number", "boolean", "null"]},
      "description": "positional parameter values for the placeholders, in order"},
    "limit": {"type": "integer", "minimum": 1, "maximum": ` + itoa(int64(cfg.MaxLimit)) + `, "default": ` + itoa(int64(cfg.DefaultLimit)) + `,
      "description": "maximum number of rows to return"},
    "timeout_ms": {"type": "integer", "minimum": 1, "maximum": ` + itoa(cfg.StatementTimeout.Milliseconds()) + `,
      "description": "lower the statement timeout for this call (milliseconds)"}
  },
  "required": ["query"],
  "additionalProperties": false
}`),
		Effect:    kit.ReadOnly,
		OpenWorld: true,
		Timeout:   dbToolTimeout(db),
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a struct {
				Query     string
				Params    []json.RawMessage
				Limit     int
				TimeoutMS int64 `json:"timeout_ms"`
			}
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			params := make([]any, len(a.Params))
			for i, raw := range a.Params {
				// json.Number keeps every digit of large integers and decimals.
				dec := json.NewDecoder(bytes.NewReader(raw))
				dec.UseNumber()
				if err := dec.Decode(&params[i]); err != nil {
					return nil, mcperr.Invalid("params", nil, "strings, numbers, booleans or null", "params[%d] is not a JSON scalar", i)
				}
			}
			res, err := db.Query(ctx, database.Query{SQL: a.Query, Params: params, Limit: a.Limit,
				Timeout: time.Duration(a.TimeoutMS) * time.Millisecond})
			if err != nil {
				return nil, dbError(err)
			}
			return res, nil
		},
	}
}

func databaseTables(db *database.DB) kit.Tool {
	return kit.Tool{
		Name:  "database_tables",
		Title: "List database tables",
		Description: "List the tables and views of a schema (default \"" + db.DefaultSchema() + "\"): name, type and comment. " +
			backendDescription(db) + " A schema that does not exist is NOT_FOUND.",
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "schema": {"type": "string", "minLength": 1, "maxLength": 256, "description": "schema name (default ` + db.DefaultSchema() + `)"}
  },
  "additionalProperties": false
}`),
		Effect:    kit.ReadOnly,
		OpenWorld: true,
		Timeout:   dbToolTimeout(db),
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a struct{ Schema string }
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			res, err := db.Tables(ctx, a.Schema)
			if err != nil {
				return nil, dbError(err)
			}
			return res, nil
		},
	}
}

func databaseSchema(db *database.DB) kit.Tool {
	return kit.Tool{
		Name:  "database_schema",
		Title: "Describe a database table",
		Description: "Describe one table or view: its columns in order (name, declared type, nullable, default, position in the primary key, " +
			"identity/generated, comment) and its primary key. " + backendDescription(db) +
			" Names are exact (no quoting needed); a table that does not exist is NOT_FOUND.",
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "table": {"type": "string", "minLength": 1, "maxLength": 256, "description": "table or view name"},
    "schema": {"type": "string", "minLength": 1, "maxLength": 256, "description": "schema name (default ` + db.DefaultSchema() + `)"}
  },
  "required": ["table"],
  "additionalProperties": false
}`),
		Effect:    kit.ReadOnly,
		OpenWorld: true,
		Timeout:   dbToolTimeout(db),
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a struct{ Table, Schema string }
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			res, err := db.Schema(ctx, a.Schema, a.Table)
			if err != nil {
				return nil, dbError(err)
			}
			return res, nil
		},
	}
}
