package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestExit runs this test binary again as a command whose run prints its
// arguments and returns 3.
func TestExit(t *testing.T) {
	if os.Getenv("COMMAND_TEST_EXIT") == "1" {
		Exit(func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
			fmt.Fprintln(stdout, strings.Join(args, " "))
			fmt.Fprintln(stderr, ctx.Err())
			return 3
		})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestExit$", "one", "two")
	cmd.Env = append(os.Environ(), "COMMAND_TEST_EXIT=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("exit: %v, want status 3; stderr %s", err, stderr.String())
	}
	if got := stdout.String(); got != "-test.run=^TestExit$ one two\n" {
		t.Errorf("run saw arguments %q", got)
	}
	if got := stderr.String(); got != "<nil>\n" {
		t.Errorf("the context was done before an interrupt: %q", got)
	}
}
