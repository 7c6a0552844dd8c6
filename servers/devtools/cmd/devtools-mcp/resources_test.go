// The 2025-11-25 protocol's resources/subscribe and initialize handshake
// are deprecated in mcp-go, which prefers 2026-07-28; the server serves both
// eras, so these tests drive the older one on purpose.
//
//lint:file-ignore SA1019 the 2025-11-25 protocol era is tested on purpose

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// TestStdioFileResources: the built binary serves its files as resources
// over real stdio, and a subscribed client hears of a change made by another
// process, and of none after unsubscribing.
func TestStdioFileResources(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	outside := t.TempDir()
	c := mcptest.StartStdioWith(t, binary(t), []string{"DEVTOOLS_ROOTS=" + root}, nil, []client.ClientOption{client.WithLegacyProtocolOnly()})
	updates := mcptest.ListenUpdates(c)
	ctx := context.Background()
	hello := "file://" + filepath.Join(root, "hello.txt")
	sentinel := "file://" + filepath.Join(root, "sentinel")
	list, err := c.Raw().ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil || len(list.Resources) != 1 || list.Resources[0].URI != hello {
		t.Fatalf("resources/list = %+v, %v", list, err)
	}
	res, err := c.Raw().ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: hello}})
	if err != nil || res.Contents[0].(mcp.TextResourceContents).Text != "hello\nworld\n" {
		t.Fatalf("resources/read = %+v, %v", res, err)
	}
	for _, uri := range []string{hello, sentinel} {
		if err := c.Raw().Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: uri}}); err != nil {
			t.Fatal(err)
		}
	}
	// Another process's change: a file written beside the root, renamed in
	// (one event, as an editor saves).
	replace := func(name, content string) {
		tmp := filepath.Join(outside, name)
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	replace("hello.txt", "changed\n")
	if got := updates.Next(t); got != hello {
		t.Fatalf("update for %s, want %s", got, hello)
	}
	if err := c.Raw().Unsubscribe(ctx, mcp.UnsubscribeRequest{Params: mcp.UnsubscribeParams{URI: hello}}); err != nil {
		t.Fatal(err)
	}
	replace("hello.txt", "after unsubscribe\n")
	replace("sentinel", "s")
	if got := updates.Next(t); got != sentinel {
		t.Errorf("after unsubscribe the next update is for %s, want the sentinel's", got)
	}
}

// TestFileResourcesShippedACL: under configs/acl.yaml the developer agent
// lists and reads the file resources; an agent with no devtools tool sees
// none and can neither read nor subscribe.
func TestFileResourcesShippedACL(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	root := tempRoot(t)
	hello := "file://" + filepath.Join(root, "hello.txt")
	ctx := context.Background()
	start := func(agent string) *mcptest.Client {
		return mcptest.StartStdioWith(t, bin, []string{"DEVTOOLS_ROOTS=" + root, "MCP_ACL_FILE=" + mcptest.RepoFile(t, "configs", "acl.yaml"), "MCP_AGENT=" + agent}, nil,
			[]client.ClientOption{client.WithLegacyProtocolOnly()})
	}
	dev := start("developer")
	if list, err := dev.Raw().ListResources(ctx, mcp.ListResourcesRequest{}); err != nil || len(list.Resources) != 1 {
		t.Errorf("developer lists %+v, %v", list, err)
	}
	if _, err := dev.Raw().ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: hello}}); err != nil {
		t.Errorf("developer reads: %v", err)
	}
	orch := start("orchestrator")
	if list, err := orch.Raw().ListResources(ctx, mcp.ListResourcesRequest{}); err != nil || len(list.Resources) != 0 {
		t.Errorf("orchestrator lists %+v, %v", list, err)
	}
	if tl, err := orch.Raw().ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{}); err != nil || len(tl.ResourceTemplates) != 0 {
		t.Errorf("orchestrator lists templates %+v, %v", tl, err)
	}
	if _, err := orch.Raw().ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: hello}}); err == nil {
		t.Error("orchestrator read a file resource")
	}
	if err := orch.Raw().Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: hello}}); err == nil {
		t.Error("orchestrator subscribed to a file resource")
	}
}
