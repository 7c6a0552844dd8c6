package engine

import (
	"net/http"
	"reflect"
	"testing"
)

// TestRequestKeepsNoHTTPHeader: a request being served holds no HTTP
// header, so the Authorization header (the bearer token) is not kept past
// authentication, where only the validated claims go on.
func TestRequestKeepsNoHTTPHeader(t *testing.T) {
	rt := reflect.TypeOf(request{})
	for i := range rt.NumField() {
		if f := rt.Field(i); f.Type == reflect.TypeOf(http.Header{}) || f.Type == reflect.TypeOf(&http.Request{}) {
			t.Errorf("request.%s is a %s: it would keep the Authorization header", f.Name, f.Type)
		}
	}
}
