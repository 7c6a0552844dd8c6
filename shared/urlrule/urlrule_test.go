package urlrule

import (
	"errors"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		url      string
		ok       bool
		insecure bool // refused for plain http to another host
	}{
		{"https://sandbox.avinode.com/api", true, false},
		{"https://127.example.com/api", true, false},
		{"http://127.0.0.1:8080", true, false},
		{"http://127.0.0.1:8080/api", true, false},
		{"http://127.1.2.3/token", true, false},
		{"http://localhost:9000/token", true, false},
		{"http://LOCALHOST/token", true, false},
		{"http://[::1]:8080/", true, false},
		{"http://[::1]/", true, false},
		{"http://[::ffff:127.0.0.1]:80/", true, false},
		{"http://127.0.0.1@localhost/", true, false},

		{"http://127.example.com/api", false, true},
		{"http://127.0.0.1.example.com/api", false, true},
		{"http://localhost.evil.com/token", false, true},
		{"http://127.0.0.1@evil.com/", false, true},
		{"http://127.0.0.1:80@evil.com/", false, true},
		{"http://localhost:x@evil.com/", false, true},
		{"http://[::2]/", false, true},
		{"http://10.0.0.1/", false, true},
		{"http://0.0.0.0/", false, true},
		{"http://example.com/", false, true},
		{"http://2130706433/", false, true}, // 127.0.0.1 as a number: not parsed as an address, refused

		{"ftp://127.0.0.1/", false, false},
		{"127.0.0.1:8080", false, false},
		{"/relative/path", false, false},
		{"http://", false, false},
		{"", false, false},
		{"http://[::1/", false, false},
	} {
		err := Check(c.url)
		if (err == nil) != c.ok {
			t.Errorf("Check(%q) = %v, want ok=%v", c.url, err, c.ok)
			continue
		}
		if got := errors.Is(err, ErrInsecure); got != c.insecure {
			t.Errorf("Check(%q) = %v: ErrInsecure %v, want %v", c.url, err, got, c.insecure)
		}
	}
}

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "Localhost": true, "127.0.0.1": true, "127.255.255.254": true, "::1": true, "[::1]": true,
		"::ffff:127.0.0.1": true, "fe80::1%lo": false, "::1%lo": true,
		"127.example.com": false, "localhost.evil.com": false, "evil-localhost": false, "128.0.0.1": false,
		"0.0.0.0": false, "::": false, "": false, "127.0.0": false, "[127.0.0.1]": true,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
