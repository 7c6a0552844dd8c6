// Package datadir finds where a server keeps its local state (mailbox,
// workbook, embedded databases, webhook store): $<SERVER>_DATA_DIR, else
// $MCP_DATA_DIR/<server>, else $XDG_DATA_HOME/mcp-fleet/<server>, else
// ~/.local/share/mcp-fleet/<server>. The directory is created 0700 on first
// use because it holds mail, client data and tokens.
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Resolve returns the data directory for server without creating it.
// getenv is os.Getenv in production; tests pass their own.
func Resolve(server string, getenv func(string) string) (string, error) {
	if server == "" {
		return "", errors.New("datadir: empty server name")
	}
	key := strings.ToUpper(strings.ReplaceAll(server, "-", "_")) + "_DATA_DIR"
	if d := getenv(key); d != "" {
		return filepath.Abs(d)
	}
	if d := getenv("MCP_DATA_DIR"); d != "" {
		return filepath.Abs(filepath.Join(d, server))
	}
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Abs(filepath.Join(d, "mcp-fleet", server))
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("datadir: no %s, MCP_DATA_DIR, XDG_DATA_HOME or home directory: %w", key, err)
		}
		home = h
	}
	return filepath.Join(home, ".local", "share", "mcp-fleet", server), nil
}

// Ensure resolves and creates the directory (0700).
func Ensure(server string, getenv func(string) string) (string, error) {
	d, err := Resolve(server, getenv)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", fmt.Errorf("datadir: create %s: %w", d, err)
	}
	return d, nil
}
