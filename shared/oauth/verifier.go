package oauth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// Identity is who a valid token speaks for: the validated claims, never the
// token itself.
type Identity struct {
	Issuer  string
	Subject string
	// ClientID is the OAuth client the token was issued to (client_id, else azp).
	ClientID string
	// Scopes are from scope (space separated) or scp (a list, as Okta and
	// Entra send them).
	Scopes []string
	// Groups are from the configured groups claim.
	Groups []string
	// Name is the email, else preferred_username, when the token has one.
	Name   string
	Expiry time.Time
}

// signingMethods are the asymmetric algorithms accepted. No "none" and no
// HS*: a shared-secret algorithm would let anyone holding the public key
// (everyone) sign tokens.
var signingMethods = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// maxTokenBytes bounds what is parsed: access tokens are a few KB.
const maxTokenBytes = 16 << 10

// Options tune a Verifier beyond its Config.
type Options struct {
	// RefetchEvery is the least time between two fetches of the key set
	// caused by tokens naming an unknown key id (30s when zero, and at
	// least twice Timeout): a flood of made-up key ids costs the
	// authorization server one fetch per period.
	RefetchEvery time.Duration
	// RefreshEvery is the period of the background key set refresh (1h).
	RefreshEvery time.Duration
	// Timeout bounds each metadata or key set fetch (10s).
	Timeout time.Duration
	// RetryEvery is the delay between discovery attempts while the
	// authorization server cannot be reached (30s).
	RetryEvery time.Duration
	// OnError learns of background failures (discovery, key refresh).
	OnError func(err error)
	// Now is the clock (time.Now).
	Now func() time.Time
}

// Verifier checks access tokens for one resource.
type Verifier struct {
	cfg    Config
	opts   Options
	parser *jwt.Parser

	mu   sync.RWMutex
	keys keyfunc.Keyfunc // nil until discovery has succeeded
	meta Metadata
	// stopKeys ends the key set's refresh; cancel ends it and the
	// discovery retries.
	stopKeys context.CancelFunc
	cancel   context.CancelFunc
	// intro checks opaque tokens (nil unless configured and discovered).
	intro *introspector
}

// NewVerifier validates cfg and loads the authorization server's keys:
// with cfg.JWKSURL directly, else through its metadata (Discover). A
// metadata document naming another issuer is an error; an authorization
// server that cannot be reached is not: discovery is retried in the
// background until ctx ends, and tokens get ErrUnavailable meanwhile.
func NewVerifier(ctx context.Context, cfg Config, opts Options) (*Verifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.RefetchEvery <= 0 {
		opts.RefetchEvery = 30 * time.Second
	}
	if opts.RefreshEvery <= 0 {
		opts.RefreshEvery = time.Hour
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.RefetchEvery < 2*opts.Timeout {
		// A token with an unknown kid may wait for the limiter up to
		// Timeout; with a longer period a refused refetch fails at once.
		opts.RefetchEvery = 2 * opts.Timeout
	}
	if opts.RetryEvery <= 0 {
		opts.RetryEvery = 30 * time.Second
	}
	if opts.OnError == nil {
		opts.OnError = func(error) {}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(ctx)
	v := &Verifier{cfg: cfg, opts: opts, cancel: cancel}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(signingMethods),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(append([]string{cfg.Resource}, cfg.Audiences...)...),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.ClockSkew),
		jwt.WithTimeFunc(opts.Now),
	)
	err := v.load(ctx)
	switch {
	case err == nil:
	case errors.Is(err, ErrIssuerMismatch), errors.Is(err, ErrMetadata):
		cancel()
		return nil, err
	default:
		opts.OnError(fmt.Errorf("OAuth discovery failed; retrying every %s: %w", opts.RetryEvery, err))
		go v.retry(ctx)
	}
	return v, nil
}

// load discovers the metadata (unless a JWKS URL is configured) and starts
// the key cache.
func (v *Verifier) load(ctx context.Context) error {
	client := NewHTTPClient(v.opts.Timeout)
	meta := Metadata{Issuer: v.cfg.Issuer, JWKSURI: v.cfg.JWKSURL}
	if meta.JWKSURI == "" || v.cfg.Introspects() {
		dctx, cancel := context.WithTimeout(ctx, v.opts.Timeout)
		m, err := Discover(dctx, client, v.cfg.Issuer)
		cancel()
		if err != nil {
			return err
		}
		if v.cfg.JWKSURL != "" {
			m.JWKSURI = v.cfg.JWKSURL
		}
		if v.cfg.Introspects() {
			if m.IntrospectionEndpoint == "" {
				return fmt.Errorf("%w: introspection of opaque tokens is configured, but the metadata has no introspection_endpoint", ErrMetadata)
			}
			if err := checkURL(m.IntrospectionEndpoint, false); err != nil {
				return fmt.Errorf("%w: introspection_endpoint %q: %v", ErrMetadata, m.IntrospectionEndpoint, err)
			}
		}
		meta = m
	}
	first := false
	// The key set's refresh goroutine starts before its first fetch and
	// lives as long as its context: a failed attempt must end it.
	kctx, kcancel := context.WithCancel(ctx)
	kf, err := keyfunc.NewDefaultOverrideCtx(kctx, []string{meta.JWKSURI}, keyfunc.Override{
		Client: client, HTTPTimeout: v.opts.Timeout, RefreshInterval: v.opts.RefreshEvery,
		NoErrorReturnFirstHTTPReq: &first,
		// A token with an unknown kid waits for the limiter at most this
		// long; the limiter's period is longer, so a refused refetch fails
		// at once instead of holding the request.
		RateLimitWaitMax:  v.opts.Timeout,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(v.opts.RefetchEvery), 1),
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(_ context.Context, err error) {
				v.opts.OnError(fmt.Errorf("refresh of the key set %s: %w", u, err))
			}
		},
	})
	if err != nil {
		kcancel()
		return fmt.Errorf("key set %s: %w", meta.JWKSURI, err)
	}
	// Keys the authorization server publishes for encryption verify
	// nothing: only keys whose use is "sig", or unstated, are read.
	kf, err = keyfunc.New(keyfunc.Options{Ctx: kctx, Storage: signingKeys{kf.Storage()}})
	if err != nil {
		kcancel()
		return fmt.Errorf("key set %s: %w", meta.JWKSURI, err)
	}
	v.mu.Lock()
	v.keys, v.meta, v.stopKeys = kf, meta, kcancel
	if v.cfg.Introspects() {
		v.intro = newIntrospector(v.cfg, meta.IntrospectionEndpoint, client)
	}
	v.mu.Unlock()
	return nil
}

func (v *Verifier) retry(ctx context.Context) {
	t := time.NewTicker(v.opts.RetryEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := v.load(ctx)
		if err == nil {
			return
		}
		v.opts.OnError(fmt.Errorf("OAuth discovery failed again: %w", err))
	}
}

// Close stops the background work: key set refreshes and discovery
// retries (ending the context given to NewVerifier does too).
func (v *Verifier) Close() {
	v.mu.Lock()
	stop := v.stopKeys
	v.mu.Unlock()
	if stop != nil {
		stop()
	}
	v.cancel()
}

// Config returns the validated configuration.
func (v *Verifier) Config() Config { return v.cfg }

// Ready reports whether the keys are loaded.
func (v *Verifier) Ready() bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.keys != nil
}

// Metadata returns what discovery found (zero until it has succeeded).
func (v *Verifier) Metadata() Metadata {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.meta
}

// Verify checks a bearer token. It returns the identity, and an error
// matching ErrNoToken, ErrInvalidToken, ErrInsufficientScope or
// ErrUnavailable. With ErrInsufficientScope the identity is returned too:
// the token was valid, only not enough.
func (v *Verifier) Verify(ctx context.Context, raw string) (Identity, error) {
	if raw == "" {
		return Identity{}, ErrNoToken
	}
	if len(raw) > maxTokenBytes {
		return Identity{}, invalid("format", "malformed token", nil)
	}
	v.mu.RLock()
	kf, intro := v.keys, v.intro
	v.mu.RUnlock()
	if strings.Count(raw, ".") != 2 {
		if !v.cfg.Introspects() {
			return Identity{}, invalid("format", "malformed token", nil)
		}
		if intro == nil {
			return Identity{}, ErrUnavailable
		}
		id, err := intro.check(ctx, raw, v.identity, v.opts.Now())
		if err != nil {
			return Identity{}, err
		}
		return v.checkScopes(id)
	}
	if kf == nil {
		return Identity{}, ErrUnavailable
	}
	claims := jwt.MapClaims{}
	tok, err := v.parser.ParseWithClaims(raw, claims, kf.KeyfuncCtx(ctx))
	if err != nil {
		return Identity{}, v.classify(ctx, kf, tok, claims, err)
	}
	if typ, ok := tok.Header["typ"]; ok {
		s, _ := typ.(string)
		switch strings.ToLower(s) {
		case "at+jwt", "application/at+jwt", "jwt":
		default:
			return Identity{}, invalid("typ", "not an access token", nil)
		}
	}
	if _, ok := claims["nonce"]; ok {
		// nonce belongs to ID tokens (OpenID Connect Core §2): one that
		// names this resource as its audience is still no access token.
		e := invalid("nonce", "not an access token", nil)
		e.Subject = str(claims["sub"])
		return Identity{}, e
	}
	id := v.identity(claims)
	if id.Subject == "" {
		return Identity{}, invalid("sub", "required claim missing", nil)
	}
	return v.checkScopes(id)
}

// checkScopes refuses an identity lacking a required scope.
func (v *Verifier) checkScopes(id Identity) (Identity, error) {
	for _, s := range v.cfg.RequiredScopes {
		if !contains(id.Scopes, s) {
			return id, &InsufficientScopeError{Required: v.cfg.RequiredScopes, Held: id.Scopes}
		}
	}
	return id, nil
}

// errNotSigningKey: the token names a key published for another use
// (encryption).
var errNotSigningKey = errors.New("the key is not for signatures")

// signingKeys is a key set storage that shows only the keys for
// signatures: use "sig", or no use stated (RFC 7517 §4.2).
type signingKeys struct{ jwkset.Storage }

func forSigning(k jwkset.JWK) bool {
	u := k.Marshal().USE
	return u == jwkset.UseSig || u == ""
}

func (s signingKeys) KeyRead(ctx context.Context, kid string) (jwkset.JWK, error) {
	k, err := s.Storage.KeyRead(ctx, kid)
	if err != nil {
		return k, err
	}
	if !forSigning(k) {
		return jwkset.JWK{}, fmt.Errorf("%w: key %q has use %q", errNotSigningKey, kid, k.Marshal().USE)
	}
	return k, nil
}

func (s signingKeys) KeyReadAll(ctx context.Context) ([]jwkset.JWK, error) {
	all, err := s.Storage.KeyReadAll(ctx)
	if err != nil {
		return nil, err
	}
	keys := all[:0:0]
	for _, k := range all {
		if forSigning(k) {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

func invalid(reason, desc string, cause error) *InvalidTokenError {
	return &InvalidTokenError{Reason: reason, Description: desc, Cause: cause}
}

// classify turns a library error into an InvalidTokenError (or
// ErrUnavailable when no key could be loaded at all).
func (v *Verifier) classify(ctx context.Context, kf keyfunc.Keyfunc, tok *jwt.Token, claims jwt.MapClaims, err error) error {
	var e *InvalidTokenError
	badAlg := tok != nil && !contains(signingMethods, fmt.Sprint(tok.Header["alg"]))
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		e = invalid("format", "malformed token", err)
	case badAlg:
		e = invalid("alg", "signing algorithm not accepted", err)
	case errors.Is(err, errNotSigningKey):
		e = invalid("use", "key not for signatures", err)
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		if keys, kerr := kf.Storage().KeyReadAll(ctx); kerr == nil && len(keys) == 0 {
			return ErrUnavailable
		}
		e = invalid("kid", "unknown signing key", err)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		e = invalid("sig", "signature invalid", err)
	case errors.Is(err, jwt.ErrTokenExpired):
		e = invalid("exp", "token expired", err)
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		e = invalid("nbf", "token not valid yet", err)
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		e = invalid("iat", "token issued in the future", err)
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		e = invalid("aud", "audience mismatch", err)
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		e = invalid("iss", "issuer mismatch", err)
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		e = invalid("claims", "required claim missing", err)
	default:
		e = invalid("claims", "invalid claims", err)
	}
	// Claim errors come after the signature was checked, so the subject
	// is the real one and may be logged.
	switch e.Reason {
	case "exp", "nbf", "iat", "aud", "iss", "claims":
		if s, ok := claims["sub"].(string); ok {
			e.Subject = s
		}
	}
	return e
}

func (v *Verifier) identity(c map[string]any) Identity {
	id := Identity{Issuer: str(c["iss"]), Subject: str(c["sub"]), ClientID: str(c["client_id"])}
	if id.ClientID == "" {
		id.ClientID = str(c["azp"])
	}
	id.Name = str(c["email"])
	if id.Name == "" {
		id.Name = str(c["preferred_username"])
	}
	if s, ok := c["scope"].(string); ok {
		id.Scopes = strings.Fields(s)
	} else {
		id.Scopes = strings.Fields(strings.Join(strs(c["scp"]), " "))
	}
	id.Groups = strs(claimPath(c, v.cfg.GroupsClaim))
	if exp, err := jwt.MapClaims(c).GetExpirationTime(); err == nil && exp != nil {
		id.Expiry = exp.Time
	}
	return id
}

// claimPath finds a claim by its full name first (URL-named claims hold
// dots), then as a dotted path into nested objects.
func claimPath(c map[string]any, path string) any {
	if v, ok := c[path]; ok {
		return v
	}
	var cur any = c
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// strs reads a list of strings, or one string as a list of one.
func strs(v any) []string {
	switch t := v.(type) {
	case string:
		if t == "" {
			return nil
		}
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			if s, ok := x.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
