package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestUsage(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--no-such-flag"}, 2, "flag provided but not defined"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
		{[]string{"--help"}, 0, "-quote-wait"},
		{[]string{"--bin", t.TempDir(), "--policy", "../../../../configs/acl.yaml", "--dir", t.TempDir()}, 1, "avinode-mcp is not in"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if code := run(context.Background(), c.args, &out, &errb); code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("run %q = %d, stderr %q; want %d and %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}
