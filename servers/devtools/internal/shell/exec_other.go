//go:build !unix

package shell

import (
	"context"
	"time"
)

// execute needs process groups, which only Unix systems have here.
func execute(context.Context, string, string, []string, string, []string, time.Duration, int64) (*Result, error) {
	return nil, failed("shell_execute is only supported on Unix systems", nil)
}
