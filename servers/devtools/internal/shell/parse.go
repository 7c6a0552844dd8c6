package shell

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Parse turns a command line into an argument vector without ever running a
// shell. The line must be one simple command: words made only of unquoted
// text, 'single-quoted' text and "double-quoted" text without expansions.
// Everything a shell would interpret (separators, pipes, redirections,
// background jobs, subshells, substitutions, parameter, arithmetic, tilde,
// brace and glob expansion, assignments, comments, compound commands) is
// refused with an [*Error] naming what was found, because no shell exists
// to give it meaning: passing it on literally would silently do something
// other than what the caller wrote.
//
// Quoting follows bash: a backslash outside quotes escapes the next
// character, and inside double quotes it escapes only $ ` " \ and newline.
// Glob characters (* ? [) are refused when unquoted and unescaped rather
// than passed on literally; quote them ('*.go') to give them to a program
// such as find or grep that interprets them itself.
func Parse(command string) ([]string, error) {
	if strings.TrimSpace(command) == "" {
		return nil, invalid("command", "the command is empty")
	}
	if strings.ContainsRune(command, 0) {
		return nil, invalid("command", "the command contains a NUL byte")
	}
	f, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).
		Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, invalid("command", "cannot parse the command: %v", err)
	}
	p := parser{src: command}
	if len(f.Stmts) == 0 {
		if len(f.Last) > 0 {
			return nil, p.refuse("a comment", f.Last[0].Pos(), f.Last[0].End(), "'#' starts a comment; quote it to pass it literally")
		}
		return nil, invalid("command", "the command is empty")
	}
	if len(f.Stmts) > 1 {
		first := f.Stmts[0]
		switch {
		case first.Background:
			return nil, p.refuse("background execution (&)", first.Semicolon, first.Semicolon, "")
		case first.Semicolon.IsValid():
			return nil, p.refuse("a command separator (;)", first.Semicolon, first.Semicolon, "")
		}
		return nil, p.refuse("a newline separating commands", first.End(), f.Stmts[1].Pos(), "")
	}
	st := f.Stmts[0]
	switch {
	case len(st.Comments) > 0:
		c := st.Comments[0]
		return nil, p.refuse("a comment", c.Pos(), c.End(), "'#' starts a comment; quote it to pass it literally")
	case len(f.Last) > 0:
		c := f.Last[0]
		return nil, p.refuse("a comment", c.Pos(), c.End(), "'#' starts a comment; quote it to pass it literally")
	case st.Background:
		return nil, p.refuse("background execution (&)", st.Semicolon, st.Semicolon, "")
	case st.Coprocess:
		return nil, p.refuse("a coprocess (|&)", st.Semicolon, st.Semicolon, "")
	case st.Disown:
		return nil, p.refuse("a disowned background job (&!)", st.Semicolon, st.Semicolon, "")
	case st.Semicolon.IsValid():
		return nil, p.refuse("a command separator (;)", st.Semicolon, st.Semicolon, "")
	case st.Negated:
		return nil, p.refuse("negation (!)", st.Position, st.Position, "")
	case len(st.Redirs) > 0:
		r := st.Redirs[0]
		return nil, p.refuse("a redirection ("+r.Op.String()+")", r.Pos(), r.End(), "output is captured and returned; files are read by naming them as arguments")
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		what := construct(st.Cmd)
		return nil, p.refuse(what, st.Cmd.Pos(), st.Cmd.End(), "")
	}
	if len(call.Assigns) > 0 {
		a := call.Assigns[0]
		return nil, p.refuse("a variable assignment (NAME=value)", a.Pos(), a.End(), "pass environment variables in the env argument")
	}
	if len(call.Args) == 0 {
		return nil, invalid("command", "the command is empty")
	}
	argv := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		s, err := p.word(w)
		if err != nil {
			return nil, err
		}
		argv = append(argv, s)
	}
	return argv, nil
}

// construct names a compound or special command for an error message.
func construct(c syntax.Command) string {
	switch c := c.(type) {
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt:
			return "command chaining (&&)"
		case syntax.OrStmt:
			return "command chaining (||)"
		case syntax.Pipe:
			return "a pipe (|)"
		case syntax.PipeAll:
			return "a pipe (|&)"
		}
		return "command chaining (" + c.Op.String() + ")"
	case *syntax.Subshell:
		return "a subshell ( … )"
	case *syntax.Block:
		return "a command group { …; }"
	case *syntax.IfClause:
		return "an if statement"
	case *syntax.WhileClause:
		if c.Until {
			return "an until loop"
		}
		return "a while loop"
	case *syntax.ForClause:
		return "a for loop"
	case *syntax.CaseClause:
		return "a case statement"
	case *syntax.FuncDecl:
		return "a function definition"
	case *syntax.ArithmCmd:
		return "an arithmetic command (( … ))"
	case *syntax.TestClause:
		return "a test expression [[ … ]]"
	case *syntax.DeclClause:
		return "a declaration (" + c.Variant.Value + ")"
	case *syntax.LetClause:
		return "a let expression"
	case *syntax.TimeClause:
		return "a time command"
	case *syntax.CoprocClause:
		return "a coprocess (coproc)"
	}
	return fmt.Sprintf("an unsupported shell construct (%T)", c)
}

type parser struct{ src string }

// refuse builds the error for a construct found between from and to,
// quoting the source text so the caller sees exactly what was meant.
func (p parser) refuse(what string, from, to syntax.Pos, hint string) *Error {
	msg := "shell syntax is not supported: found " + what
	if snip := p.snippet(from, to); snip != "" {
		msg += fmt.Sprintf(" at %q", snip)
	}
	msg += "; commands run without a shell, one program with its arguments"
	if hint != "" {
		msg += " (" + hint + ")"
	}
	return invalid("command", "%s", msg)
}

func (p parser) snippet(from, to syntax.Pos) string {
	if !from.IsValid() {
		return ""
	}
	a, b := int(from.Offset()), int(to.Offset())
	if !to.IsValid() || b <= a {
		b = a + 1
	}
	if a >= len(p.src) {
		return ""
	}
	b = min(b, len(p.src))
	s := p.src[a:b]
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

// word returns the literal value of w, refusing any part a shell would
// expand. The checks run on the parsed word, so quoting is honoured: '$x'
// and \$x are plain text, $x is not.
func (p parser) word(w *syntax.Word) (string, error) {
	var b strings.Builder
	// unq is the word with quoted characters masked, for the brace check.
	var unq []rune
	for i, part := range w.Parts {
		switch part := part.(type) {
		case *syntax.Lit:
			val := part.Value
			for j := 0; j < len(val); j++ {
				c := val[j]
				if c == '\\' && j+1 < len(val) {
					j++
					b.WriteByte(val[j])
					unq = append(unq, 0)
					continue
				}
				switch c {
				case '*', '?', '[':
					return "", p.refuse(fmt.Sprintf("an unquoted glob character (%c)", c), w.Pos(), w.End(),
						"no file-name expansion happens here; quote the word ('"+string(c)+"') to pass it literally")
				case '~':
					atStart := i == 0 && j == 0
					afterSep := len(unq) > 0 && (unq[len(unq)-1] == '=' || unq[len(unq)-1] == ':')
					if atStart || afterSep {
						return "", p.refuse("tilde expansion (~)", w.Pos(), w.End(), "no home-directory expansion happens here; quote '~' to pass it literally")
					}
				}
				b.WriteByte(c)
				unq = append(unq, rune(c))
			}
		case *syntax.SglQuoted:
			if part.Dollar {
				return "", p.refuse("ANSI-C quoting ($'…')", part.Pos(), part.End(), "use plain 'single quotes'")
			}
			b.WriteString(part.Value)
			unq = append(unq, 0)
		case *syntax.DblQuoted:
			if part.Dollar {
				return "", p.refuse("locale quoting ($\"…\")", part.Pos(), part.End(), "use plain \"double quotes\"")
			}
			for _, in := range part.Parts {
				lit, ok := in.(*syntax.Lit)
				if !ok {
					return "", p.refuse(expansion(in), in.Pos(), in.End(), "")
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
			unq = append(unq, 0)
		default:
			return "", p.refuse(expansion(part), part.Pos(), part.End(), "")
		}
	}
	if hasBraceExpansion(unq) {
		return "", p.refuse("brace expansion ({a,b} or {1..3})", w.Pos(), w.End(), "quote the braces to pass them literally")
	}
	return b.String(), nil
}

// expansion names a word part that a shell would expand.
func expansion(part syntax.Node) string {
	switch part := part.(type) {
	case *syntax.ParamExp:
		return "parameter expansion ($NAME)"
	case *syntax.CmdSubst:
		if part.Backquotes {
			return "command substitution (`…`)"
		}
		return "command substitution ($(…))"
	case *syntax.ArithmExp:
		return "arithmetic expansion ($((…)))"
	case *syntax.ProcSubst:
		return "process substitution (" + part.Op.String() + "…))"
	case *syntax.ExtGlob:
		return "an extended glob (" + part.Op.String() + "…))"
	}
	return fmt.Sprintf("an unsupported expansion (%T)", part)
}

// unescapeDouble applies the backslash rules of double quotes: only $ ` "
// \ and newline are escaped; any other backslash stays.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				b.WriteByte(s[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hasBraceExpansion reports whether a word, with quoted and escaped
// characters masked as 0, holds something bash would brace-expand: an
// unquoted { … } enclosing an unquoted comma or "..". It errs on the side
// of refusing (bash also requires well-formed sequences), which costs the
// caller a pair of quotes at worst. ${ cannot occur here: $ expansions are
// refused before this check.
func hasBraceExpansion(w []rune) bool {
	for i, c := range w {
		if c != '{' {
			continue
		}
		depth := 0
		for j := i + 1; j < len(w); j++ {
			switch w[j] {
			case '{':
				depth++
			case '}':
				if depth == 0 {
					inner := w[i+1 : j]
					for k, r := range inner {
						if r == ',' || (r == '.' && k+1 < len(inner) && inner[k+1] == '.') {
							return true
						}
					}
					j = len(w)
				} else {
					depth--
				}
			}
		}
	}
	return false
}
