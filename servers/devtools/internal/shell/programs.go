package shell

import "fmt"

// program is the policy of one allowed program: check validates the
// arguments (argv without the program name) and returns the arguments to
// run, which may carry hardening flags of its own.
type program struct {
	check func(c *checker, args []string) ([]string, error)
	// env adds variables to the child's environment (git's hardening).
	env func(c *checker) []string
}

// checker carries what a policy needs to judge one request.
type checker struct {
	roots roots
	cwd   string
	prog  string
}

func (c *checker) path(arg, what string) error {
	if arg == "-" {
		return nil // standard input, which is /dev/null
	}
	return c.roots.checkPath(c.cwd, arg, what)
}

func (c *checker) operandPaths(ops []string) error {
	for _, op := range ops {
		if err := c.path(op, fmt.Sprintf("%s: argument %q", c.prog, op)); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) valuePaths(p *parsed) error {
	for _, v := range p.paths {
		if err := c.path(v.value, fmt.Sprintf("%s: the file %q given to %s", c.prog, v.value, v.flag)); err != nil {
			return err
		}
	}
	return nil
}

// filesPolicy is the common shape: flags from fs, every operand a file.
func filesPolicy(fs *flagSet) program {
	return program{check: func(c *checker, args []string) ([]string, error) {
		p, err := fs.parse(c.prog, args)
		if err != nil {
			return nil, err
		}
		if err := c.valuePaths(p); err != nil {
			return nil, err
		}
		if err := c.operandPaths(p.operands); err != nil {
			return nil, err
		}
		return args, nil
	}}
}

const (
	whyRuns       = "it runs another program"
	whyWrites     = "it writes files"
	whyFileList   = "it reads a list of file names from a file, which cannot be checked against the roots"
	whyFollows    = "it follows symbolic links, which may lead outside the roots"
	whyFollowTail = "it waits for the file to grow and would only end at the timeout"
)

// builtins are the read-only programs allowed by default (a developer's
// everyday inspection commands; no interpreters or package managers). Each
// allows a fixed set of flags; anything not listed is refused.
var builtins = map[string]program{
	"ls": filesPolicy(flags(
		"-a", "--all", "-A", "--almost-all", "-b", "--escape", "-B", "--ignore-backups", "-c", "-C", "-d", "--directory",
		"-f", "-F", "--classify?", "--file-type", "-g", "-G", "--no-group", "-h", "--human-readable", "--si",
		"-H", "--dereference-command-line", "-i", "--inode", "-I=", "--ignore=", "--hide=", "-k", "--kibibytes",
		"-l", "-m", "-n", "--numeric-uid-gid", "-N", "--literal", "-o", "-p", "--indicator-style=", "-q",
		"--hide-control-chars", "--show-control-chars", "-Q", "--quote-name", "--quoting-style=", "-r", "--reverse",
		"-R", "--recursive", "-s", "--size", "-S", "--sort=", "-t", "--time=", "--time-style=", "--full-time",
		"-T=", "--tabsize=", "-u", "-U", "-v", "-w=", "--width=", "-x", "-X", "-Z", "--context", "-1",
		"--color?", "--group-directories-first", "--block-size=", "--author", "--format=", "--zero",
		"--hyperlink?", "--help", "--version",
	).deny(whyFollows, "-L", "--dereference")),

	"pwd": filesPolicy(flags("-L", "--logical", "-P", "--physical", "--help", "--version")),

	"cat": filesPolicy(flags(
		"-A", "--show-all", "-b", "--number-nonblank", "-e", "-E", "--show-ends", "-n", "--number",
		"-s", "--squeeze-blank", "-t", "-T", "--show-tabs", "-u", "-v", "--show-nonprinting", "--help", "--version",
	)),

	"head": filesPolicy(flags(
		"-c=", "--bytes=", "-n=", "--lines=", "-q", "--quiet", "--silent", "-v", "--verbose",
		"-z", "--zero-terminated", "--help", "--version",
	).withDigits()),

	"tail": filesPolicy(flags(
		"-c=", "--bytes=", "-n=", "--lines=", "-q", "--quiet", "--silent", "-v", "--verbose",
		"-z", "--zero-terminated", "--help", "--version",
	).withDigits().deny(whyFollowTail, "-f", "-F", "--follow", "--retry", "--pid", "-s", "--sleep-interval", "--max-unchanged-stats")),

	"wc": filesPolicy(flags(
		"-c", "--bytes", "-m", "--chars", "-l", "--lines", "-L", "--max-line-length", "-w", "--words",
		"--total=", "--help", "--version",
	).deny(whyFileList, "--files0-from")),

	"sort": filesPolicy(flags(
		"-b", "--ignore-leading-blanks", "-d", "--dictionary-order", "-f", "--ignore-case", "-g", "--general-numeric-sort",
		"-i", "--ignore-nonprinting", "-M", "--month-sort", "-h", "--human-numeric-sort", "-n", "--numeric-sort",
		"-R", "--random-sort", "--random-source=@", "-r", "--reverse", "--sort=", "-V", "--version-sort",
		"--batch-size=", "-c", "-C", "--check?", "--debug", "-k=", "--key=", "-m", "--merge", "-s", "--stable",
		"-S=", "--buffer-size=", "-t=", "--field-separator=", "--parallel=", "-u", "--unique",
		"-z", "--zero-terminated", "--help", "--version",
	).deny(whyRuns, "--compress-program").
		deny(whyWrites, "-o", "--output", "-T", "--temporary-directory").
		deny(whyFileList, "--files0-from")),

	"echo": {check: checkEcho},
	"grep": {check: checkGrep},
	"uniq": {check: checkUniq},
	"find": {check: checkFind},
	"git":  {check: checkGit, env: gitEnv},
}

// checkEcho accepts anything: echo reads no files and runs nothing, and
// its arguments are only text.
func checkEcho(_ *checker, args []string) ([]string, error) { return args, nil }

var grepFlags = flags(
	"-E", "--extended-regexp", "-F", "--fixed-strings", "-G", "--basic-regexp", "-P", "--perl-regexp",
	"-e=", "--regexp=", "-f=@", "--file=@", "-i", "-y", "--ignore-case", "--no-ignore-case",
	"-v", "--invert-match", "-w", "--word-regexp", "-x", "--line-regexp",
	"-c", "--count", "--color?", "--colour?", "-L", "--files-without-match", "-l", "--files-with-matches",
	"-m=", "--max-count=", "-o", "--only-matching", "-q", "--quiet", "--silent", "-s", "--no-messages",
	"-b", "--byte-offset", "-H", "--with-filename", "-h", "--no-filename", "--label=", "-n", "--line-number",
	"-T", "--initial-tab", "-Z", "--null", "-z", "--null-data",
	"-A=", "--after-context=", "-B=", "--before-context=", "-C=", "--context=", "--group-separator=", "--no-group-separator",
	"-a", "--text", "--binary-files=", "-D=", "--devices=", "-d=", "--directories=",
	"--exclude=", "--exclude-from=@", "--exclude-dir=", "-I", "--include=", "-r", "--recursive",
	"--line-buffered", "-U", "--binary", "--help", "-V", "--version",
).withDigits().deny(whyFollows, "-R", "--dereference-recursive")

// checkGrep: the first operand is the pattern unless -e or -f gave one;
// every other operand is a file. GNU grep has no option that runs a
// program (--pre belongs to other greps).
func checkGrep(c *checker, args []string) ([]string, error) {
	p, err := grepFlags.parse(c.prog, args)
	if err != nil {
		return nil, err
	}
	if err := c.valuePaths(p); err != nil {
		return nil, err
	}
	files := p.operands
	if !p.has("-e", "--regexp", "-f", "--file") && len(files) > 0 {
		files = files[1:]
	}
	if err := c.operandPaths(files); err != nil {
		return nil, err
	}
	return args, nil
}

var uniqFlags = flags(
	"-c", "--count", "-d", "--repeated", "-D", "--all-repeated?", "-f=", "--skip-fields=", "--group?",
	"-i", "--ignore-case", "-s=", "--skip-chars=", "-u", "--unique", "-z", "--zero-terminated",
	"-w=", "--check-chars=", "--help", "--version",
)

// checkUniq allows one input file: uniq's second operand is an output file
// it would write.
func checkUniq(c *checker, args []string) ([]string, error) {
	p, err := uniqFlags.parse(c.prog, args)
	if err != nil {
		return nil, err
	}
	if len(p.operands) > 1 {
		return nil, invalid("command", "uniq: a second file argument (%q) is not allowed: uniq would write its output there", p.operands[1])
	}
	if err := c.operandPaths(p.operands); err != nil {
		return nil, err
	}
	return args, nil
}

// DefaultPrograms lists the built-in programs, sorted.
func DefaultPrograms() []string { return sortedKeys(builtins) }
