package mcperr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestErrorString(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"no field", New(NotFound, "no client %q", "acme"), `NOT_FOUND: no client "acme"`},
		{"with field", Invalid("limit", 5000, "<= 100", "limit too large"), `VALIDATION_ERROR: limit too large (field "limit")`},
		{"format args", New(Conflict, "%d rows, %s", 3, "stale"), `CONFLICT: 3 rows, stale`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestInvalidFields(t *testing.T) {
	e := Invalid("filters.limit", 7, "<= 5", "bad %s", "limit")
	if e.Code != Validation || e.Field != "filters.limit" || e.Value != 7 || e.Expected != "<= 5" || e.Message != "bad limit" {
		t.Fatalf("Invalid() = %+v", e)
	}
}

func TestRetryableDefaults(t *testing.T) {
	want := map[Code]bool{
		Validation:       false,
		NotFound:         false,
		PermissionDeny:   false,
		Authentication:   false,
		RateLimit:        true,
		Timeout:          true,
		Upstream:         true,
		Transport:        true,
		Conflict:         false,
		Internal:         false,
		Cancelled:        false,
		Code("WHATEVER"): false,
	}
	for _, c := range Codes {
		if _, ok := want[c]; !ok {
			t.Errorf("code %s has no expectation in this test", c)
		}
	}
	for code, retry := range want {
		t.Run(string(code), func(t *testing.T) {
			if got := New(code, "x").Retryable(); got != retry {
				t.Errorf("Retryable() = %v, want %v", got, retry)
			}
			if got := New(code, "x").Body().Data.Retryable; got != retry {
				t.Errorf("Body().Data.Retryable = %v, want %v", got, retry)
			}
		})
	}
}

func TestWithRetryableOverrides(t *testing.T) {
	tests := []struct {
		code     Code
		override bool
	}{
		{RateLimit, false},
		{Upstream, false},
		{Conflict, true},
		{Internal, true},
		{Timeout, true},
		{NotFound, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s=%v", tc.code, tc.override), func(t *testing.T) {
			e := New(tc.code, "x")
			if got := e.WithRetryable(tc.override); got != e {
				t.Fatal("WithRetryable must return the receiver")
			}
			if e.Retryable() != tc.override {
				t.Errorf("Retryable() = %v, want override %v", e.Retryable(), tc.override)
			}
			if e.Body().Data.Retryable != tc.override {
				t.Errorf("Body().Data.Retryable = %v, want %v", e.Body().Data.Retryable, tc.override)
			}
		})
	}
}

func TestWrap(t *testing.T) {
	plain := errors.New("dial tcp 10.0.0.7:5432: password=hunter2 rejected")
	inner := New(NotFound, "no such trip").WithRetryable(true)
	deadlineCtx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	cancelledCtx, cancel2 := context.WithCancel(context.Background())
	cancel2()

	tests := []struct {
		name      string
		in        error
		wantCode  Code
		wantMsg   string
		wantSame  *Error // Wrap must return this exact *Error
		wantCause error  // errors.Is(result, wantCause)
		retryable bool
	}{
		{name: "deadline", in: context.DeadlineExceeded, wantCode: Timeout, wantMsg: "the operation timed out", wantCause: context.DeadlineExceeded, retryable: true},
		{name: "ctx deadline err", in: deadlineCtx.Err(), wantCode: Timeout, wantMsg: "the operation timed out", wantCause: context.DeadlineExceeded, retryable: true},
		{name: "wrapped deadline", in: fmt.Errorf("query: %w", context.DeadlineExceeded), wantCode: Timeout, wantMsg: "the operation timed out", wantCause: context.DeadlineExceeded, retryable: true},
		{name: "cancelled", in: context.Canceled, wantCode: Cancelled, wantMsg: "the request was cancelled", wantCause: context.Canceled, retryable: false},
		{name: "ctx cancelled err", in: cancelledCtx.Err(), wantCode: Cancelled, wantMsg: "the request was cancelled", wantCause: context.Canceled, retryable: false},
		{name: "wrapped cancelled", in: fmt.Errorf("fetch: %w", context.Canceled), wantCode: Cancelled, wantMsg: "the request was cancelled", wantCause: context.Canceled},
		{name: "plain", in: plain, wantCode: Internal, wantMsg: "internal error", wantCause: plain},
		{name: "wrapped plain", in: fmt.Errorf("layer: %w", plain), wantCode: Internal, wantMsg: "internal error", wantCause: plain},
		{name: "*Error as is", in: inner, wantCode: NotFound, wantMsg: "no such trip", wantSame: inner, retryable: true},
		{name: "wrapped *Error", in: fmt.Errorf("handler: %w", inner), wantCode: NotFound, wantMsg: "no such trip", wantSame: inner, retryable: true},
		{name: "*Error wrapping deadline keeps its code", in: New(Upstream, "avinode down").WithCause(context.DeadlineExceeded), wantCode: Upstream, wantMsg: "avinode down", wantCause: context.DeadlineExceeded, retryable: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Wrap(tc.in)
			if got == nil {
				t.Fatal("Wrap returned nil")
			}
			if got.Code != tc.wantCode {
				t.Errorf("Code = %s, want %s", got.Code, tc.wantCode)
			}
			if got.Message != tc.wantMsg {
				t.Errorf("Message = %q, want %q", got.Message, tc.wantMsg)
			}
			if tc.wantSame != nil && got != tc.wantSame {
				t.Errorf("Wrap returned a different *Error (%p) than the one in the chain (%p)", got, tc.wantSame)
			}
			if tc.wantCause != nil && !errors.Is(got, tc.wantCause) {
				t.Errorf("errors.Is(Wrap(err), cause) = false; cause must be kept")
			}
			if got.Retryable() != tc.retryable {
				t.Errorf("Retryable() = %v, want %v", got.Retryable(), tc.retryable)
			}
		})
	}
}

func TestWrapNil(t *testing.T) {
	if got := Wrap(nil); got != nil {
		t.Fatalf("Wrap(nil) = %v, want nil", got)
	}
}

// The text of an arbitrary error may carry hosts, paths or secrets: it must
// reach errors.Is/As and logs, never the client.
func TestWrapPlainErrorNeverLeaksCause(t *testing.T) {
	secret := "password=hunter2-s3cr3t host=db.internal"
	cause := errors.New(secret)
	e := Wrap(fmt.Errorf("open: %w", cause))
	if !errors.Is(e, cause) {
		t.Fatal("cause lost")
	}
	if e.Unwrap() == nil {
		t.Fatal("Unwrap() = nil, want the cause")
	}
	body := e.Body()
	if strings.Contains(body.Message, "hunter2") || strings.Contains(fmt.Sprint(body.Data.Value), "hunter2") {
		t.Errorf("Body leaks the cause: %+v", body)
	}
	raw := e.JSON()
	if strings.Contains(string(raw), "hunter2") || strings.Contains(string(raw), "db.internal") {
		t.Errorf("JSON leaks the cause: %s", raw)
	}
	if strings.Contains(e.Error(), "hunter2") {
		t.Errorf("Error() leaks the cause: %s", e.Error())
	}
}

func TestWithCause(t *testing.T) {
	cause := errors.New("boom")
	e := New(Upstream, "upstream failed")
	if got := e.WithCause(cause); got != e {
		t.Fatal("WithCause must return the receiver")
	}
	if !errors.Is(e, cause) {
		t.Error("errors.Is(e, cause) = false")
	}
	if strings.Contains(string(e.JSON()), "boom") {
		t.Errorf("JSON contains the cause: %s", e.JSON())
	}
	if New(Upstream, "x").Unwrap() != nil {
		t.Error("Unwrap() of an error without cause should be nil")
	}
}

func TestRetryAfterRounding(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int // 0 means absent
	}{
		{0, 0},
		{-time.Second, 0},
		{time.Nanosecond, 1},
		{time.Millisecond, 1},
		{999 * time.Millisecond, 1},
		{time.Second, 1},
		{time.Second + time.Nanosecond, 2},
		{1500 * time.Millisecond, 2},
		{2 * time.Second, 2},
		{59*time.Second + 1, 60},
		{time.Minute, 60},
	}
	for _, tc := range tests {
		t.Run(tc.d.String(), func(t *testing.T) {
			e := New(RateLimit, "slow down")
			e.RetryAfter = tc.d
			got := e.Body().Data.RetryAfterSeconds
			if tc.want == 0 {
				if got != nil {
					t.Fatalf("RetryAfterSeconds = %d, want absent", *got)
				}
				if strings.Contains(string(e.JSON()), "retry_after_seconds") {
					t.Fatalf("JSON has retry_after_seconds: %s", e.JSON())
				}
				return
			}
			if got == nil {
				t.Fatalf("RetryAfterSeconds absent, want %d", tc.want)
			}
			if *got != tc.want {
				t.Fatalf("RetryAfterSeconds = %d, want %d", *got, tc.want)
			}
			if !strings.Contains(string(e.JSON()), fmt.Sprintf(`"retry_after_seconds":%d`, tc.want)) {
				t.Fatalf("JSON lacks retry_after_seconds %d: %s", tc.want, e.JSON())
			}
		})
	}
}

func TestJSONShape(t *testing.T) {
	e := Invalid("limit", 500, "<= 100", "limit %d is too large", 500)
	var got map[string]any
	if err := json.Unmarshal(e.JSON(), &got); err != nil {
		t.Fatalf("JSON() is not JSON: %v: %s", err, e.JSON())
	}
	want := map[string]any{
		"code":    "VALIDATION_ERROR",
		"message": "limit 500 is too large",
		"data": map[string]any{
			"field":     "limit",
			"value":     float64(500),
			"expected":  "<= 100",
			"retryable": false,
		},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("JSON() = %v\nwant     %v", got, want)
	}

	// Empty locator fields are omitted, retryable is always present.
	raw := string(New(Upstream, "bad gateway").JSON())
	wantRaw := `{"code":"UPSTREAM_ERROR","message":"bad gateway","data":{"retryable":true}}`
	if raw != wantRaw {
		t.Fatalf("JSON() = %s, want %s", raw, wantRaw)
	}
}

func TestJSONUnmarshalableValue(t *testing.T) {
	tests := []struct {
		name      string
		value     any
		wantValue string
	}{
		{"channel", make(chan int), ""}, // address varies; only check it is a string
		{"func", func() {}, ""},
		{"NaN", math.NaN(), "NaN"},
		{"+Inf", math.Inf(1), "+Inf"},
		{"map with NaN", map[string]float64{"x": math.NaN()}, "map[x:NaN]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := Invalid("x", tc.value, "a number", "bad x")
			raw := e.JSON()
			var got Body
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("JSON() with an unmarshalable value is not valid JSON: %v: %q", err, raw)
			}
			if got.Code != Validation || got.Message != "bad x" || got.Data.Field != "x" || got.Data.Expected != "a number" {
				t.Errorf("fields lost in fallback: %+v", got)
			}
			s, ok := got.Data.Value.(string)
			if !ok || s == "" {
				t.Fatalf("value = %#v, want its fmt.Sprint string", got.Data.Value)
			}
			if tc.wantValue != "" && s != tc.wantValue {
				t.Errorf("value = %q, want %q", s, tc.wantValue)
			}
		})
	}
}

func TestCodesComplete(t *testing.T) {
	seen := map[Code]bool{}
	for _, c := range Codes {
		if seen[c] {
			t.Errorf("duplicate code %s", c)
		}
		seen[c] = true
		if c == "" || strings.ToUpper(string(c)) != string(c) {
			t.Errorf("code %q is not an upper-case name", c)
		}
	}
}

type codedErr struct{ path string }

func (c codedErr) Error() string { return "open " + c.path + ": no such file" }
func (c codedErr) MCPError() *Error {
	return New(NotFound, "%s does not exist", c.path)
}

func TestWrapCoded(t *testing.T) {
	err := fmt.Errorf("reading config: %w", codedErr{path: "a.txt"})
	e := Wrap(err)
	if e.Code != NotFound || e.Message != "a.txt does not exist" {
		t.Fatalf("Wrap(coded) = %v", e)
	}
	if !errors.Is(e, err) && !errors.As(e, new(codedErr)) {
		t.Fatalf("cause not kept: %v", e.Unwrap())
	}
}
