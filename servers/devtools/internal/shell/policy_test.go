package shell

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// TestDangerousFlagsRefused covers every refused flag family in its plain,
// joined, clustered and abbreviated spellings.
func TestDangerousFlagsRefused(t *testing.T) {
	f := newFixture(t, nil)
	cases := []struct{ cmd, want string }{
		// find: commands, deletion, writing files, following links
		{"find . -exec rm {} +", "find: flag -exec is not allowed: it runs commands"},
		{"find . -execdir rm {} +", "-execdir is not allowed: it runs commands"},
		{"find . -ok rm {} +", "-ok is not allowed: it runs commands"},
		{"find . -okdir rm {} +", "-okdir is not allowed: it runs commands"},
		{"find . -delete", "-delete is not allowed: it deletes files"},
		{"find . -fprint x", "-fprint is not allowed: it writes files"},
		{"find . -fprint0 x", "-fprint0 is not allowed: it writes files"},
		{"find . -fprintf x %p", "-fprintf is not allowed: it writes files"},
		{"find . -fls x", "-fls is not allowed: it writes files"},
		{"find -L .", "-L is not allowed: it follows symbolic links"},
		{"find . -follow", "-follow is not allowed: it follows symbolic links"},
		{"find -files0-from x", "-files0-from is not allowed"},
		{`find . -name x -o -exec id \;`, "-exec is not allowed"},
		{"find -D tree .", "find: flag -D is not allowed"},
		{"find -O3 .", "find: flag -O3 is not allowed"},
		{"find . -frobnicate", "find: -frobnicate is not allowed"},
		{"find . -name", "find: -name needs a value"},
		{"find . -newerBt", "find: -newerBt needs a value"},
		{"find . -name x extra", `unexpected argument "extra"`},
		// git: configuration, other repositories, writing, programs
		{"git -c core.pager=sh log", "git: option -c is not allowed: it sets git configuration"},
		{"git -ccore.pager=sh log", "git: option -c is not allowed: it sets git configuration"},
		{"git -C/etc log", "git: option -C is not allowed"},
		{"git --frob log", "git: option --frob before the subcommand is not allowed (give the subcommand first"},
		{"git --config-env=a=B log", "option --config-env is not allowed"},
		{"git -C /etc log", "option -C is not allowed: it points git at another repository"},
		{"git --git-dir=/x log", "option --git-dir is not allowed"},
		{"git --work-tree=/x status", "option --work-tree is not allowed"},
		{"git --exec-path=/x log", "option --exec-path is not allowed"},
		{"git --namespace=x log", "option --namespace is not allowed"},
		{"git -p log", "option -p is not allowed: it pipes output through a pager"},
		{"git config core.pager x", `git: subcommand "config" is not allowed`},
		{"git hook run pre-commit", `subcommand "hook" is not allowed`},
		{"git fetch ext::sh", `subcommand "fetch" is not allowed`},
		{"git clone ext::sh -c id", `subcommand "clone" is not allowed`},
		{"git ls-remote ext::sh", `subcommand "ls-remote" is not allowed`},
		{"git commit -m x", `subcommand "commit" is not allowed`},
		{"git", "git: a subcommand is required"},
		{"git log --output=x", "git log: flag --output is not allowed: it writes the output to a file"},
		{"git log --output x", "flag --output is not allowed"},
		{"git log --out=x", "--out is an abbreviation of --output, which is not allowed"},
		{"git diff --ext-diff", "flag --ext-diff is not allowed: it runs the configured external diff program"},
		{"git diff --ext", "--ext is an abbreviation of --ext-diff"},
		{"git show --textconv", "--textconv is not allowed: it runs configured conversion"},
		{"git log --show-signature", "--show-signature is not allowed: it runs gpg"},
		{"git log --show-sig", "abbreviation of --show-signature"},
		{"git log -O/etc/order", `flag -O (in "-O/etc/order") is not allowed: it reads an order file`},
		{"git log --stdin", "it reads revisions from standard input"},
		{"git diff --no-index a b", "--no-index is not allowed"},
		{"git diff --submodule=diff", "--submodule is not allowed: it recurses into submodules"},
		{"git status --ignore-submodules=none", "--ignore-submodules is not allowed"},
		{"git grep -O x", "git grep: flag -O is not allowed: it opens files in a pager program"},
		{"git grep -Ovim x", `flag -O (in "-Ovim") is not allowed`},
		{"git grep -nO x", `flag -O (in "-nO") is not allowed`},
		{"git grep --open-files-in-pager=vim x", "--open-files-in-pager is not allowed"},
		{"git grep --open=vim x", "abbreviation of --open-files-in-pager"},
		{"git grep --recurse-submodules x", "--recurse-submodules is not allowed"},
		{"git ls-files --recurse-submodules", "--recurse-submodules is not allowed"},
		{"git ls-files -X list", "flag -X is not allowed"},
		{"git blame --contents x a.txt", "--contents is not allowed"},
		{"git blame --textconv a.txt", "--textconv is not allowed"},
		{"git branch newbranch", `arguments are only allowed with --list (without it, "newbranch" would create a branch)`},
		{"git branch -d main", "git branch: flag -d is not allowed: it creates, renames or deletes branches"},
		{"git branch -D main", "flag -D is not allowed"},
		{"git branch -m a b", "flag -m is not allowed"},
		{"git branch --set-upstream-to=x", "--set-upstream-to is not allowed"},
		{"git branch --delete x", "--delete is not allowed"},
		{"git branch --del x", "abbreviation of --delete"},
		{"git tag v1", `would create a tag`},
		{"git tag -d v1", "git tag: flag -d is not allowed: it creates, deletes or verifies tags"},
		{"git tag -a v1 -m x", "flag -a is not allowed"},
		{"git tag -v v1", "flag -v is not allowed"},
		{"git tag -lv", `flag -v (in "-lv") is not allowed`},
		{"git version --frob", "flag --frob is not allowed"},
		{"git version x", "git version takes no arguments"},
		{"git log --max-count", "flag --max-count needs a value"},
		{"git log -n", "flag -n needs a value"},
		{"git log --oneline=x", "flag --oneline takes no value"},
		{"git log --oneline --frob", "git log: flag --frob is not allowed (not on this program's list"},
		// sort: programs and output files
		{"sort --compress-program=gzip a.txt", "sort: flag --compress-program is not allowed: it runs another program"},
		{"sort --compress-prog=x a.txt", "--compress-prog is an abbreviation of --compress-program, which is not allowed: it runs another program"},
		{"sort --comp=x a.txt", "abbreviation of --compress-program"},
		{"sort -o out a.txt", "sort: flag -o is not allowed: it writes files"},
		{"sort -oout a.txt", "flag -o (in \"-oout\") is not allowed: it writes files"},
		{"sort -uo out a.txt", `flag -o (in "-uo") is not allowed`},
		{"sort -ruo out a.txt", `flag -o (in "-ruo") is not allowed`},
		{"sort --output=out a.txt", "--output is not allowed: it writes files"},
		{"sort --out=x a.txt", "--out is an abbreviation of --output"},
		{"sort --files0-from=list", "--files0-from is not allowed: it reads a list of file names"},
		{"sort -T /tmp a.txt", "flag -T is not allowed: it writes files"},
		{"sort --temporary-directory=/tmp a.txt", "--temporary-directory is not allowed"},
		{"sort --temp=/tmp a.txt", "abbreviation of --temporary-directory"},
		// wc, uniq
		{"wc --files0-from=list", "wc: flag --files0-from is not allowed"},
		{"wc --files0=list", "abbreviation of --files0-from"},
		{"uniq a.txt out.txt", `uniq: a second file argument ("out.txt") is not allowed: uniq would write its output there`},
		// tail: following never ends by itself
		{"tail -f a.txt", "tail: flag -f is not allowed: it waits for the file to grow"},
		{"tail -F a.txt", "flag -F is not allowed"},
		{"tail -qf a.txt", `flag -f (in "-qf") is not allowed`},
		{"tail --follow=name a.txt", "--follow is not allowed"},
		{"tail --fol a.txt", "abbreviation of --follow"},
		{"tail --retry a.txt", "--retry is not allowed"},
		{"tail -1f a.txt", `flag -1 (in "-1f") is not allowed`},
		{"tail --pid=1 a.txt", "--pid is not allowed"},
		// grep: following links out of the roots
		{"grep -R x .", "grep: flag -R is not allowed: it follows symbolic links"},
		{"grep -rR x .", `flag -R (in "-rR") is not allowed`},
		{"grep --dereference-recursive x .", "--dereference-recursive is not allowed"},
		{"grep --deref x .", "abbreviation of --dereference-recursive"},
		{"grep --pre=sh x a.txt", "grep: flag --pre is not allowed"},
		{"grep -e", "grep: flag -e needs a value"},
		// ls
		{"ls -L", "ls: flag -L is not allowed: it follows symbolic links"},
		{"ls -lL", `flag -L (in "-lL") is not allowed`},
		{"ls --dereference", "--dereference is not allowed"},
		{"ls --deref", "abbreviation of --dereference"},
		// unknown flags, abbreviations of allowed ones
		{"cat --show-al a.txt", "abbreviated flag --show-al is not accepted; write the flag in full (--show-all)"},
		{"head --li=1 a.txt", "write the flag in full (--lines)"},
		{"cat -Z a.txt", "cat: flag -Z is not allowed (allowed: -A -E -T -b -e -n -s -t -u -v --help --number --number-nonblank --show-all --show-ends --show-nonprinting --show-tabs --squeeze-blank --version)"},
		{"pwd -x", "pwd: flag -x is not allowed"},
		{"cat $'\\x01'", "ANSI-C quoting"},
	}
	for _, c := range cases {
		_, err := f.sh.check(Request{Command: c.cmd})
		if err == nil {
			t.Errorf("%s: allowed, want refusal containing %q", c.cmd, c.want)
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != mcperr.Validation {
			t.Errorf("%s: error %v is not a VALIDATION_ERROR", c.cmd, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got: %s\nwant: …%s…", c.cmd, err, c.want)
		}
	}
	// A non-printable short flag is shown escaped.
	if _, err := f.sh.check(Request{Argv: []string{"cat", "-\x01"}}); err == nil || !strings.Contains(err.Error(), `flag -\x01`) {
		t.Errorf("control character flag: %v", err)
	}
}

// TestSafeFlagsAllowed checks that the allowlists admit everyday usage,
// including joined and clustered forms, and leave argv untouched (except
// git's hardening).
func TestSafeFlagsAllowed(t *testing.T) {
	f := newFixture(t, nil)
	for _, c := range []string{
		"ls -lah --color=never --sort=time -I '*.o' sub",
		"ls -1 --group-directories-first",
		"pwd -P",
		"echo -n -e 'a\\tb' --anything -exec rm",
		"cat -An a.txt -- -",
		"grep -rniE '--include=*.go' --exclude-dir=.git 'foo|bar' .",
		"grep -e x -e y -f sub/b.txt a.txt",
		"grep -C2 -m 3 --color=never x a.txt",
		"grep -2 x a.txt",
		"grep -- -x a.txt",
		"find . -maxdepth 2 -type f '(' -name '*.txt' -o -iname '*.md' ')' -print",
		"find -H -P . -newer a.txt -size +1k -printf '%p\\n'",
		"find sub in-link -mtime -1 -newermt 2020-01-01 -ls",
		"find",
		"wc -lwc a.txt",
		"sort -t, -k2,2n -u -S 10M --parallel=2 a.txt",
		"sort -rk1 a.txt",
		"uniq -c -f 1 a.txt",
		"head -n5 a.txt", "head -5 a.txt", "head --lines=5 a.txt", "head -c 10 a.txt", "head --bytes 10 a.txt",
		"tail -n +2 a.txt", "tail -3 a.txt",
		"git status -sb --porcelain=v2 -uno",
		"git log --oneline -n 5 --since='2 weeks ago' --author=me -- sub",
		"git log -5 -p --stat --format='%h %s' main..HEAD",
		"git log --graph --decorate --all",
		"git diff --cached --stat -U3 -M50% HEAD~1",
		"git diff --name-only HEAD -- a.txt",
		"git show --stat HEAD:a.txt",
		"git branch -a -v", "git branch -vv", "git branch --list 'feat*'", "git branch --contains HEAD", "git branch --show-current",
		"git tag", "git tag -l 'v*'", "git tag -n3 --list", "git tag --contains HEAD",
		"git rev-parse --show-toplevel --abbrev-ref HEAD",
		"git ls-files -z --others --exclude-standard sub",
		"git blame -L 1,2 a.txt",
		"git grep -n -e foo --and -e bar -- sub",
		"git grep -3 foo HEAD",
		"git describe --tags --always --dirty",
		"git shortlog -sne HEAD",
		"git version",
		"git --version",
	} {
		p, err := f.sh.check(Request{Command: c})
		if err != nil {
			t.Errorf("%s: %v", c, err)
			continue
		}
		argv, _ := Parse(c)
		if argv[0] != "git" && !slices.Equal(p.args, argv[1:]) {
			t.Errorf("%s: args changed to %q", c, p.args)
		}
	}
}

func TestGitArgvIsHardened(t *testing.T) {
	f := newFixture(t, nil)
	p, err := f.sh.check(Request{Command: "git log -p a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(p.args, " ")
	for _, want := range []string{"-c core.fsmonitor=false", "-c core.hooksPath=/dev/null", "-c diff.external=",
		"-c gpg.program=false", "-c protocol.allow=never", "--no-pager log --no-ext-diff --no-textconv -p a.txt"} {
		if !strings.Contains(joined, want) {
			t.Errorf("git args %q lack %q", joined, want)
		}
	}
	env := strings.Join(p.env, " ")
	for _, want := range []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat", "GIT_OPTIONAL_LOCKS=0", "GIT_CEILING_DIRECTORIES=" + f.base} {
		if !strings.Contains(env, want) {
			t.Errorf("git env %q lacks %q", env, want)
		}
	}
	for cmd, inject := range map[string]string{
		"git status":   "--no-pager status --ignore-submodules=all",
		"git diff":     "--no-pager diff --no-ext-diff --no-textconv --ignore-submodules=all",
		"git blame x":  "--no-pager blame --no-textconv x",
		"git grep foo": "--no-pager grep --no-textconv foo",
		"git show":     "--no-pager show --no-ext-diff --no-textconv",
	} {
		p, err := f.sh.check(Request{Command: cmd})
		if err != nil || !strings.HasSuffix(strings.Join(p.args, " "), inject) {
			t.Errorf("%s → %q, %v; want suffix %q", cmd, p.args, err, inject)
		}
	}
	if p, _ := f.sh.check(Request{Command: "git version"}); !slices.Equal(p.args, []string{"version"}) || p.git {
		t.Errorf("git version → %q (prepare %v)", p.args, p.git)
	}
}

func TestFlagSpecPanics(t *testing.T) {
	for _, spec := range []func(){func() { flags("x") }, func() { flags("-xy") }, func() { flags().deny("r", "x") }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("bad spec accepted")
				}
			}()
			spec()
		}()
	}
}

func TestGetoptModes(t *testing.T) {
	fs := flags("-a", "-b=", "-c?", "-d~", "--long=", "--opt?", "--last~", "-f=@", "--file=@")
	for _, c := range []struct {
		args     []string
		operands []string
		paths    []string
	}{
		{[]string{"-ab", "x", "y"}, []string{"y"}, nil},
		{[]string{"-abx", "y"}, []string{"y"}, nil},
		{[]string{"-c", "y"}, []string{"y"}, nil},
		{[]string{"-cz", "y"}, []string{"y"}, nil},
		{[]string{"-d", "v", "y"}, []string{"y"}, nil},
		{[]string{"y", "-d"}, []string{"y"}, nil},
		{[]string{"-dv"}, nil, nil},
		{[]string{"--long", "v", "y"}, []string{"y"}, nil},
		{[]string{"--opt", "y"}, []string{"y"}, nil},
		{[]string{"--last", "v", "y"}, []string{"y"}, nil},
		{[]string{"y", "--last"}, []string{"y"}, nil},
		{[]string{"-f", "p1", "-fp2", "--file=p3", "--file", "p4", "-af", "p5"}, nil, []string{"p1", "p2", "p3", "p4", "p5"}},
		{[]string{"--", "-a", "--long"}, []string{"-a", "--long"}, nil},
		{[]string{"-", "x"}, []string{"-", "x"}, nil},
		{[]string{"-b", "--", "x"}, []string{"x"}, nil},
	} {
		p, err := fs.parse("t", c.args)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		var paths []string
		for _, v := range p.paths {
			paths = append(paths, v.value)
		}
		if !slices.Equal(p.operands, c.operands) || !slices.Equal(paths, c.paths) {
			t.Errorf("%q → operands %q paths %q; want %q %q", c.args, p.operands, paths, c.operands, c.paths)
		}
	}
	if _, err := fs.parse("t", []string{"--"}); err != nil {
		t.Error(err)
	}
	if _, err := fs.parse("t", []string{"--=x"}); err == nil {
		t.Error("empty long name accepted")
	}
	if _, err := fs.parse("t", []string{"--long"}); err == nil || !strings.Contains(err.Error(), "needs a value") {
		t.Errorf("missing value: %v", err)
	}
	if h := flags().hint(); h != " (this program takes no flags)" {
		t.Errorf("hint %q", h)
	}
}
