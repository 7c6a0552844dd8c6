// Command tiny stands in for a server in the release tests: it answers
// --version as the servers do, and builds in seconds for any platform.
package main

import (
	"fmt"
	"os"
)

var (
	version = "dev"
	commit  = "unknown"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Printf("tiny-mcp %s (commit %s)\n", version, commit)
	}
}
