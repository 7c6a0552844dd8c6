// Package command is what the fleetcheck commands' main functions share.
package command

import (
	"context"
	"io"
	"os"
	"os/signal"
)

// Exit runs run on the process's arguments and standard streams, with a
// context that an interrupt cancels (the command stops what it started and
// reports), and exits with the code run returns.
func Exit(run func(ctx context.Context, args []string, stdout, stderr io.Writer) int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
