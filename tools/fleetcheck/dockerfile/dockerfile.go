// Package dockerfile reads what a Dockerfile stage copies from the build
// context, and which files the context holds after .dockerignore, so a test
// can lay out on the host exactly the files a stage would see and run its
// build there. That checks the source-building stage of the fleet's
// Dockerfile on a machine that cannot pull its base image.
package dockerfile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Copy is a COPY (or ADD) instruction that reads the build context.
type Copy struct {
	Sources []string
	Dest    string
}

// Stage is one FROM … AS name section.
type Stage struct {
	Name       string
	From       string
	Workdir    string // the last WORKDIR
	Copies     []Copy // from the context only (no --from)
	Runs       []string
	Args       []string // names of the ARGs declared in the stage
	Entrypoint []string // the last ENTRYPOINT; shell form as /bin/sh -c
}

// File is a whole Dockerfile: the ARGs declared before the first FROM (the
// build arguments FROM lines may use) and the stages.
type File struct {
	Args   []string
	Stages []Stage
}

// Parse reads the stages of a Dockerfile. Continuation lines are joined;
// comments are dropped.
func Parse(path string) ([]Stage, error) {
	f, err := ParseFile(path)
	if err != nil {
		return nil, err
	}
	return f.Stages, nil
}

// Declares reports whether a build argument of that name is declared,
// before the first FROM or in a stage: a --build-arg nothing declares is
// ignored by the builder.
func (f *File) Declares(name string) bool {
	if slices.Contains(f.Args, name) {
		return true
	}
	for _, s := range f.Stages {
		if slices.Contains(s.Args, name) {
			return true
		}
	}
	return false
}

// ParseFile reads a Dockerfile's global build arguments and its stages.
func ParseFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSpace(strings.TrimSuffix(line, "\\")) + " ")
			continue
		}
		cur.WriteString(line)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var stages []Stage
	var global []string
	for _, l := range lines {
		fields := strings.Fields(l)
		if len(fields) == 0 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "ARG":
			for _, a := range fields[1:] {
				name, _, _ := strings.Cut(a, "=")
				if len(stages) == 0 {
					global = append(global, name)
				} else {
					stages[len(stages)-1].Args = append(stages[len(stages)-1].Args, name)
				}
			}
		case "ENTRYPOINT":
			if len(stages) == 0 {
				return nil, fmt.Errorf("%s: ENTRYPOINT before FROM", path)
			}
			rest := strings.TrimSpace(l[len(fields[0]):])
			var exec []string
			if strings.HasPrefix(rest, "[") {
				if err := json.Unmarshal([]byte(rest), &exec); err != nil {
					return nil, fmt.Errorf("%s: ENTRYPOINT %s: %w", path, rest, err)
				}
			} else {
				exec = []string{"/bin/sh", "-c", rest}
			}
			stages[len(stages)-1].Entrypoint = exec
		case "FROM":
			s := Stage{From: fields[1]}
			if len(fields) >= 4 && strings.EqualFold(fields[2], "AS") {
				s.Name = fields[3]
			}
			stages = append(stages, s)
		case "WORKDIR", "COPY", "ADD", "RUN":
			if len(stages) == 0 {
				return nil, fmt.Errorf("%s: %s before FROM", path, fields[0])
			}
			s := &stages[len(stages)-1]
			switch strings.ToUpper(fields[0]) {
			case "WORKDIR":
				s.Workdir = fields[1]
			case "RUN":
				s.Runs = append(s.Runs, strings.TrimSpace(l[len(fields[0]):]))
			default:
				args := fields[1:]
				fromStage := false
				for len(args) > 0 && strings.HasPrefix(args[0], "--") {
					fromStage = fromStage || strings.HasPrefix(args[0], "--from=")
					args = args[1:]
				}
				if len(args) < 2 {
					return nil, fmt.Errorf("%s: %q: want sources and a destination", path, l)
				}
				if !fromStage {
					s.Copies = append(s.Copies, Copy{Sources: args[:len(args)-1], Dest: args[len(args)-1]})
				}
			}
		}
	}
	return &File{Args: global, Stages: stages}, nil
}

// Find returns the stage named name.
func Find(stages []Stage, name string) (Stage, bool) {
	for _, s := range stages {
		if s.Name == name {
			return s, true
		}
	}
	return Stage{}, false
}

// Ignore is a parsed .dockerignore: patterns in order, the last that
// matches a path (or one of its parent directories) decides; "!" re-includes.
type Ignore struct {
	rules []rule
}

type rule struct {
	re     *regexp.Regexp
	negate bool
}

// LoadIgnore reads a .dockerignore file; a missing file ignores nothing.
func LoadIgnore(path string) (*Ignore, error) {
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &Ignore{}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseIgnore(string(raw))
}

// ParseIgnore parses .dockerignore patterns: `*` and `?` within a path
// element, `**` across elements, a leading `!` to re-include.
func ParseIgnore(text string) (*Ignore, error) {
	ig := &Ignore{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := rule{}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, strings.TrimSpace(line[1:])
		}
		pattern := filepath.ToSlash(filepath.Clean(strings.TrimPrefix(line, "/")))
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(pattern); i++ {
			switch c := pattern[i]; {
			case c == '*' && i+1 < len(pattern) && pattern[i+1] == '*':
				re.WriteString(".*")
				i++
				if i+1 < len(pattern) && pattern[i+1] == '/' {
					re.WriteString("/?")
					i++
				}
			case c == '*':
				re.WriteString("[^/]*")
			case c == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		re.WriteString("$")
		compiled, err := regexp.Compile(re.String())
		if err != nil {
			return nil, fmt.Errorf(".dockerignore %q: %w", line, err)
		}
		r.re = compiled
		ig.rules = append(ig.rules, r)
	}
	return ig, nil
}

// Excluded tells whether the context leaves out rel (slash-separated,
// relative to the context root).
func (ig *Ignore) Excluded(rel string) bool {
	rel = filepath.ToSlash(filepath.Clean(rel))
	excluded := false
	for _, r := range ig.rules {
		if r.matches(rel) {
			excluded = !r.negate
		}
	}
	return excluded
}

func (r rule) matches(rel string) bool {
	for p := rel; ; {
		if r.re.MatchString(p) {
			return true
		}
		i := strings.LastIndex(p, "/")
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}

// Lay copies into dir the files a stage's COPY instructions take from the
// context at root, as the builder would see them after .dockerignore, each
// under the stage's working directory, and returns that directory's path
// inside dir.
func Lay(s Stage, root string, ig *Ignore, dir string) (string, error) {
	work := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(s.Workdir, "/")))
	for _, c := range s.Copies {
		dest := c.Dest
		if !strings.HasPrefix(dest, "/") {
			dest = filepath.Join(work, dest)
		} else {
			dest = filepath.Join(dir, dest)
		}
		for _, src := range c.Sources {
			srcPath := filepath.Join(root, filepath.FromSlash(src))
			info, err := os.Stat(srcPath)
			if err != nil {
				return "", fmt.Errorf("COPY %s: %w", src, err)
			}
			if !info.IsDir() {
				if ig.Excluded(src) {
					return "", fmt.Errorf("COPY %s: .dockerignore leaves it out of the context", src)
				}
				target := dest
				if strings.HasSuffix(c.Dest, "/") || len(c.Sources) > 1 {
					target = filepath.Join(dest, filepath.Base(src))
				}
				if err := copyFile(srcPath, target); err != nil {
					return "", err
				}
				continue
			}
			// A directory: its contents go into dest.
			err = filepath.WalkDir(srcPath, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(root, p)
				if ig.Excluded(rel) {
					return nil
				}
				inSrc, _ := filepath.Rel(srcPath, p)
				return copyFile(p, filepath.Join(dest, inSrc))
			})
			if err != nil {
				return "", err
			}
		}
	}
	return work, nil
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	info, err := os.Stat(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, data, info.Mode().Perm())
}
