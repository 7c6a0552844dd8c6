package tools

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/bytesize"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/filewatch"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/fsroot"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

// FileTemplate is the URI template of the file resources.
const FileTemplate = "file:///{path}"

// fileFamily are the tools whose agents may list, read and subscribe to
// the file resources.
var fileFamily = []string{"file_read", "file_list", "file_info", "file_search", "file_write"}

// maxListed bounds resources/list: the most recently modified files at the
// top of each root.
const maxListed = 100

// FileURI is the resource URI of the file at the absolute path p.
func FileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

// FileResources returns the file resource template: every regular file
// under fsys's roots, read with the file tools' confinement and read cap,
// and, when w is set, watched for changes while a client is subscribed.
func FileResources(fsys *fsroot.FS, w *filewatch.Watcher) kit.ResourceTemplate {
	lim := fsys.Limits()
	t := kit.ResourceTemplate{
		URITemplate: FileTemplate,
		Name:        "file",
		Title:       "Files under the roots",
		Description: "A regular file inside the server's roots, named by its absolute path (file:///abs/path). " +
			"Text comes back as text and anything else as a base64 blob, with its MIME type sniffed from the content " +
			"(and the file name where the content alone is ambiguous). Files over " + bytesize.Format(lim.MaxReadBytes) +
			" are refused; read a window of them with file_read. Subscribe to hear when the file changes, whoever changes it.",
		Tools: fileFamily,
		Read: func(ctx context.Context, r *kit.ReadRequest) ([]kit.Contents, error) {
			fd, err := fsys.ReadFile("/" + r.Vars["path"])
			if err != nil {
				return nil, err
			}
			mime, text := sniff(fd.Path, fd.Data)
			if text {
				return []kit.Contents{{URI: r.URI, MIMEType: mime, Text: string(fd.Data)}}, nil
			}
			return []kit.Contents{{URI: r.URI, MIMEType: mime, Blob: fd.Data}}, nil
		},
		List: func(ctx context.Context, agent string) ([]kit.ResourceInfo, error) {
			return listFiles(fsys)
		},
	}
	if w != nil {
		t.Watch = func(uri string, vars map[string]string) (func(), error) {
			return w.Watch(uri, "/"+vars["path"])
		}
	}
	return t
}

// listFiles names the most recently modified visible regular files at the
// top of each root.
func listFiles(fsys *fsroot.FS) ([]kit.ResourceInfo, error) {
	type found struct {
		info kit.ResourceInfo
		mod  int64
	}
	var all []found
	for _, root := range fsys.Roots() {
		res, err := fsys.List(root, fsroot.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, e := range res.Entries {
			if e.Type != fsroot.TypeFile {
				continue
			}
			abs := filepath.Join(res.Root, filepath.FromSlash(e.Path))
			all = append(all, found{kit.ResourceInfo{URI: FileURI(abs), Name: e.Name, Size: e.Size}, e.ModTime.UnixNano()})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].mod != all[j].mod {
			return all[i].mod > all[j].mod
		}
		return all[i].info.URI < all[j].info.URI
	})
	out := make([]kit.ResourceInfo, 0, min(len(all), maxListed))
	for _, f := range all[:min(len(all), maxListed)] {
		out = append(out, f.info)
	}
	return out, nil
}

// sniff returns a file's MIME type and whether it is text (valid UTF-8 of
// a textual type). The content decides first (net/http's sniffing
// algorithm); the file name's extension decides only where the content is
// ambiguous — plain text, generic XML, or bytes the sniffer cannot place.
func sniff(name string, data []byte) (mime string, text bool) {
	head := data[:min(len(data), 512)]
	sniffed, _, _ := strings.Cut(http.DetectContentType(head), ";")
	valid := utf8.Valid(data) && bytes.IndexByte(data, 0) < 0
	byName := extTypes[strings.ToLower(path.Ext(name))]
	switch sniffed {
	case "text/plain", "text/xml":
		if !valid {
			if sniffed == "text/plain" {
				return "application/octet-stream", false
			}
			return sniffed, false
		}
		if byName != "" && textual(byName) {
			return byName, true
		}
		return sniffed, true
	case "application/octet-stream":
		if byName != "" && (!textual(byName) || valid) {
			return byName, valid && textual(byName)
		}
		if valid {
			// UTF-8 the sniffer refused for its control characters
			// (terminal escapes, form feeds): still text.
			return "text/plain", true
		}
		return sniffed, false
	}
	return sniffed, valid && textual(sniffed)
}

// textual reports whether a MIME type is text a client can show as such.
func textual(mime string) bool {
	if strings.HasPrefix(mime, "text/") || strings.HasSuffix(mime, "+json") || strings.HasSuffix(mime, "+xml") {
		return true
	}
	switch mime {
	case "application/json", "application/jsonl", "application/xml", "application/javascript", "application/yaml", "application/toml",
		"application/sql", "application/x-sh", "application/graphql":
		return true
	}
	return false
}

// extTypes are the types given by file name where the content is
// ambiguous. The table is the server's own, so a file's type does not
// depend on the host's mime.types.
var extTypes = map[string]string{
	".txt": "text/plain", ".log": "text/plain", ".md": "text/markdown", ".markdown": "text/markdown",
	".go": "text/x-go", ".mod": "text/plain", ".sum": "text/plain", ".py": "text/x-python", ".rs": "text/x-rust",
	".c": "text/x-c", ".h": "text/x-c", ".cc": "text/x-c++", ".cpp": "text/x-c++", ".hpp": "text/x-c++",
	".java": "text/x-java", ".kt": "text/x-kotlin", ".rb": "text/x-ruby", ".php": "text/x-php",
	".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript", ".ts": "text/x-typescript",
	".tsx": "text/x-typescript", ".jsx": "text/javascript", ".css": "text/css", ".scss": "text/x-scss",
	".html": "text/html", ".htm": "text/html", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
	".json": "application/json", ".jsonl": "application/jsonl", ".yaml": "application/yaml", ".yml": "application/yaml",
	".toml": "application/toml", ".xml": "application/xml", ".svg": "image/svg+xml", ".sql": "application/sql",
	".sh": "application/x-sh", ".bash": "application/x-sh", ".graphql": "application/graphql", ".proto": "text/plain",
	".ini": "text/plain", ".cfg": "text/plain", ".conf": "text/plain", ".env": "text/plain",
	".wasm": "application/wasm", ".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf",
	".sqlite": "application/vnd.sqlite3", ".db": "application/vnd.sqlite3", ".parquet": "application/vnd.apache.parquet",
}
