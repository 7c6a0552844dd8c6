package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// sessions tracks the HTTP sessions of protocol versions before 2026-07-28
// (streamable HTTP and the 2024-11-05 SSE transport): each id is random,
// bound to its owner (the agent whose token created it and, for an OAuth
// token, its issuer and subject), expires after an idle period, and their
// number is capped. A session id presented by another owner is refused, so
// a leaked id carries no privilege across identities, even between two
// people mapped to the same agent.
type sessions struct {
	srv *Server
	mu  sync.Mutex
	m   map[string]*httpSession
	// reserved counts slots promised to initialize requests still being
	// served, so that concurrent initializes cannot overshoot max.
	reserved int
	max      int
	idle     time.Duration
	now      func() time.Time
}

// owner is who a session belongs to.
type owner struct{ agent, issuer, subject string }

func ownerOf(ctx context.Context) owner {
	p := PrincipalFrom(ctx)
	return owner{agent: AgentFrom(ctx), issuer: p.Issuer, subject: p.Subject}
}

type httpSession struct {
	id       string
	owner    owner
	lastSeen time.Time
	// streams counts open GET/SSE streams; a session with one never idles.
	streams int
	// state is the protocol session it carries.
	state *session
}

const sessionPrefix = "mcp-session-"

func newSessions(srv *Server, max int, idle time.Duration) *sessions {
	return &sessions{srv: srv, m: map[string]*httpSession{}, max: max, idle: idle, now: time.Now}
}

// sweepLocked ends idle sessions; the caller holds mu. The sessions' own
// state is closed by the caller, outside the lock.
func (s *sessions) sweepLocked(now time.Time) (ended []*session) {
	for id, se := range s.m {
		if s.idle > 0 && se.streams == 0 && now.Sub(se.lastSeen) > s.idle {
			delete(s.m, id)
			ended = append(ended, se.state)
		}
	}
	return ended
}

// sweep ends idle sessions.
func (s *sessions) sweep() {
	s.mu.Lock()
	ended := s.sweepLocked(s.now())
	s.mu.Unlock()
	for _, st := range ended {
		st.close()
	}
}

func (s *sessions) roomLocked() (bool, []*session) {
	if s.max <= 0 || len(s.m)+s.reserved < s.max {
		return true, nil
	}
	ended := s.sweepLocked(s.now())
	return len(s.m)+s.reserved < s.max, ended
}

// reservation is a slot held for one initialize until its session exists.
type reservation struct{ used bool }

// reserve takes a slot, or returns nil when there is none.
func (s *sessions) reserve() *reservation {
	s.mu.Lock()
	ok, ended := s.roomLocked()
	if ok {
		s.reserved++
	}
	s.mu.Unlock()
	for _, st := range ended {
		st.close()
	}
	if !ok {
		return nil
	}
	return &reservation{}
}

func (s *sessions) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// create makes a session for the caller of ctx, using up the reservation r.
func (s *sessions) create(ctx context.Context, via transport, r *reservation) *httpSession {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := sessionPrefix + hex.EncodeToString(b[:])
	now := s.now()
	o := ownerOf(ctx)
	hs := &httpSession{id: id, owner: o, lastSeen: now, state: s.srv.newSession(id, o.agent, via)}
	hs.state.principal = PrincipalFrom(ctx)
	s.mu.Lock()
	if r != nil && !r.used {
		r.used = true
		s.reserved--
	}
	s.m[id] = hs
	s.mu.Unlock()
	return hs
}

// lookup finds the session id names, for its owner o, and marks it used;
// false for an unknown, expired, ended or another owner's session.
func (s *sessions) lookup(id string, o owner) (*httpSession, bool) {
	now := s.now()
	s.mu.Lock()
	hs, ok := s.m[id]
	var expired *session
	if ok && s.idle > 0 && hs.streams == 0 && now.Sub(hs.lastSeen) > s.idle {
		delete(s.m, id)
		expired, ok = hs.state, false
	}
	ok = ok && hs.owner == o
	if ok {
		hs.lastSeen = now
	}
	s.mu.Unlock()
	if expired != nil {
		expired.close()
	}
	if !ok {
		return nil, false
	}
	return hs, true
}

// stream marks a stream of hs open (+1) or closed (-1).
func (s *sessions) stream(hs *httpSession, delta int) {
	s.mu.Lock()
	hs.streams += delta
	hs.lastSeen = s.now()
	s.mu.Unlock()
}

// terminate ends the session id if o owns it.
func (s *sessions) terminate(id string, o owner) bool {
	s.mu.Lock()
	hs, ok := s.m[id]
	if !ok || hs.owner != o {
		s.mu.Unlock()
		return false
	}
	delete(s.m, id)
	s.mu.Unlock()
	hs.state.close()
	return true
}

// closeAll ends every session (at shutdown).
func (s *sessions) closeAll() {
	s.mu.Lock()
	all := make([]*session, 0, len(s.m))
	for id, hs := range s.m {
		all = append(all, hs.state)
		delete(s.m, id)
	}
	s.mu.Unlock()
	for _, st := range all {
		st.close()
	}
}
