// Some tests drive the 2025-11-25 protocol (initialize handshake,
// resources/subscribe), which mcp-go marks deprecated in favour of
// 2026-07-28; the server serves both eras, so they do so on purpose.
//
//lint:file-ignore SA1019 the 2025-11-25 protocol era is tested on purpose

package tools_test

import (
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// connect serves s to an in-process client calling as agent; legacy keeps
// the client on protocol 2025-11-25 (the initialize handshake), else it
// negotiates 2026-07-28. The resource and roots tests need both eras.
func connect(t *testing.T, s *kit.Server, agent string, legacy bool, opts ...client.ClientOption) *mcptest.Client {
	t.Helper()
	if legacy {
		opts = append(opts, client.WithLegacyProtocolOnly())
	}
	return mcptest.NewInProcess(t, s, agent, opts...)
}
