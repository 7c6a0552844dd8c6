// Command tiny stands in for a server in the release tests: it answers
// --version as the servers do, from the same linked variables, and builds
// in seconds for any platform.
package main

import (
	"fmt"
	"os"

	"github.com/mcp-fleet/mcp-fleet/shared/buildinfo"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Printf("tiny-mcp %s (commit %s)\n", buildinfo.Version(), buildinfo.Commit())
	}
}
