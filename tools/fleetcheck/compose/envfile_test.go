package compose

import (
	"context"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/help"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/testbin"
)

// TestEnvExampleListsEveryVariable: configs/.env.example says it lists every
// variable the servers read. The servers' --help is generated from the
// kit's flag definitions (every flag with its variables, every
// environment-only value and every variable a server reads directly), for
// the server and for each of its commands; every variable named there must
// have an entry in the example, set or commented out.
func TestEnvExampleListsEveryVariable(t *testing.T) {
	entries, err := EnvEntries(filepath.Join(testbin.Root(t), "configs", ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	readers := map[string][]string{} // variable → the programs that read it
	for _, s := range testbin.Servers {
		bin := testbin.Server(t, dir, s)
		h, err := help.Load(ctx, bin)
		if err != nil {
			t.Fatal(err)
		}
		progs := []*help.Server{h}
		for _, cmd := range h.Commands {
			ch, err := help.LoadCommand(ctx, bin, cmd)
			if err != nil {
				t.Fatal(err)
			}
			progs = append(progs, ch)
		}
		for _, p := range progs {
			for _, v := range p.Env() {
				readers[v] = append(readers[v], p.Program)
			}
		}
	}
	if len(readers) < 100 || !entries["MCP_TRANSPORT"] {
		t.Fatalf("the servers' --help names %d variables; the gathering is broken", len(readers))
	}
	var missing []string
	for v, progs := range readers {
		if !entries[v] {
			missing = append(missing, v+" ("+strings.Join(progs, ", ")+")")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("configs/.env.example has no entry for %d of the %d variables the servers read:\n  %s",
			len(missing), len(readers), strings.Join(missing, "\n  "))
	}
}

// TestDotEnvIgnored: the compose stack's .env at the repository root holds
// the database passwords, the JWT secret and the agents' tokens once
// scripts/compose-env.sh has filled it; it, and every .env.* but the
// examples, must never be committed.
func TestDotEnvIgnored(t *testing.T) {
	root := testbin.Root(t)
	ignored := func(p string) bool {
		cmd := exec.Command("git", "-C", root, "check-ignore", "-q", "--no-index", p)
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
			return false
		}
		if err != nil {
			t.Fatalf("git check-ignore %s: %v", p, err)
		}
		return true
	}
	for p, want := range map[string]bool{
		".env": true, ".env.local": true, ".env.production": true, "servers/gmail/.env": true, "configs/.env": true,
		"configs/.env.example": false, ".env.example": false, "docs/env.md": false,
	} {
		if got := ignored(p); got != want {
			t.Errorf("%s: ignored %v, want %v", p, got, want)
		}
	}
}
