package oauth

import (
	"errors"
	"strings"
)

// The kinds of refusal; match them with errors.Is.
var (
	// ErrNoToken: the request carries no bearer token.
	ErrNoToken = errors.New("no bearer token")
	// ErrInvalidToken: the token is malformed, unsigned, signed by an
	// unknown key, expired, or for another issuer or audience.
	ErrInvalidToken = errors.New("invalid token")
	// ErrInsufficientScope: the token is valid but lacks a required scope.
	ErrInsufficientScope = errors.New("insufficient scope")
	// ErrUnavailable: the authorization server's keys could not be loaded
	// yet; the token could not be checked either way.
	ErrUnavailable = errors.New("token verification unavailable")
	// ErrUnmapped: the token is valid but the access policy maps its
	// identity to no agent. It is not a scope problem: asking the user to
	// consent again would not change the answer.
	ErrUnmapped = errors.New("identity mapped to no agent")
)

// InvalidTokenError says why a token was refused. Description is generic
// enough for the client ("token expired", "audience mismatch"); Reason is a
// short code for the server's log; neither says anything about the keys.
type InvalidTokenError struct {
	Reason      string
	Description string
	// Subject is the token's sub when its signature was valid (the claims
	// can then be trusted to say who it was), else "".
	Subject string
	Cause   error
}

func (e *InvalidTokenError) Error() string { return "invalid token: " + e.Description }

// Is makes errors.Is(err, ErrInvalidToken) true.
func (e *InvalidTokenError) Is(target error) bool { return target == ErrInvalidToken }

// Unwrap returns the underlying library error.
func (e *InvalidTokenError) Unwrap() error { return e.Cause }

// InsufficientScopeError: the token lacks some of Required.
type InsufficientScopeError struct {
	Required []string
	Held     []string
}

func (e *InsufficientScopeError) Error() string {
	return "insufficient scope: the token needs " + strings.Join(e.Required, " ")
}

// Is makes errors.Is(err, ErrInsufficientScope) true.
func (e *InsufficientScopeError) Is(target error) bool { return target == ErrInsufficientScope }

// Wanted is the scope to ask for: the scopes held plus the missing ones.
// Held scopes come from the token, so only those that are well-formed
// scope tokens are kept: the list goes into a WWW-Authenticate header.
func (e *InsufficientScopeError) Wanted() []string {
	var held []string
	for _, s := range e.Held {
		if validScope(s) {
			held = append(held, s)
		}
	}
	return union(held, e.Required)
}

func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
