#!/bin/sh
# temporary helper (not committed): tidy go.mod outside the workspace
set -e
cp go.mod go.mod.bak
echo 'replace github.com/mcp-fleet/mcp-fleet/shared => ../../shared' >> go.mod
GOWORK=off GOFLAGS=-mod=mod go get google.golang.org/api@v0.309.0 golang.org/x/oauth2@v0.37.0
GOWORK=off GOFLAGS=-mod=mod go mod tidy
grep -v '^replace github.com/mcp-fleet/mcp-fleet/shared' go.mod > go.mod.new && mv go.mod.new go.mod
rm go.mod.bak
