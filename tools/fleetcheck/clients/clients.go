// Package clients reads the MCP client configuration files the fleet ships
// (configs/clients/ and the servers' own examples) in each client's format —
// Claude Desktop, Claude Code (.mcp.json), Cursor and VS Code — checks every
// entry against what the servers really accept (Analyze), and resolves an
// entry to the concrete process or HTTP request the client would make
// (Resolve), so a test can start it.
//
// Which client a file is for follows from its name: *.mcp.json is Claude
// Code, claude_desktop*.json Claude Desktop, cursor*.json Cursor and
// vscode*.json VS Code. Each format is decoded strictly: a key the client
// does not know is an error, as a misspelt "arg" or "header" would be
// silently ignored by the client.
package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Client is an MCP client whose configuration format this package reads.
type Client string

// The clients.
const (
	ClaudeDesktop Client = "Claude Desktop"
	ClaudeCode    Client = "Claude Code"
	Cursor        Client = "Cursor"
	VSCode        Client = "VS Code"
)

// ClientForPath tells which client a configuration file is for, from its
// name.
func ClientForPath(path string) (Client, error) {
	base := filepath.Base(path)
	switch {
	case !strings.HasSuffix(base, ".json"):
		return "", fmt.Errorf("%s: not a .json file", path)
	case strings.HasSuffix(base, ".mcp.json"):
		return ClaudeCode, nil
	case strings.HasPrefix(base, "claude_desktop"):
		return ClaudeDesktop, nil
	case strings.HasPrefix(base, "cursor"):
		return Cursor, nil
	case strings.HasPrefix(base, "vscode"):
		return VSCode, nil
	}
	return "", fmt.Errorf("%s: cannot tell the client from the name (want *.mcp.json, claude_desktop*.json, cursor*.json or vscode*.json)", path)
}

// Entry is one server in a client's configuration.
type Entry struct {
	Name    string
	Type    string // as written; empty where the format has none or it was left out
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
}

// Transport is "stdio" for a command the client starts, "http" for a URL.
func (e Entry) Transport() string {
	if e.URL != "" {
		return "http"
	}
	return "stdio"
}

// Input is a VS Code input variable (`${input:id}`), asked of the user.
type Input struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Password    bool   `json:"password"`
}

// File is one configuration file.
type File struct {
	Path    string
	Client  Client
	Entries []Entry // sorted by name
	Inputs  []Input
}

type desktopEntry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

type codeEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

type cursorEntry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

type vscodeEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	EnvFile string            `json:"envFile"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// Load reads and decodes one file.
func Load(path string) (*File, error) {
	client, err := ClientForPath(path)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(path, client, raw)
}

// Decode decodes raw as client's format; path names the file in errors.
func Decode(path string, client Client, raw []byte) (*File, error) {
	f := &File{Path: path, Client: client}
	var err error
	switch client {
	case ClaudeDesktop:
		var doc struct {
			MCPServers map[string]desktopEntry `json:"mcpServers"`
		}
		if err = strict(raw, &doc); err == nil {
			for name, e := range doc.MCPServers {
				f.Entries = append(f.Entries, Entry{Name: name, Command: e.Command, Args: e.Args, Env: e.Env})
			}
		}
	case ClaudeCode:
		var doc struct {
			MCPServers map[string]codeEntry `json:"mcpServers"`
		}
		if err = strict(raw, &doc); err == nil {
			for name, e := range doc.MCPServers {
				f.Entries = append(f.Entries, Entry{Name: name, Type: e.Type, Command: e.Command, Args: e.Args,
					Env: e.Env, URL: e.URL, Headers: e.Headers})
			}
		}
	case Cursor:
		var doc struct {
			MCPServers map[string]cursorEntry `json:"mcpServers"`
		}
		if err = strict(raw, &doc); err == nil {
			for name, e := range doc.MCPServers {
				f.Entries = append(f.Entries, Entry{Name: name, Command: e.Command, Args: e.Args, Env: e.Env,
					URL: e.URL, Headers: e.Headers})
			}
		}
	case VSCode:
		var doc struct {
			Servers map[string]vscodeEntry `json:"servers"`
			Inputs  []Input                `json:"inputs"`
		}
		if err = strict(raw, &doc); err == nil {
			for name, e := range doc.Servers {
				if e.EnvFile != "" {
					return nil, fmt.Errorf("%s: %s: envFile is not used by the fleet's configurations (put variables in env)", path, name)
				}
				f.Entries = append(f.Entries, Entry{Name: name, Type: e.Type, Command: e.Command, Args: e.Args,
					Env: e.Env, URL: e.URL, Headers: e.Headers})
			}
			f.Inputs = doc.Inputs
		}
	default:
		return nil, fmt.Errorf("%s: unknown client %q", path, client)
	}
	if err != nil {
		return nil, fmt.Errorf("%s (%s format): %w", path, client, err)
	}
	if len(f.Entries) == 0 {
		return nil, fmt.Errorf("%s: no servers (%s keeps them under %q)", path, client, serversKey(client))
	}
	sort.Slice(f.Entries, func(i, j int) bool { return f.Entries[i].Name < f.Entries[j].Name })
	for _, e := range f.Entries {
		if err := shape(client, e); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, e.Name, err)
		}
	}
	return f, nil
}

func serversKey(c Client) string {
	if c == VSCode {
		return "servers"
	}
	return "mcpServers"
}

// strict decodes one JSON document, refusing unknown keys and trailing data.
func strict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON document")
	}
	return nil
}

// shape checks that an entry is either a command or a URL, with the type
// its client expects.
func shape(c Client, e Entry) error {
	hasCmd, hasURL := e.Command != "", e.URL != ""
	switch {
	case hasCmd && hasURL:
		return fmt.Errorf("both command and url")
	case !hasCmd && !hasURL:
		return fmt.Errorf("neither command nor url")
	case hasURL && (len(e.Args) > 0 || len(e.Env) > 0):
		return fmt.Errorf("args or env on a url entry (they belong to a command)")
	case hasCmd && len(e.Headers) > 0:
		return fmt.Errorf("headers on a command entry (they belong to a url)")
	}
	want := map[bool]string{true: "stdio", false: "http"}[hasCmd]
	switch c {
	case VSCode:
		if e.Type != want {
			return fmt.Errorf("type %q, want %q (VS Code requires it)", e.Type, want)
		}
	case ClaudeCode:
		if e.Type != want && (e.Type != "" || hasURL) {
			return fmt.Errorf("type %q, want %q", e.Type, want)
		}
	}
	return nil
}
