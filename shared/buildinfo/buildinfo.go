// Package buildinfo is the version and commit a server binary was built
// from. Release builds set them at link time, for every server at once:
//
//	go build -ldflags "-X github.com/mcp-fleet/mcp-fleet/shared/buildinfo.version=1.2.3 \
//	  -X github.com/mcp-fleet/mcp-fleet/shared/buildinfo.commit=0123abc" ./servers/<s>/cmd/<s>-mcp
//
// A plain go build (tests, go run) leaves "dev" and "unknown".
package buildinfo

// Strings, not constants: the linker's -X sets only string variables.
var (
	version = "dev"
	commit  = "unknown"
)

// Version is the release version the binary was linked with, or "dev".
func Version() string { return version }

// Commit is the source commit the binary was linked with, or "unknown".
func Commit() string { return commit }
