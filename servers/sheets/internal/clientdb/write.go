package clientdb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/upstream"
)

// maxWriteAttempts bounds how often a write is made again after the rows
// moved under it.
const maxWriteAttempts = 4

// setter decides the cells to set on rows[i] of the Clients tab as it is
// now (column name → value); an empty map writes nothing.
type setter func(c *clients, i int) (map[string]any, error)

// written is what a write did.
type written struct {
	client Client
	// wrote is false when the row already held the values.
	wrote bool
	// notes say what else happened: rows that were restored.
	notes []string
}

// valueText is the text a value written RAW reads back as.
func valueText(v any) string { return workbook.Text(v) }

// writeClient sets cells of client id's row: it finds the row just before
// writing, writes only the cells set returns plus a fresh updated_at stamp,
// then reads the tab back. The row holding the stamp is the row written; if
// people re-sorted the sheet between the read and the write and it is
// another client's, that row is restored and the write is made again. The
// caller holds the write lock.
func (db *DB) writeClient(ctx context.Context, id string, set setter, depth int) (written, error) {
	var notes []string
	for attempt := 1; attempt <= maxWriteAttempts; attempt++ {
		before, err := db.readClients(ctx)
		if err != nil {
			return written{notes: notes}, err
		}
		i, err := before.locate(id)
		if err != nil {
			return written{notes: notes}, err
		}
		cells, err := set(before, i)
		if err != nil {
			return written{notes: notes}, err
		}
		if len(cells) == 0 {
			return written{client: before.client(i), notes: notes}, nil
		}
		stamp := db.stamp()
		cells["updated_at"] = stamp
		row := sheetRow(i)
		werr := db.wb.Write(ctx, before.tab, before.cellsAt(row, cells))
		if werr != nil && !mayHaveApplied(werr) {
			return written{notes: notes}, annotate(werr, "nothing was written to client %s", id)
		}
		after, rerr := db.readClients(ctx)
		if rerr != nil {
			if werr != nil {
				return written{notes: notes}, annotate(werr, "the change to client %s may or may not have been written, and reading it back failed too (%s); read the client before repeating the change", id, mcperr.Wrap(rerr).Message)
			}
			return written{notes: notes}, annotate(rerr, "the change to client %s was sent, but reading the tab back to check where it landed failed; read the client to see whether it holds the change", id)
		}
		landed := after.rowsWith("updated_at", stamp)
		var ours = -1
		for _, r := range landed {
			if strings.EqualFold(after.text(r, "client_id"), id) {
				ours = r
				continue
			}
			note, err := db.undoStray(ctx, before, after, r, cells, depth)
			if note != "" {
				notes = append(notes, note)
			}
			if err != nil {
				return written{notes: notes}, err
			}
		}
		if ours >= 0 {
			db.changed(after.text(ours, "client_id"))
			return written{client: after.client(ours), wrote: true, notes: notes}, nil
		}
		if len(landed) == 0 && werr != nil {
			return written{notes: notes}, annotate(werr, "nothing was written to client %s", id)
		}
		db.opt.Log.Warn().Str("client_id", id).Int("attempt", attempt).Msg("the rows moved while writing; writing again")
	}
	return written{notes: notes}, mcperr.New(mcperr.Conflict,
		"the rows of tab %s kept moving (sorting or inserting rows) during %d attempts to change client %s; the client was not changed. Try again when the sheet is not being rearranged",
		db.opt.ClientsTab, maxWriteAttempts, id).WithRetryable(true)
}

// undoStray restores row r of after, which received cells meant for
// another client because the rows moved between our read and our write.
func (db *DB) undoStray(ctx context.Context, before, after *clients, r int, cells map[string]any, depth int) (string, error) {
	other := after.text(r, "client_id")
	cols := slices.Sorted(maps.Keys(cells))
	if other == "" {
		// A row without an id (a person inserted a blank row): empty what we
		// wrote, found again by its stamp.
		stamp := valueText(cells["updated_at"])
		now, err := db.readClients(ctx)
		if err != nil {
			return "", annotate(err, "a change landed on row %d, which has no client_id, after the rows moved, and reading the tab to undo it failed; empty its cells %s by hand", sheetRow(r), strings.Join(cols, ", "))
		}
		var clear []workbook.Cell
		for _, i := range now.rowsWith("updated_at", stamp) {
			for _, col := range cols {
				if now.text(i, col) == valueText(cells[col]) {
					clear = append(clear, workbook.Cell{Row: sheetRow(i), Col: now.col[col], Value: ""})
				}
			}
		}
		if err := db.wb.Write(ctx, now.tab, clear); err != nil {
			return "", annotate(err, "a change landed on a row without client_id after the rows moved, and emptying it again failed; empty the cells %s of the row whose updated_at is %s by hand", strings.Join(cols, ", "), stamp)
		}
		return "the rows moved while writing: the change first landed on a row without a client_id, which was emptied again", nil
	}
	if depth >= 1 {
		return "", mcperr.New(mcperr.Conflict, "the rows moved twice while a misdirected change was being undone; client %s may hold values meant for another client in %s — check it", other, strings.Join(cols, ", ")).WithRetryable(false)
	}
	// The other client's values before our write.
	prev := map[string]any{}
	if i, err := before.locate(other); err == nil {
		for _, col := range cols {
			prev[col] = before.cell(i, col)
		}
	}
	restore := func(c *clients, i int) (map[string]any, error) {
		out := map[string]any{}
		for _, col := range cols {
			if col == "updated_at" {
				continue
			}
			if c.text(i, col) == valueText(cells[col]) && c.text(i, col) != workbook.Text(prev[col]) {
				out[col] = restoreValue(prev[col])
			}
		}
		return out, nil
	}
	if _, err := db.writeClient(ctx, other, restore, depth+1); err != nil {
		return "", annotate(err, "the rows moved while writing, so the change first landed on client %s, and restoring that client failed; check its cells %s", other, strings.Join(cols, ", "))
	}
	db.opt.Log.Warn().Str("client_id", other).Msg("a write landed on this client after the rows moved; its cells were restored")
	return fmt.Sprintf("the rows moved while writing: the change first landed on client %s, whose values were restored (its updated_at changed)", other), nil
}

// restoreValue writes back a value as it was read.
func restoreValue(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// mayHaveApplied reports whether a failed write may still have changed the
// sheet: anything but a refusal before it took effect.
func mayHaveApplied(err error) bool {
	switch mcperr.Wrap(err).Code {
	case mcperr.Validation, mcperr.Authentication, mcperr.PermissionDeny, mcperr.NotFound, mcperr.Cancelled:
		return false
	}
	return true
}

// annotate puts context in front of an error's message and keeps its code
// and retry advice.
func annotate(err error, format string, args ...any) *mcperr.Error {
	e := mcperr.Wrap(err)
	out := &mcperr.Error{Code: e.Code, Message: fmt.Sprintf(format, args...) + ": " + e.Message,
		Field: e.Field, Value: e.Value, Expected: e.Expected, RetryAfter: e.RetryAfter}
	return out.WithRetryable(e.Retryable()).WithCause(err)
}

// settled is the advice for an append whose unknown outcome was settled by
// reading the tab back, or that is safe to repeat anyway (the row is
// recorded at most once): the upstream called it not retryable only
// because it might have landed.
func settled(e *mcperr.Error) *mcperr.Error {
	if errors.Is(e, upstream.ErrOutcomeUnknown) {
		e.WithRetryable(true)
	}
	return e
}

// rowsWith lists the rows whose column col reads exactly s.
func (t *table) rowsWith(col, s string) []int {
	var out []int
	for i := range t.rows {
		if t.text(i, col) == s {
			out = append(out, i)
		}
	}
	return out
}

// cellsAt turns column values into cells of sheet row row.
func (t *table) cellsAt(row int, set map[string]any) []workbook.Cell {
	out := make([]workbook.Cell, 0, len(set))
	for col, v := range set {
		out = append(out, workbook.Cell{Row: row, Col: t.col[col], Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Col < out[j].Col })
	return out
}

// rowValues lays out a new row in the header's column order.
func (t *table) rowValues(set map[string]any) []any {
	width := 0
	for _, c := range t.col {
		width = max(width, c)
	}
	row := make([]any, width)
	for i := range row {
		row[i] = ""
	}
	for col, v := range set {
		if c := t.col[col]; c > 0 {
			row[c-1] = v
		}
	}
	return row
}
