package mcptest

import "testing"

// CLICase is one run of a server's binary in a command-line test: what it
// is started with, and what it must give (see Exit).
type CLICase struct {
	Name           string
	Env, Args      []string
	Code           int
	Stdout, Stderr []string // each must appear there
	// QuietStdout: stdout must stay empty (it is the protocol's alone).
	QuietStdout bool
}

// CheckCLI runs each case of bin (as Run does) in a parallel subtest named
// after it, and checks what it gave; hidden are the secrets no run may
// print.
func CheckCLI(t *testing.T, bin string, hidden []string, cases []CLICase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := Run(t, bin, tc.Env, tc.Args...)
			Exit{Code: tc.Code, Stdout: tc.Stdout, Stderr: tc.Stderr, Hidden: hidden, QuietStdout: tc.QuietStdout}.Check(t, stdout, stderr, code)
		})
	}
}
