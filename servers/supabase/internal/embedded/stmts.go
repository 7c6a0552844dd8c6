package embedded

import (
	"context"
	"database/sql"
	"sync"
)

// maxStmts bounds the read statements kept prepared: the same few reads
// come again and again (an agent polling its workflow), while filters
// that differ in shape each make a statement of their own.
const maxStmts = 64

// stmtCache keeps read statements prepared, by their SQL: SQLite parsed
// and planned every read afresh, as much as a tenth of a 100-row read's
// time. database/sql prepares a statement once on each connection that
// runs it.
type stmtCache struct {
	mu sync.Mutex
	m  map[string]*cachedStmt
	// tick orders the statements by last use: a full cache drops the one
	// used least recently, so reads that come again outlive one-off ones.
	tick uint64
}

type cachedStmt struct {
	stmt *sql.Stmt
	// users are the calls running the statement; one dropped from the
	// cache is closed when the last of them is done with it.
	users   int
	dropped bool
	used    uint64
}

// get returns the statement for text, prepared on db if it is not yet,
// and done, to call once the statement's rows are read.
func (c *stmtCache) get(ctx context.Context, db *sql.DB, text string) (*sql.Stmt, func(), error) {
	c.mu.Lock()
	e := c.m[text]
	if e == nil {
		c.mu.Unlock()
		st, err := db.PrepareContext(ctx, text)
		if err != nil {
			return nil, nil, err
		}
		c.mu.Lock()
		if e = c.m[text]; e != nil {
			_ = st.Close() // prepared meanwhile by another call
		} else {
			if c.m == nil {
				c.m = map[string]*cachedStmt{}
			}
			if len(c.m) >= maxStmts {
				c.dropOldestLocked()
			}
			e = &cachedStmt{stmt: st}
			c.m[text] = e
		}
	}
	e.users++
	c.tick++
	e.used = c.tick
	c.mu.Unlock()
	return e.stmt, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if e.users--; e.users == 0 && e.dropped {
			_ = e.stmt.Close()
		}
	}, nil
}

func (c *stmtCache) dropOldestLocked() {
	var oldest string
	var e *cachedStmt
	for k, x := range c.m {
		if e == nil || x.used < e.used {
			oldest, e = k, x
		}
	}
	if e != nil {
		c.dropLocked(oldest, e)
	}
}

func (c *stmtCache) dropLocked(k string, e *cachedStmt) {
	delete(c.m, k)
	e.dropped = true
	if e.users == 0 {
		_ = e.stmt.Close()
	}
}

// close drops every statement; a call still running closes its own when
// it is done.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.m {
		c.dropLocked(k, e)
	}
}
