package kit

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// sessions tracks the HTTP sessions of protocol versions before 2026-07-28
// (streamable HTTP and the 2024-11-05 SSE transport): each id is random,
// bound to the agent whose token created it, expires after an idle period,
// and their number is capped. A session id presented with another agent's
// token is refused, so a leaked id carries no privilege across identities.
type sessions struct {
	srv *Server
	mu  sync.Mutex
	m   map[string]*httpSession
	// reserved counts slots promised to initialize requests still being
	// served, so that concurrent initializes cannot overshoot max.
	reserved int
	gone     map[string]time.Time // recently ended, to answer 404 "terminated"
	max      int
	idle     time.Duration
	now      func() time.Time
}

type httpSession struct {
	id       string
	agent    string
	created  time.Time
	lastSeen time.Time
	// streams counts open GET/SSE streams; a session with one never idles.
	streams int
	// state is the protocol session it carries.
	state *session
}

const sessionPrefix = "mcp-session-"

func newSessions(srv *Server, max int, idle time.Duration) *sessions {
	return &sessions{srv: srv, m: map[string]*httpSession{}, gone: map[string]time.Time{}, max: max, idle: idle, now: time.Now}
}

// sweepLocked ends idle sessions; the caller holds mu. The sessions' own
// state is closed by the caller, outside the lock.
func (s *sessions) sweepLocked(now time.Time) (ended []*session) {
	for id, se := range s.m {
		if s.idle > 0 && se.streams == 0 && now.Sub(se.lastSeen) > s.idle {
			delete(s.m, id)
			s.gone[id] = now
			ended = append(ended, se.state)
		}
	}
	for id, t := range s.gone {
		if now.Sub(t) > time.Hour {
			delete(s.gone, id)
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

// create makes a session for agent, using up the reservation r.
func (s *sessions) create(agent string, via transport, r *reservation) *httpSession {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := sessionPrefix + hex.EncodeToString(b[:])
	now := s.now()
	hs := &httpSession{id: id, agent: agent, created: now, lastSeen: now, state: s.srv.newSession(id, agent, via)}
	s.mu.Lock()
	if r != nil && !r.used {
		r.used = true
		s.reserved--
	}
	s.m[id] = hs
	s.mu.Unlock()
	return hs
}

// lookupResult says why a session id was not found.
type lookupResult int

const (
	sessionOK lookupResult = iota
	sessionUnknown
	sessionEnded
)

// lookup finds the session id names, for agent, and marks it used.
func (s *sessions) lookup(id, agent string) (*httpSession, lookupResult) {
	now := s.now()
	s.mu.Lock()
	hs, ok := s.m[id]
	var expired *session
	if ok && s.idle > 0 && hs.streams == 0 && now.Sub(hs.lastSeen) > s.idle {
		delete(s.m, id)
		s.gone[id] = now
		expired, ok = hs.state, false
	}
	var res lookupResult
	switch {
	case ok && hs.agent == agent:
		hs.lastSeen = now
		res = sessionOK
	case ok:
		res, hs = sessionUnknown, nil
	default:
		hs = nil
		if _, was := s.gone[id]; was {
			res = sessionEnded
		} else {
			res = sessionUnknown
		}
	}
	s.mu.Unlock()
	if expired != nil {
		expired.close()
	}
	return hs, res
}

// stream marks a stream of hs open (+1) or closed (-1).
func (s *sessions) stream(hs *httpSession, delta int) {
	s.mu.Lock()
	hs.streams += delta
	hs.lastSeen = s.now()
	s.mu.Unlock()
}

// terminate ends the session id if agent owns it.
func (s *sessions) terminate(id, agent string) bool {
	s.mu.Lock()
	hs, ok := s.m[id]
	if !ok || hs.agent != agent {
		s.mu.Unlock()
		return false
	}
	delete(s.m, id)
	s.gone[id] = s.now()
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
