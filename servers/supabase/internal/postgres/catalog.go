package postgres

import (
	"context"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/backend"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/pgcall"
)

// load reads the catalog of the exposed schemas.
func (d *DB) load(ctx context.Context) (map[string]*query.Table, error) {
	d.loading.Lock()
	defer d.loading.Unlock()
	return d.loadLocked(ctx)
}

// cached returns the catalog, read again when it is older than CatalogTTL.
// Calls that find it stale at once wait for one reload, not one each.
func (d *DB) cached(ctx context.Context) (map[string]*query.Table, error) {
	d.mu.Lock()
	tables, fresh := d.tables, time.Since(d.loaded) < d.cfg.CatalogTTL
	d.mu.Unlock()
	if fresh {
		return tables, nil
	}
	d.loading.Lock()
	defer d.loading.Unlock()
	d.mu.Lock()
	tables, fresh = d.tables, time.Since(d.loaded) < d.cfg.CatalogTTL
	d.mu.Unlock()
	if fresh {
		return tables, nil
	}
	return d.loadLocked(ctx)
}

func (d *DB) loadLocked(ctx context.Context) (map[string]*query.Table, error) {
	tables := map[string]*query.Table{}
	err := d.pool.Tx(ctx, d.opts(pgcall.ReadOnly), func(ctx context.Context, conn *pgx.Conn) error {
		byOID := map[uint32]*query.Table{}
		var oids []uint32
		rows, err := conn.Query(ctx, relationsSQL, d.cfg.Schemas)
		if err != nil {
			return err
		}
		for rows.Next() {
			t := &query.Table{}
			var oid uint32
			if err := rows.Scan(&t.Schema, &t.Name, &t.Kind, &t.RowEstimate, &t.Comment, &oid); err != nil {
				rows.Close()
				return err
			}
			byOID[oid] = t
			oids = append(oids, oid)
			tables[t.Schema+"."+t.Name] = t
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = conn.Query(ctx, columnsSQL, oids)
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				oid uint32
				c   query.Column
			)
			if err := rows.Scan(&oid, &c.Name, &c.Type, &c.Nullable, &c.Default, &c.Generated); err != nil {
				rows.Close()
				return err
			}
			byOID[oid].Columns = append(byOID[oid].Columns, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = conn.Query(ctx, constraintsSQL, oids)
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				oid                 uint32
				kind, name          string
				cols, refCols       []string
				refSchema, refTable string
			)
			if err := rows.Scan(&oid, &kind, &name, &cols, &refSchema, &refTable, &refCols); err != nil {
				rows.Close()
				return err
			}
			t := byOID[oid]
			switch kind {
			case "p":
				t.PrimaryKey = cols
				for i, c := range cols {
					if col := t.Column(c); col != nil {
						col.PrimaryKey = i + 1
					}
				}
			case "u":
				t.Unique = append(t.Unique, cols)
			case "f":
				t.ForeignKeys = append(t.ForeignKeys, query.ForeignKey{Name: name, Columns: cols, RefSchema: refSchema,
					RefTable: refTable, RefColumns: refCols})
			}
		}
		rows.Close()
		return rows.Err()
	})
	if err != nil {
		return nil, dbError(err)
	}
	for _, t := range tables {
		for _, fk := range t.ForeignKeys {
			if ref := tables[fk.RefSchema+"."+fk.RefTable]; ref != nil {
				ref.Referenced = append(ref.Referenced, query.ForeignKey{Name: fk.Name, Columns: fk.Columns,
					RefSchema: t.Schema, RefTable: t.Name, RefColumns: fk.RefColumns})
			}
		}
	}
	d.mu.Lock()
	d.tables, d.loaded = tables, time.Now()
	d.mu.Unlock()
	return tables, nil
}

// catalog is a Catalog bound to a call's context.
type catalog struct {
	d   *DB
	ctx context.Context
}

func (c catalog) Table(schema, name string) (*query.Table, error) {
	tables, err := c.d.cached(c.ctx)
	if err != nil {
		return nil, err
	}
	if t := tables[schema+"."+name]; t != nil {
		return t, nil
	}
	// A table created since the catalog was read is found by reading it again.
	if tables, err = c.d.load(c.ctx); err != nil {
		return nil, err
	}
	if t := tables[schema+"."+name]; t != nil {
		return t, nil
	}
	return nil, query.TableNotFound("table", schema, name)
}

// Tables lists the tables and views of a schema with the planner's row
// estimates.
func (d *DB) Tables(ctx context.Context, schema string) ([]backend.TableSummary, error) {
	tables, err := d.load(ctx)
	if err != nil {
		return nil, err
	}
	var out []backend.TableSummary
	for _, t := range tables {
		if t.Schema == schema {
			out = append(out, backend.TableSummary{Schema: t.Schema, Name: t.Name, Kind: t.Kind, RowEstimate: t.RowEstimate, Columns: len(t.Columns)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Describe returns one table.
func (d *DB) Describe(ctx context.Context, schema, table string) (*query.Table, error) {
	if _, err := d.load(ctx); err != nil {
		return nil, err
	}
	t, err := catalog{d, ctx}.Table(schema, table)
	if err != nil {
		return nil, err
	}
	cp := *t
	return &cp, nil
}

const relationsSQL = `SELECT n.nspname, c.relname, CASE WHEN c.relkind IN ('v', 'm') THEN 'view' ELSE 'table' END,
  greatest(c.reltuples, -1)::bigint, coalesce(obj_description(c.oid, 'pg_class'), ''), c.oid
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.relname <> 'schema_migrations'
  AND pg_catalog.has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE')
ORDER BY 1, 2`

const columnsSQL = `SELECT a.attrelid, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
  coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid), ''), a.attgenerated <> '' OR a.attidentity = 'a'
FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = ANY($1) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum`

const constraintsSQL = `SELECT k.conrelid, k.contype, k.conname,
  ARRAY(SELECT a.attname FROM unnest(k.conkey) WITH ORDINALITY u(n, i) JOIN pg_catalog.pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i)::text[],
  coalesce(rn.nspname, ''), coalesce(r.relname, ''),
  ARRAY(SELECT a.attname FROM unnest(k.confkey) WITH ORDINALITY u(n, i) JOIN pg_catalog.pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i)::text[]
FROM pg_catalog.pg_constraint k
LEFT JOIN pg_catalog.pg_class r ON r.oid = k.confrelid
LEFT JOIN pg_catalog.pg_namespace rn ON rn.oid = r.relnamespace
WHERE k.conrelid = ANY($1) AND k.contype IN ('p', 'u', 'f')
ORDER BY k.conrelid, k.contype, k.conname`
