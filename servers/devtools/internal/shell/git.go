package shell

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// git is allowed for reading only: a fixed set of subcommands, each with
// its own flag allowlist, and a hardened invocation so that a repository's
// own configuration (which an agent can write with file_write) cannot make
// git run a program. The run is
//
//	git <hardening -c options> --no-pager <subcommand> <injected flags> <args>
//
// with GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null and friends in the
// environment (see gitEnv), and after two checks made with the same
// hardening:
//
//   - the repository must lie inside the roots: GIT_CEILING_DIRECTORIES
//     stops discovery at the root, and `git rev-parse` must report a work
//     tree, git directory and common directory inside the roots (a .git
//     file or core.worktree could otherwise point elsewhere), as must every
//     objects/info/alternates entry;
//   - the repository's configuration is listed and every per-driver key
//     that names a program (filter.<x>.clean/smudge/process,
//     diff.<x>.textconv/command) is overridden with an empty value, which
//     git treats as "no program".

// gitHardening are -c options given before every subcommand. Each turns off
// a configuration key that makes a read-only command run a program or
// reach the network.
var gitHardening = []string{
	"core.fsmonitor=false",     // fsmonitor hook, run by status/diff
	"core.hooksPath=/dev/null", // hooks (post-index-change and the like)
	"core.pager=cat",
	"core.editor=false",
	"core.sshCommand=false",
	"core.askPass=false",
	"core.alternateRefsCommand=",
	"credential.helper=",
	"diff.external=", // --no-ext-diff is injected as well
	"gpg.program=false",
	"gpg.ssh.program=false",
	"gpg.x509.program=false",
	"gpg.ssh.defaultKeyCommand=false",
	"log.showSignature=false",
	"status.submoduleSummary=false",
	"diff.submodule=short",
	"submodule.recurse=false",
	"protocol.allow=never",
	"core.untrackedCache=false",
}

// gitDriverKeys are the per-driver configuration keys that name programs.
var gitDriverKeys = map[string][]string{
	"filter": {"clean", "smudge", "process"},
	"diff":   {"textconv", "command"},
}

func gitEnv(c *checker) []string {
	ceiling := filepath.Dir(c.roots.outermostReal(c.cwd))
	return []string{
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat",
		"PAGER=cat",
		"GIT_OPTIONAL_LOCKS=0", // status must not write the index
		"GIT_NO_LAZY_FETCH=1",  // partial clones must not fetch
		"GIT_ALLOW_PROTOCOL=none",
		"GIT_CEILING_DIRECTORIES=" + ceiling,
	}
}

type gitSub struct {
	flags *flagSet
	// inject goes right after the subcommand.
	inject []string
	// operands: "paths" (every operand is checked as a path; revisions
	// never leave the roots lexically), "pattern" (git grep: the first
	// operand is the pattern unless -e/-f), "list" (branch/tag: operands
	// only with --list), "none".
	operands string
}

const (
	whyGitConfig = "it sets git configuration, which can make git run programs"
	whyGitRepo   = "it points git at another repository or directory, outside the checks"
	whyGitExt    = "it runs the configured external diff program"
	whyGitConv   = "it runs configured conversion (textconv) programs"
	whyGitSign   = "it runs gpg to verify signatures"
	whyGitSub    = "it recurses into submodules, whose configuration is not checked"
	whyGitBranch = "it creates, renames or deletes branches"
	whyGitTag    = "it creates, deletes or verifies tags"
	whyGitPager  = "it opens files in a pager program"
)

var diffFlags = flags(
	"-p", "-u", "--patch", "-s", "--no-patch", "-U?", "--unified=", "--raw", "--patch-with-raw", "--patch-with-stat",
	"--stat?", "--stat-width=", "--stat-name-width=", "--stat-count=", "--compact-summary", "--numstat", "--shortstat",
	"--dirstat?", "--summary", "--name-only", "--name-status", "-z", "--full-index", "--binary", "--abbrev?", "--no-abbrev",
	"-B?", "--break-rewrites?", "-M?", "--find-renames?", "-C?", "--find-copies?", "--find-copies-harder", "--no-renames",
	"-l?", "--diff-filter=", "-D", "--irreversible-delete", "-S=", "-G=", "--pickaxe-all", "--pickaxe-regex",
	"-R", "--relative?", "--no-relative", "-a", "--text", "--ignore-cr-at-eol", "--ignore-space-at-eol",
	"-b", "--ignore-space-change", "-w", "--ignore-all-space", "--ignore-blank-lines", "-I=", "--ignore-matching-lines=",
	"--inter-hunk-context=", "-W", "--function-context", "--exit-code", "--quiet", "--no-ext-diff", "--no-textconv",
	"--src-prefix=", "--dst-prefix=", "--no-prefix", "--default-prefix", "--line-prefix=", "--ita-invisible-in-index",
	"--minimal", "--patience", "--histogram", "--anchored=", "--diff-algorithm=", "--indent-heuristic", "--no-indent-heuristic",
	"--color?", "--no-color", "--color-moved?", "--no-color-moved", "--color-moved-ws=", "--word-diff?", "--word-diff-regex=",
	"--color-words?", "--ws-error-highlight=", "--check", "--no-color-moved-ws",
	"--cached", "--staged", "--merge-base",
).deny("it writes the output to a file", "--output").
	deny(whyGitExt, "--ext-diff").
	deny(whyGitConv, "--textconv").
	deny(whyGitSub, "--submodule", "--ignore-submodules").
	deny("it reads an order file", "-O").
	deny("it compares files outside the repository", "--no-index")

var revFlags = flags(
	"-n=", "--max-count=", "--skip=", "--since=", "--after=", "--until=", "--before=", "--since-as-filter=",
	"--author=", "--committer=", "--grep=", "--all-match", "--invert-grep", "-i", "--regexp-ignore-case",
	"--basic-regexp", "-E", "--extended-regexp", "-F", "--fixed-strings", "-P", "--perl-regexp",
	"--merges", "--no-merges", "--min-parents=", "--max-parents=", "--no-min-parents", "--no-max-parents",
	"--first-parent", "--not", "--all", "--branches?", "--tags?", "--remotes?", "--glob=", "--exclude=",
	"--reflog", "--alternate-refs", "--single-worktree", "--ignore-missing", "--bisect",
	"--full-history", "--dense", "--sparse", "--simplify-merges", "--ancestry-path?", "--simplify-by-decoration",
	"--remove-empty", "--topo-order", "--date-order", "--author-date-order", "--reverse", "--no-walk?", "--do-walk",
	"--left-right", "--left-only", "--right-only", "--cherry-pick", "--cherry-mark", "--cherry", "--boundary",
	"--pretty?", "--format=", "--oneline", "--abbrev-commit", "--no-abbrev-commit", "--encoding=", "--expand-tabs?", "--no-expand-tabs",
	"--notes?", "--no-notes", "--show-notes?", "--relative-date", "--date=", "--parents", "--children", "--graph",
	"--show-linear-break?", "--decorate?", "--no-decorate", "--decorate-refs=", "--decorate-refs-exclude=", "--clear-decorations",
	"--source", "--use-mailmap", "--mailmap", "--no-mailmap", "--log-size", "--follow",
	"-m", "-c", "--cc", "--dd", "--combined-all-paths", "--diff-merges=", "--no-diff-merges", "-t", "-r", "--root",
).withDigits().deny(whyGitSign, "--show-signature").
	deny("it reads revisions from standard input", "--stdin")

// merge returns a new set holding every flag of sets (later sets win).
func merge(sets ...*flagSet) *flagSet {
	out := flags()
	for _, s := range sets {
		maps.Copy(out.short, s.short)
		maps.Copy(out.long, s.long)
		maps.Copy(out.deniedShort, s.deniedShort)
		maps.Copy(out.deniedLong, s.deniedLong)
		out.digits = out.digits || s.digits
	}
	return out
}

var gitSubs = map[string]gitSub{
	"status": {flags: flags(
		"-s", "--short", "-b", "--branch", "--show-stash", "--porcelain?", "--long", "-v", "--verbose",
		"-u?", "--untracked-files?", "--ignored?", "-z", "--null", "--column?", "--no-column",
		"--ahead-behind", "--no-ahead-behind", "--renames", "--no-renames", "--find-renames?",
	).deny(whyGitSub, "--ignore-submodules"), inject: []string{"--ignore-submodules=all"}, operands: "paths"},

	"diff": {flags: diffFlags, inject: []string{"--no-ext-diff", "--no-textconv", "--ignore-submodules=all"}, operands: "paths"},
	"log":  {flags: merge(diffFlags, revFlags), inject: []string{"--no-ext-diff", "--no-textconv"}, operands: "paths"},
	"show": {flags: merge(diffFlags, revFlags), inject: []string{"--no-ext-diff", "--no-textconv"}, operands: "paths"},
	"shortlog": {flags: merge(revFlags, flags("-n", "--numbered", "-s", "--summary", "-e", "--email",
		"--group=", "-c", "--committer", "-w?")), operands: "paths"},

	"branch": {flags: flags(
		"-a", "--all", "-r", "--remotes", "-v", "--verbose", "-l", "--list", "--show-current",
		"--contains~", "--no-contains~", "--merged~", "--no-merged~", "--points-at=", "--sort=", "--format=",
		"--color?", "--no-color", "--abbrev?", "--no-abbrev", "-i", "--ignore-case", "--column?", "--no-column", "-q", "--quiet",
	).deny(whyGitBranch, "-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f", "--force",
		"-u", "--set-upstream-to", "--unset-upstream", "--edit-description", "-t", "--track", "--no-track", "--create-reflog", "--recurse-submodules"),
		operands: "list"},

	"tag": {flags: flags(
		"-l", "--list", "-n?", "--contains~", "--no-contains~", "--merged~", "--no-merged~", "--points-at~",
		"--sort=", "--format=", "--color?", "--no-color", "-i", "--ignore-case", "--column?", "--no-column",
	).deny(whyGitTag, "-a", "--annotate", "-s", "--sign", "-u", "--local-user", "-f", "--force", "-d", "--delete",
		"-v", "--verify", "-m", "--message", "-F", "--file", "-e", "--edit", "--cleanup", "--create-reflog"),
		operands: "list"},

	"rev-parse": {flags: flags(
		"--verify", "-q", "--quiet", "--short?", "--abbrev-ref?", "--symbolic", "--symbolic-full-name",
		"--show-toplevel", "--show-prefix", "--show-cdup", "--git-dir", "--absolute-git-dir", "--git-common-dir",
		"--is-inside-work-tree", "--is-inside-git-dir", "--is-bare-repository", "--is-shallow-repository",
		"--show-superproject-working-tree", "--show-object-format?", "--all", "--branches?", "--tags?", "--remotes?",
		"--glob=", "--exclude=", "--revs-only", "--no-revs", "--flags", "--no-flags", "--default=", "--sq", "--not",
		"--since=", "--after=", "--until=", "--before=", "--path-format=", "--local-env-vars", "--sq-quote",
	), operands: "paths"},

	"ls-files": {flags: flags(
		"-c", "--cached", "-d", "--deleted", "-m", "--modified", "-o", "--others", "-i", "--ignored", "-s", "--stage",
		"-u", "--unmerged", "-k", "--killed", "--directory", "--no-empty-directory", "--eol", "-z", "-t", "-v", "-f",
		"--full-name", "--abbrev?", "--debug", "--deduplicate", "--error-unmatch", "--exclude-standard",
		"-x=", "--exclude=", "--format=", "--sparse",
	).deny(whyGitSub, "--recurse-submodules").
		deny(whyFileList, "-X", "--exclude-from"), operands: "paths"},

	"blame": {flags: flags(
		"-b", "--root", "--show-stats", "-l", "-t", "-s", "-e", "--show-email", "-w", "-M?", "-C?", "-p", "--porcelain",
		"--line-porcelain", "--incremental", "-f", "--show-name", "-n", "--show-number", "-c", "--score-debug",
		"--abbrev?", "--date=", "--since=", "-L=", "--first-parent", "--reverse=", "--minimal", "--encoding=",
		"--ignore-rev=", "--color-lines", "--color-by-age", "--progress", "--no-progress", "--no-textconv",
	).deny(whyGitConv, "--textconv").
		deny("it reads another file", "--contents", "-S", "--ignore-revs-file"),
		inject: []string{"--no-textconv"}, operands: "paths"},

	"grep": {flags: flags(
		"-i", "--ignore-case", "-I", "-w", "--word-regexp", "-v", "--invert-match", "-h", "-H", "--full-name",
		"-E", "--extended-regexp", "-G", "--basic-regexp", "-F", "--fixed-strings", "-P", "--perl-regexp",
		"-n", "--line-number", "--column", "-l", "--files-with-matches", "--name-only", "-L", "--files-without-match",
		"-z", "--null", "-o", "--only-matching", "-c", "--count", "--color?", "--no-color", "--break", "--heading",
		"-p", "--show-function", "-W", "--function-context", "-A=", "--after-context=", "-B=", "--before-context=",
		"-C=", "--context=", "--threads=", "-f=@", "-e=", "--and", "--or", "--not", "--all-match", "-q", "--quiet",
		"--max-depth=", "-r", "--recursive", "--no-recursive", "--cached", "--untracked", "--no-exclude-standard",
		"--exclude-standard", "-a", "--text", "--no-textconv", "-m=", "--max-count=",
	).withDigits().deny(whyGitPager, "-O", "--open-files-in-pager").
		deny(whyGitConv, "--textconv").
		deny(whyGitSub, "--recurse-submodules").
		deny("it searches files outside the repository", "--no-index"),
		inject: []string{"--no-textconv"}, operands: "pattern"},

	"describe": {flags: flags(
		"--all", "--tags", "--contains", "--abbrev?", "--candidates=", "--exact-match", "--debug", "--long",
		"--match=", "--exclude=", "--always", "--first-parent", "--dirty?", "--broken?",
	), operands: "paths"},

	"version": {flags: flags("--build-options"), operands: "none"},
}

// gitGlobalDenied explains the refused options that may precede the
// subcommand; all others are refused as unknown.
var gitGlobalDenied = map[string]string{
	"-c": whyGitConfig, "--config-env": whyGitConfig,
	"-C": whyGitRepo, "--git-dir": whyGitRepo, "--work-tree": whyGitRepo, "--namespace": whyGitRepo,
	"--exec-path": "it selects the directory git runs its helper programs from",
	"-p":          "it pipes output through a pager program", "--paginate": "it pipes output through a pager program",
}

func gitSubNames() string { return strings.Join(sortedKeys(gitSubs), ", ") }

func checkGit(c *checker, args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, invalid("command", "git: a subcommand is required (allowed: %s)", gitSubNames())
	}
	first := args[0]
	if first == "--version" && len(args) == 1 {
		return []string{"--version"}, nil
	}
	if strings.HasPrefix(first, "-") {
		name, _, _ := strings.Cut(first, "=")
		if len(first) > 2 && first[1] != '-' {
			name = first[:2] // -c<key>=<value>, -C<dir>
		}
		if reason, ok := gitGlobalDenied[name]; ok {
			return nil, invalid("command", "git: option %s is not allowed: %s", name, reason)
		}
		return nil, invalid("command", "git: option %s before the subcommand is not allowed (give the subcommand first; allowed: %s)", name, gitSubNames())
	}
	sub, ok := gitSubs[first]
	if !ok {
		return nil, invalid("command", "git: subcommand %q is not allowed: only these read-only subcommands are (%s)", first, gitSubNames())
	}
	prog := "git " + first
	p, err := sub.flags.parse(prog, args[1:])
	if err != nil {
		return nil, err
	}
	c2 := *c
	c2.prog = prog
	if err := c2.valuePaths(p); err != nil {
		return nil, err
	}
	ops := p.operands
	switch sub.operands {
	case "none":
		if len(ops) > 0 {
			return nil, invalid("command", "%s takes no arguments", prog)
		}
	case "list":
		if len(ops) > 0 && !p.has("-l", "--list") {
			return nil, invalid("command", "%s: arguments are only allowed with --list (without it, %q would create a %s)",
				prog, ops[0], strings.TrimPrefix(first, "git "))
		}
		ops = nil // patterns, not paths
	case "pattern":
		if !p.has("-e", "-f") && len(ops) > 0 {
			ops = ops[1:]
		}
	}
	if err := c2.operandPaths(ops); err != nil {
		return nil, err
	}
	if first == "version" {
		return args, nil
	}
	out := make([]string, 0, len(args)+2*len(gitHardening)+8)
	for _, h := range gitHardening {
		out = append(out, "-c", h)
	}
	out = append(out, "--no-pager", first)
	out = append(out, sub.inject...)
	return append(out, args[1:]...), nil
}

// gitPrepare runs before a git subcommand that reads a repository: it
// confines the repository to the roots and returns -c options neutralising
// the repository's program-running driver keys. It uses the same program,
// environment and hardening as the real run.
func gitPrepare(ctx context.Context, c *checker, bin string, env []string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	base := make([]string, 0, 2*len(gitHardening)+1)
	for _, h := range gitHardening {
		base = append(base, "-c", h)
	}
	base = append(base, "--no-pager")
	run := func(args ...string) ([]byte, string, error) {
		cmd := exec.CommandContext(ctx, bin, append(append([]string(nil), base...), args...)...)
		cmd.Dir, cmd.Env = c.cwd, env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		msg, _, _ := strings.Cut(strings.TrimSpace(errb.String()), "\n")
		return out.Bytes(), msg, err
	}
	out, msg, err := run("rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir")
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if msg == "" {
			msg = "rev-parse failed"
		}
		// git's own message may name directories outside the roots (the
		// repository it found above them): it goes to the log, not the agent.
		e := invalid("cwd", "git: the working directory is not inside a git work tree whose top level lies inside the allowed roots (%s)",
			c.roots.list())
		e.cause = fmt.Errorf("git rev-parse: %s: %w", msg, err)
		return nil, e
	}
	dirs := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(dirs) != 3 {
		return nil, failed("git gave an unexpected answer when asked where the repository is", nil)
	}
	for i, what := range []string{"work tree", "git directory", "common git directory"} {
		if err := c.roots.checkPath(c.cwd, dirs[i], "git: the repository's "+what); err != nil {
			return nil, err
		}
	}
	if err := gitAlternates(c, filepath.Join(dirs[2], "objects"), 0); err != nil {
		return nil, err
	}
	out, _, err = run("config", "--null", "--list", "--includes")
	if err != nil {
		// No configuration at all is fine; anything else is not.
		if len(out) > 0 {
			return nil, failed("the git repository's configuration cannot be read", err)
		}
	}
	return gitOverrides(out)
}

// gitOverrides turns `git config --null --list` output into -c options
// emptying every program-running driver key found.
func gitOverrides(list []byte) ([]string, error) {
	var extra []string
	seen := map[string]bool{}
	for _, entry := range bytes.Split(list, []byte{0}) {
		key, _, _ := strings.Cut(string(entry), "\n")
		section, rest, ok := strings.Cut(key, ".")
		if !ok {
			continue
		}
		subKeys, ok := gitDriverKeys[strings.ToLower(section)]
		if !ok {
			continue
		}
		dot := strings.LastIndexByte(rest, '.')
		if dot < 0 {
			continue
		}
		name, leaf := rest[:dot], strings.ToLower(rest[dot+1:])
		for _, k := range subKeys {
			if leaf != k {
				continue
			}
			if strings.ContainsAny(name, "=\n") {
				return nil, invalid("command", "git: the repository configuration has a %s driver named %q, which cannot be safely overridden", section, name)
			}
			full := strings.ToLower(section) + "." + name + "." + k
			if !seen[full] {
				seen[full] = true
				extra = append(extra, "-c", full+"=")
			}
		}
	}
	return extra, nil
}

// gitAlternates checks objects/info/alternates (recursively, as git follows
// them) so that objects are only ever read from inside the roots.
func gitAlternates(c *checker, objects string, depth int) error {
	if depth > 5 {
		return invalid("command", "git: object alternates nest too deeply")
	}
	f, err := os.Open(filepath.Join(objects, "info", "alternates"))
	if err != nil {
		return nil // none
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objects, line)
		}
		if err := c.roots.checkPath(c.cwd, line, "git: an object alternate of the repository"); err != nil {
			return err
		}
		if err := gitAlternates(c, line, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// gitNeedsRepo reports whether argv (as checkGit returned it) reads a
// repository, so gitPrepare must run.
func gitNeedsRepo(args []string) bool {
	return !(len(args) == 1 && args[0] == "--version") && !(len(args) > 0 && args[0] == "version")
}
