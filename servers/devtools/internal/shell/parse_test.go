package shell

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"mvdan.cc/sh/v3/syntax"
)

func TestParseAccepts(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{`ls -la`, []string{"ls", "-la"}},
		{`  echo   spaced  `, []string{"echo", "spaced"}},
		{"echo trailing\n", []string{"echo", "trailing"}},
		{`echo a\ b "x\"y" 'q' a\*b`, []string{"echo", "a b", `x"y`, "q", "a*b"}},
		{`echo "a\\b\$c\qd\` + "`" + `e"`, []string{"echo", `a\b$c\qd` + "`e"}},
		{`echo '$HOME' "it's" '"q"'`, []string{"echo", "$HOME", "it's", `"q"`}},
		{`echo ''`, []string{"echo", ""}},
		{`echo a"b"'c'd`, []string{"echo", "abcd"}},
		{`git log HEAD~3 HEAD@{1} main..dev`, []string{"git", "log", "HEAD~3", "HEAD@{1}", "main..dev"}},
		{`echo {} x=y a#b 100% @ ! ]`, []string{"echo", "{}", "x=y", "a#b", "100%", "@", "!", "]"}},
		{`find . -name '*.go' -o -name "[ab]?"`, []string{"find", ".", "-name", "*.go", "-o", "-name", "[ab]?"}},
		{`echo '{a,b}' \{a,b\} "~" \~`, []string{"echo", "{a,b}", "{a,b}", "~", "~"}},
		{`grep -e 'a|b' -e "c;d" x`, []string{"grep", "-e", "a|b", "-e", "c;d", "x"}},
		{"echo 'multi\nline'", []string{"echo", "multi\nline"}},
		{"echo a\\\nb", []string{"echo", "ab"}},
		{`echo "é ü 日本"`, []string{"echo", "é ü 日本"}},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Parse(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	cases := []struct{ in, want string }{
		// chaining and control
		{`echo a; echo b`, "command separator (;)"},
		{`echo a;`, "command separator (;)"},
		{`echo a && echo b`, "command chaining (&&)"},
		{`echo a || echo b`, "command chaining (||)"},
		{`echo a | wc`, "a pipe (|)"},
		{`echo a |& wc`, "a pipe (|&)"},
		{`sleep 1 &`, "background execution (&)"},
		{`sleep 1 & echo b`, "background execution (&)"},
		{"echo a\necho b", "a newline separating commands"},
		{"echo a\n\n  echo b", "a newline separating commands"},
		{`! ls`, "negation (!)"},
		// substitutions
		{`echo $(id)`, "command substitution ($(…))"},
		{`echo "$(id)"`, "command substitution ($(…))"},
		{"echo `id`", "command substitution (`…`)"},
		{"echo \"`id`\"", "command substitution (`…`)"},
		{`cat <(ls)`, "process substitution (<(…))"},
		{`tee >(ls)`, "process substitution (>(…))"},
		{`echo $((1+2))`, "arithmetic expansion"},
		{`echo $HOME`, "parameter expansion"},
		{`echo ${HOME}`, "parameter expansion"},
		{`echo "x$HOME"`, "parameter expansion"},
		{`echo $1`, "parameter expansion"},
		// redirections
		{`echo a > f`, "redirection (>)"},
		{`echo a >> f`, "redirection (>>)"},
		{`cat < f`, "redirection (<)"},
		{`ls 2>&1`, "redirection (>&)"},
		{`ls &> f`, "redirection (&>)"},
		{`ls > /dev/sda`, "redirection (>)"},
		{"cat <<EOF\nx\nEOF", "redirection (<<)"},
		{`cat <<< x`, "redirection (<<<)"},
		// assignments and compound commands
		{`VAR=x ls`, "variable assignment"},
		{`VAR=x`, "variable assignment"},
		{`( ls )`, "a subshell"},
		{`{ ls; }`, "a command group"},
		{`if true; then ls; fi`, "an if statement"},
		{`for a in b; do ls; done`, "a for loop"},
		{`while true; do ls; done`, "a while loop"},
		{`until true; do ls; done`, "an until loop"},
		{`case a in b) ls;; esac`, "a case statement"},
		{`f() { ls; }`, "a function definition"},
		{`function f { ls; }`, "a function definition"},
		{`(( 1 + 2 ))`, "arithmetic command"},
		{`[[ -f x ]]`, "test expression"},
		{`export A=b`, "declaration (export)"},
		{`declare a`, "declaration (declare)"},
		{`let a=1`, "let expression"},
		{`time ls`, "time command"},
		{`coproc ls`, "coprocess"},
		// expansions the shell would do
		{`echo *`, "unquoted glob character (*)"},
		{`ls *.go`, "unquoted glob character (*)"},
		{`ls a?`, "unquoted glob character (?)"},
		{`ls [ab]`, "unquoted glob character ([)"},
		{`echo ~`, "tilde expansion"},
		{`ls ~root/x`, "tilde expansion"},
		{`echo a=~/x`, "tilde expansion"},
		{`echo a:~/x`, "tilde expansion"},
		{`echo {a,b}`, "brace expansion"},
		{`echo x{1..3}`, "brace expansion"},
		{`echo pre{a,{b,c}}`, "brace expansion"},
		{`echo $'a\tb'`, "ANSI-C quoting"},
		{`echo $"a"`, "locale quoting"},
		{`echo @(a|b)`, "extended glob"},
		// comments and emptiness
		{`echo a # rest`, "a comment"},
		{`# only a comment`, "a comment"},
		{``, "the command is empty"},
		{"   \n ", "the command is empty"},
		{"echo a\x00b", "NUL byte"},
		{`echo "unclosed`, "cannot parse"},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if err == nil {
			t.Errorf("Parse(%q) = %q, want a refusal naming %q", c.in, got, c.want)
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != mcperr.Validation || e.Field != "command" {
			t.Errorf("Parse(%q): error %#v is not a VALIDATION_ERROR on command", c.in, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q): %q does not name %q", c.in, err, c.want)
		}
	}
}

func TestParseSnippet(t *testing.T) {
	_, err := Parse(`ls -la && rm -rf /very/long/path/that/keeps/going/and/going/on`)
	if err == nil || !strings.Contains(err.Error(), `at "ls -la && rm -rf /very/long/path/that..."`) {
		t.Fatalf("snippet not quoted and shortened: %v", err)
	}
	p := parser{src: "ab"}
	if s := p.snippet(syntax.Pos{}, syntax.Pos{}); s != "" {
		t.Fatalf("invalid position gave snippet %q", s)
	}
}

func BenchmarkParse(b *testing.B) {
	const line = `git log --oneline --since="2 weeks ago" -n 20 -- 'src/some dir' main.go`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(line); err != nil {
			b.Fatal(err)
		}
	}
}
