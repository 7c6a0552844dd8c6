// Command floor is the stdio benchmarks' floor: the least a server can do
// to give supabase-mcp's answers, built from the standard library alone. It
// answers initialize, and each tools/call with the result recorded for the
// same params in the file -answers names (a JSON object from params text to
// result), already encoded. What it costs is the pipes, reading a request and
// writing the answer; whatever supabase-mcp costs above it is the price of
// doing the job.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
)

type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

const initialized = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"1"}}`

func main() {
	file := flag.String("answers", "", "JSON object: tools/call params text to the result to answer")
	flag.Parse()
	raw, err := os.ReadFile(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var answers map[string]json.RawMessage
	if err := json.Unmarshal(raw, &answers); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
			continue
		}
		result := json.RawMessage(`{}`)
		switch m.Method {
		case "initialize":
			result = json.RawMessage(initialized)
		case "tools/call":
			if r, ok := answers[string(m.Params)]; ok {
				result = r
			}
		}
		_, _ = out.WriteString(`{"jsonrpc":"2.0","id":`)
		_, _ = out.Write(m.ID)
		_, _ = out.WriteString(`,"result":`)
		_, _ = out.Write(result)
		_, _ = out.WriteString("}\n")
		_ = out.Flush()
	}
}
