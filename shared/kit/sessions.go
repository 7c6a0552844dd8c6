package kit

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// sessions tracks streamable-HTTP sessions (seed 001 FR-003): each id is
// random, bound to the agent whose token created it, expires after an idle
// period, and their number is capped. A session id presented with another
// agent's token is refused, so a leaked id does not carry privileges across
// identities.
type sessions struct {
	mu sync.Mutex
	m  map[string]*session
	// reserved counts slots promised to initialize requests still being
	// served, so that concurrent initializes cannot overshoot max.
	reserved int
	gone     map[string]time.Time // recently terminated, to answer 404 "terminated"
	max      int
	idle     time.Duration
	now      func() time.Time
}

type session struct {
	agent    string
	created  time.Time
	lastSeen time.Time
}

const sessionPrefix = "mcp-session-"

func newSessions(max int, idle time.Duration) *sessions {
	return &sessions{m: map[string]*session{}, gone: map[string]time.Time{}, max: max, idle: idle, now: time.Now}
}

var errSessionUnknown = errors.New("unknown or expired session")

// sweepLocked drops idle sessions; the caller holds mu.
func (s *sessions) sweepLocked(now time.Time) {
	for id, se := range s.m {
		if s.idle > 0 && now.Sub(se.lastSeen) > s.idle {
			delete(s.m, id)
			s.gone[id] = now
		}
	}
	for id, t := range s.gone {
		if now.Sub(t) > time.Hour {
			delete(s.gone, id)
		}
	}
}

// hasRoom reports whether a new session may be created.
func (s *sessions) hasRoom() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.roomLocked()
}

func (s *sessions) roomLocked() bool {
	if s.max <= 0 {
		return true
	}
	if len(s.m)+s.reserved < s.max {
		return true
	}
	s.sweepLocked(s.now())
	return len(s.m)+s.reserved < s.max
}

// reservation is a slot held for one initialize request until its session
// is generated or the request ends.
type reservation struct{ used bool }

// reserve takes a slot, or returns nil when there is none.
func (s *sessions) reserve() *reservation {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.roomLocked() {
		return nil
	}
	s.reserved++
	return &reservation{}
}

// release gives back a slot whose session was never generated.
func (s *sessions) release(r *reservation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r != nil && !r.used {
		r.used = true
		s.reserved--
	}
}

func (s *sessions) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

func (s *sessions) generate(agent string) string { return s.generateFor(agent, nil) }

// generateFor creates a session, using up the reservation r if given.
func (s *sessions) generateFor(agent string, r *reservation) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := sessionPrefix + hex.EncodeToString(b[:])
	now := s.now()
	s.mu.Lock()
	if r != nil && !r.used {
		r.used = true
		s.reserved--
	}
	s.m[id] = &session{agent: agent, created: now, lastSeen: now}
	s.mu.Unlock()
	return id
}

func (s *sessions) validate(id, agent string, anyAgent bool) (terminated bool, err error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.m[id]
	if ok && s.idle > 0 && now.Sub(se.lastSeen) > s.idle {
		delete(s.m, id)
		s.gone[id] = now
		ok = false
	}
	if !ok {
		if _, was := s.gone[id]; was {
			return true, nil
		}
		return false, errSessionUnknown
	}
	if !anyAgent && se.agent != agent {
		return false, errSessionUnknown
	}
	se.lastSeen = now
	return false, nil
}

func (s *sessions) terminate(id, agent string, anyAgent bool) (notAllowed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.m[id]
	if !ok {
		return false, nil
	}
	if !anyAgent && se.agent != agent {
		return true, nil
	}
	delete(s.m, id)
	s.gone[id] = s.now()
	return false, nil
}

// ResolveSessionIdManager gives mcp-go a manager bound to the request's
// agent; mcp-go's own idle sweeper calls it with a nil request.
func (s *sessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r == nil {
		return boundSessions{s: s, anyAgent: true}
	}
	res, _ := r.Context().Value(reservationKey).(*reservation)
	return boundSessions{s: s, agent: AgentFrom(r.Context()), res: res}
}

type boundSessions struct {
	s        *sessions
	agent    string
	anyAgent bool
	res      *reservation
}

func (b boundSessions) Generate() string { return b.s.generateFor(b.agent, b.res) }
func (b boundSessions) Validate(id string) (bool, error) {
	return b.s.validate(id, b.agent, b.anyAgent)
}
func (b boundSessions) Terminate(id string) (bool, error) {
	return b.s.terminate(id, b.agent, b.anyAgent)
}
