// Command printversion prints what buildinfo holds, for the package's test.
package main

import (
	"fmt"

	"github.com/mcp-fleet/mcp-fleet/shared/buildinfo"
)

func main() { fmt.Println(buildinfo.Version(), buildinfo.Commit()) }
