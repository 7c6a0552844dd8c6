package webhooks

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/ratelimit"
	"github.com/mcp-fleet/mcp-fleet/shared/validate"
)

// TestLimiterBounds: one bucket per IPv4 address and per IPv6 /64; past
// maxSources the idle ones are forgotten, and a flood from more addresses
// than that shares one bucket.
func TestLimiterBounds(t *testing.T) {
	l := newLimiter(ratelimit.Rate{PerMinute: 60, Burst: 1})
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a := netip.MustParseAddr("2001:db8:1:2::1")
	b := netip.MustParseAddr("2001:db8:1:2:ffff::9") // the same /64
	if ok, _ := l.allow(a, now); !ok {
		t.Fatal("first request refused")
	}
	if ok, wait := l.allow(b, now); ok || wait <= 0 {
		t.Errorf("the same /64 has its own bucket: %v %v", ok, wait)
	}
	if ok, _ := l.allow(netip.MustParseAddr("::ffff:192.0.2.1"), now); !ok {
		t.Error("a mapped IPv4 address shares an IPv6 bucket")
	}
	for i := range maxSources + 10 {
		l.allow(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), now)
	}
	if len(l.sources) > maxSources {
		t.Errorf("%d sources remembered", len(l.sources))
	}
	// Later, the idle buckets are pruned to make room.
	later := now.Add(time.Hour)
	if ok, _ := l.allow(netip.MustParseAddr("198.51.100.7"), later); !ok {
		t.Error("a new source refused after the others went idle")
	}
	if len(l.sources) != 1 {
		t.Errorf("%d sources after pruning", len(l.sources))
	}
	var none *limiter
	if ok, _ := none.allow(a, now); !ok {
		t.Error("no limiter limits")
	}
}

func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct {
		remote, xff, want string
		err               bool
	}{
		{"192.0.2.1:5000", "203.0.113.5", "192.0.2.1", false},
		{"10.0.0.2:5000", "203.0.113.5", "203.0.113.5", false},
		{"10.0.0.2:5000", "203.0.113.5, 10.1.1.1", "203.0.113.5", false},
		{"10.0.0.2:5000", "10.9.9.9", "10.9.9.9", false},
		{"10.0.0.2:5000", "[2001:db8::1]:443", "2001:db8::1", false},
		{"10.0.0.2:5000", "", "10.0.0.2", false},
		{"10.0.0.2:5000", "bogus", "", true},
		{"nonsense", "", "", true},
	} {
		r := httptest.NewRequest("POST", "/", nil)
		r.RemoteAddr = tc.remote
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		got, err := clientAddr(r, trusted)
		if (err != nil) != tc.err || (err == nil && got.String() != tc.want) {
			t.Errorf("%s via %q = %v, %v", tc.remote, tc.xff, got, err)
		}
	}
}

func TestReasonAndPermanence(t *testing.T) {
	long := mcperr.New(mcperr.Upstream, "%s", strings.Repeat("é", 800))
	if r := reason(long); len(r) > 1004 || !strings.HasSuffix(r, "…") || !strings.HasPrefix(r, "UPSTREAM_ERROR: ") {
		t.Errorf("reason of a long error: %d bytes", len(r))
	}
	if r := reason(errors.New("store: closed")); r != "store: closed" {
		t.Errorf("plain error: %q", r)
	}
	for err, want := range map[error]bool{
		&pointerError{"x"}:                                            true,
		mcperr.New(mcperr.NotFound, "gone"):                           true,
		mcperr.New(mcperr.Upstream, "bad body").WithRetryable(false):  true,
		mcperr.New(mcperr.Upstream, "503"):                            false,
		mcperr.New(mcperr.Authentication, "refused"):                  false,
		mcperr.New(mcperr.RateLimit, "slow down"):                     false,
		fmt.Errorf("wrapped: %w", mcperr.New(mcperr.Validation, "x")): true,
		errors.New("database is locked"):                              false,
	} {
		if got := isPermanent(err); got != want {
			t.Errorf("isPermanent(%v) = %v", err, got)
		}
	}
}

func TestBackoff(t *testing.T) {
	p := &Processor{cfg: ProcessorConfig{RetryBase: time.Minute, RetryMax: time.Hour}}
	for n, want := range map[int]time.Duration{1: 2 * time.Minute, 2: 4 * time.Minute, 5: 32 * time.Minute, 6: time.Hour, 80: time.Hour} {
		d := p.backoff(n)
		if d < want || d > want+want/10 {
			t.Errorf("backoff(%d) = %s, want %s plus up to a tenth", n, d, want)
		}
	}
}

// TestShapesMatchPatterns: the id and type checks accept exactly what their
// regular expressions match.
func TestShapesMatchPatterns(t *testing.T) {
	id := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`)
	typ := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)
	cases := []string{"", "a", "0", "_", "-a", "arfq-12345678", "asellermsg-1", "a.b:c_d-e", "rfqs", "tripmsgs", "trip msgs",
		"a\n", "é", "A9", "9A", "a/b", "a\x00", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 65),
		strings.Repeat("b", 127), strings.Repeat("b", 128), strings.Repeat("b", 129), "x.y", "x:y", "Z_", "z-"}
	for _, c := range cases {
		if got, want := isID(c), id.MatchString(c); got != want {
			t.Errorf("isID(%q) = %v, the pattern says %v", c, got, want)
		}
		if got, want := isType(c), typ.MatchString(c); got != want {
			t.Errorf("isType(%q) = %v, the pattern says %v", c, got, want)
		}
	}
	for b := range 256 {
		for _, c := range []string{string(rune(b)), "a" + string([]byte{byte(b)}), string([]byte{byte(b)}) + "a"} {
			if isID(c) != id.MatchString(c) || isType(c) != typ.MatchString(c) {
				t.Errorf("%q: isID %v, isType %v; the patterns say %v, %v", c, isID(c), isType(c), id.MatchString(c), typ.MatchString(c))
			}
		}
	}
}

// TestCommitterAccounting: deliveries stored and refused at once, over both
// stores, each answered; afterwards no request counts as arriving and
// nothing is queued or being committed, so no later commit waits for them.
func TestCommitterAccounting(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		st := db.Open(t, store.Options{})
		rc, err := NewReceiver(ReceiverConfig{Store: st, ClientID: "avinode", ClientSecret: "a-secret-of-16-chars"})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[int]int{}
		for i := range 60 {
			wg.Go(func() {
				body := fmt.Sprintf(`{"id":"asellermsg-%d","href":"https://a.example/tripmsgs/%d","type":"tripmsgs"}`, i%25, i%25)
				secret := "a-secret-of-16-chars"
				switch i % 4 {
				case 1:
					secret = "not-the-secret-at-all"
				case 2:
					body = `{"id":`
				}
				req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.SetBasicAuth("avinode", secret)
				w := httptest.NewRecorder()
				rc.ServeHTTP(w, req)
				mu.Lock()
				codes[w.Code]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if codes[http.StatusOK] != 30 || codes[http.StatusUnauthorized] != 15 || codes[http.StatusBadRequest] != 15 {
			t.Errorf("answers %v", codes)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			rc.commit.mu.Lock()
			arriving, queued, flushing := rc.commit.arriving, rc.commit.queued, rc.commit.flushing
			rc.commit.mu.Unlock()
			if arriving == 0 && queued == 0 && flushing == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d arriving, %d queued, %d flushing", arriving, queued, flushing)
			}
			time.Sleep(time.Millisecond)
		}
	})
}

// TestCommitGathers: a commit waits for the deliveries still being checked
// while they outnumber the queue, is woken when one joins, and gives up on
// ones that never come after gatherWait; each delivery is answered.
func TestCommitGathers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		c := newCommitter(db.Open(t, store.Options{}), DefaultStoreTimeout)
		c.gatherWait = time.Minute // long enough to be seen waiting
		state := func() (waiting, queued int) {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.waiting, c.queued
		}
		until := func(what string, ok func() bool) {
			t.Helper()
			for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(100 * time.Microsecond) {
				if time.Now().After(deadline) {
					t.Fatalf("never %s", what)
				}
			}
		}
		in := func(id string) store.Incoming {
			return store.Incoming{Pointer: store.Pointer{ID: id, Href: "https://a.example/tripmsgs/" + id, Type: "tripmsgs"},
				Raw: []byte(`{}`), Source: store.SourceAvinode}
		}
		results := make(chan store.Received, 3)
		for range 3 {
			c.arrive()
		}
		go func() {
			r, err := c.store(in("asellermsg-1"))
			if err != nil {
				t.Error(err)
			}
			results <- r
		}()
		// One queued, two still arriving: the commit waits for them.
		until("waited for the arriving deliveries", func() bool { w, q := state(); return w > 0 && q == 1 })
		go func() {
			r, err := c.store(in("asellermsg-2"))
			if err != nil {
				t.Error(err)
			}
			results <- r
		}()
		a, b := <-results, <-results
		if !a.Fresh || !b.Fresh || a.ID == b.ID {
			t.Errorf("answers %+v, %+v", a, b)
		}
		// Of three more arriving, one queues and two never come: the commit
		// goes after gatherWait.
		c.mu.Lock()
		c.gatherWait = gatherWait
		c.mu.Unlock()
		c.arrive()
		c.arrive()
		go func() {
			r, err := c.store(in("asellermsg-3"))
			if err != nil {
				t.Error(err)
			}
			results <- r
		}()
		if r := <-results; !r.Fresh {
			t.Errorf("answer %+v", r)
		}
		c.leave()
		c.leave()
		until("idle", func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.arriving == 0 && c.flushing == 0 && c.waiting == 0
		})
	})
}

// TestBasicAuthAsNetHTTP: the receiver reads HTTP Basic credentials exactly
// as Request.BasicAuth does.
func TestBasicAuthAsNetHTTP(t *testing.T) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, h := range []string{"", "Basic", "Basic ", "Basic " + enc("user:pass"), "basic " + enc("user:pass"),
		"BASIC " + enc("u:p:q"), "Basic " + enc("nocolon"), "Basic " + enc(":"), "Basic not-base64!",
		"Bearer " + enc("user:pass"), "Basic  " + enc("user:pass"), "Basic " + enc(strings.Repeat("long", 100)+":x"),
		"Basic " + enc("é:ü")} {
		r := httptest.NewRequest(http.MethodPost, Path, nil)
		if h != "" {
			r.Header.Set("Authorization", h)
		}
		wu, wp, wok := r.BasicAuth()
		var buf [192]byte
		gu, gp, gok := basicAuth(h, &buf)
		if string(gu) != wu || string(gp) != wp || gok != wok {
			t.Errorf("basicAuth(%q) = %q %q %v, net/http %q %q %v", h, gu, gp, gok, wu, wp, wok)
		}
	}
}

// TestAnswerAsEncodingJSON: the answers are the bytes json.Encoder writes.
func TestAnswerAsEncodingJSON(t *testing.T) {
	for _, a := range []answer{{Status: "stored", EventID: "wh-0123456789abcdef"}, {Status: "duplicate", EventID: "wh-1"},
		{Status: "refused", Error: `the "X-Sig" signature <does not> match & "so"`, Field: "id"},
		{Status: "refused", Error: "tripId holds \u0007 control characters, é, \u2028 and \xff"}, {}} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(a); err != nil {
			t.Fatal(err)
		}
		if got := a.appendJSON(nil); string(got) != want.String() {
			t.Errorf("answer %+v:\n got %s\nwant %s", a, got, want.Bytes())
		}
	}
}

// TestSignedConcurrently: the recycled HMAC states give each check its own
// answer, under any case of hex and with the optional prefix.
func TestSignedConcurrently(t *testing.T) {
	rc, err := NewReceiver(ReceiverConfig{Store: &store.Store{}, ClientID: "id", ClientSecret: strings.Repeat("s", MinSecretLength),
		SigningSecret: "signing-secret"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				body := []byte(fmt.Sprintf(`{"id":"a-%d-%d"}`, g, i))
				sig := Sign("signing-secret", body)
				bare := strings.TrimPrefix(sig, "sha256=")
				for _, h := range []string{sig, bare, strings.ToUpper(bare), "  " + sig + " "} {
					if !rc.signed(h, body) {
						t.Errorf("signature %q of %s refused", h, body)
					}
				}
				for _, h := range []string{Sign("other", body), sig[:len(sig)-1], sig + "0", bare[:62] + "zz", Sign("signing-secret", append(body, ' '))} {
					if rc.signed(h, body) {
						t.Errorf("signature %q of %s accepted", h, body)
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestFlatStringsAgreesWithDecoder: the one-pass reading of a flat object
// of strings accepts only bodies the general decoder accepts, as objects
// with the same keys and values; the rest (nesting, escapes, numbers, null,
// a key twice, trailing bytes) it leaves to the decoder.
func TestFlatStringsAgreesWithDecoder(t *testing.T) {
	limits := validate.Limits{MaxDepth: 32, MaxValues: 10_000}
	bodies := []string{
		`{"id":"amsg-1","href":"https://x.example/tripmsgs/amsg-1","type":"tripmsgs","tripId":"T1"}`,
		" \t\r\n{ \"id\" : \"a\" , \"type\":\"rfqs\" } \n", `{}`, ` { } `, `{"a":""}`, `{"":"x"}`,
		`{"id":"a","id":"b"}`, `{"id":"a","ID":"b"}`, `{"id":"a" "type":"b"}`, `{"id":"a",}`, `{,}`, `{"id":"a"}x`,
		`{"id":"a"}{}`, `{"id":"a\"b"}`, `{"id":"a\u0041"}`, `{"id":"a\\"}`, "{\"id\":\"a\tb\"}", `{"id":1}`,
		`{"id":null}`, `{"id":true}`, `{"id":["a"]}`, `{"id":{"x":"y"}}`, `{"id":"a"`, `{"id":`, `{"id"`, `{`, `[]`,
		`"id"`, ``, `   `, `{"id":'a'}`, `{id:"a"}`, `{"id":"é ü"}`, "\u00a0{}", `{"id":"a\u0000"}`, "{\"id\":\"a\x00\"}",
		"{\"id\":\"a\"}\x00", `{"a\u0000":"x"}`, `{"a":"1","b":"2","c":"3","d":"4",` +
			`"e":"5","f":"6","g":"7","h":"8","i":"9","j":"10","k":"11","l":"12","m":"13","n":"14","o":"15","p":"16"}`,
		`{"a":"1","b":"2","c":"3","d":"4","e":"5","f":"6","g":"7","h":"8","i":"9","j":"10","k":"11","l":"12","m":"13",` +
			`"n":"14","o":"15","p":"16","q":"17"}`,
	}
	flat := 0
	for _, b := range bodies {
		o, ok := flatStrings([]byte(b))
		v, err := limits.Decode([]byte(b))
		if !ok {
			continue
		}
		flat++
		obj, isObj := v.(map[string]any)
		if err != nil || !isObj {
			t.Errorf("%q: read as a flat object, but the decoder says %v (%T)", b, err, v)
			continue
		}
		if o.n != len(obj) {
			t.Errorf("%q: %d keys read, the decoder has %d", b, o.n, len(obj))
		}
		for k, want := range obj {
			got, present, isString := o.get(k)
			if !present || !isString || got != want {
				t.Errorf("%q: %s = %q (%v %v), the decoder has %v", b, k, got, present, isString, want)
			}
		}
		if _, present, _ := o.get("absent"); present {
			t.Errorf("%q: a key that is not there was found", b)
		}
	}
	if flat != 9 {
		t.Errorf("%d of the bodies read as flat objects, want 9", flat)
	}
	// Every prefix of a good body, and every one-byte change to it.
	good := []byte(bodies[0])
	for i := range good {
		for _, c := range []byte{'"', '\\', ',', ':', '{', '}', ' ', 'x', 0, '1'} {
			m := bytes.Clone(good)
			m[i] = c
			for _, b := range [][]byte{good[:i], m} {
				if _, ok := flatStrings(b); ok {
					if v, err := limits.Decode(b); err != nil {
						t.Errorf("%q: read as a flat object, but the decoder says %v", b, err)
					} else if _, isObj := v.(map[string]any); !isObj {
						t.Errorf("%q: read as a flat object, but the decoder gives %T", b, v)
					}
				}
			}
		}
	}
}

// TestParseRefusesNUL: a NUL character anywhere in a delivery — escaped, in
// a key or a value at any depth, or as a byte — is refused by both readings
// of a body, the field named; an escaped backslash before "u0000" is no
// NUL and is accepted.
func TestParseRefusesNUL(t *testing.T) {
	rc := &Receiver{decoding: validate.Limits{MaxDepth: 32, MaxValues: 10_000}}
	const head = `"id":"arfq-1","href":"https://a.example/rfqs/arfq-1","type":"rfqs"`
	for body, field := range map[string]string{
		`{"id":"arfq-1\u0000","href":"https://a.example/b","type":"rfqs"}`: "id",
		`{"id":"arfq-1","href":"https://a.example/\u0000","type":"rfqs"}`:  "href",
		`{"id":"arfq-1","href":"https://a.example/b","type":"\u0000rfqs"}`: "type",
		`{` + head + `,"tripId":"T\u0000"}`:                                "tripId",
		`{` + head + `,"z":"\u0000","a":"\u0000"}`:                         "a",
		`{` + head + `,"m":{"x":[1,{"y":"\u0000"}]}}`:                      "m.x[1].y",
		`{` + head + `,"\u0000":"x"}`:                                      `\u0000`,
		`{` + head + `,"m":{"a\u0000b":null}}`:                             `m.a\u0000b`,
		`{` + head + `,"n":"\\\u0000"}`:                                    "n",
		"{" + head + ",\"n\":\"\x00\"}":                                    "",
		"{" + head + "}\x00":                                               "",
	} {
		if _, ok := flatStrings([]byte(body)); ok {
			t.Errorf("%q: read as a flat object", body)
		}
		_, got, err := rc.parse([]byte(body))
		if err == nil || got != field {
			t.Errorf("%q: field %q, %v; want %q refused", body, got, err, field)
		} else if field != "" && !strings.Contains(err.Error(), "NUL") {
			t.Errorf("%q: refused with %q", body, err)
		}
	}
	for _, body := range []string{`{` + head + `,"n":"\\u0000"}`, `{` + head + `,"n":"u0000","m":"\u0001"}`} {
		if _, field, err := rc.parse([]byte(body)); err != nil {
			t.Errorf("%q: refused (%s): %v", body, field, err)
		}
	}
}

// TestCommitterRefusesOnlyTheNUL: of deliveries committed together, on
// both stores, one the store cannot hold (a NUL its checks let through) is
// answered as refused, and the others are stored.
func TestCommitterRefusesOnlyTheNUL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		st := db.Open(t, store.Options{})
		c := newCommitter(st, DefaultStoreTimeout)
		c.gatherWait = time.Minute // all five in one batch
		const n, bad = 5, 2
		for range n {
			c.arrive()
		}
		res := make([]store.Received, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				id := fmt.Sprintf("asellermsg-%d", 900+i)
				in := store.Incoming{Pointer: store.Pointer{ID: id, Href: "https://a.example/tripmsgs/" + id, Type: "tripmsgs"},
					Raw: []byte(`{"id":"` + id + `"}`), Source: store.SourceAvinode}
				if i == bad {
					in.TripRef = "T\x00"
				}
				res[i], errs[i] = c.store(in)
			})
		}
		wg.Wait()
		for i, r := range res {
			switch {
			case errs[i] != nil:
				t.Errorf("delivery %d: %v", i, errs[i])
			case i == bad && (r.Refused == nil || r.Refused.Field != "tripId" || r.ID != ""):
				t.Errorf("the NUL delivery: %+v", r)
			case i != bad && (r.Refused != nil || !r.Fresh || r.ID == ""):
				t.Errorf("delivery %d: %+v", i, r)
			}
		}
		evs, err := st.WebhookEvents(context.Background(), store.EventFilter{})
		if err != nil || len(evs) != n-1 {
			t.Errorf("%d events stored, want %d: %v", len(evs), n-1, err)
		}
	})
}
