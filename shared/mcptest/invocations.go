package mcptest

import "testing"

// Invocation is one run of a server's binary — its environment and
// arguments — and what it should give.
type Invocation struct {
	Name string
	Env  []string
	Args []string
	Exit
}

// CheckInvocations runs bin once per invocation (see Run), each in a
// parallel subtest named after it, and checks what each gave.
func CheckInvocations(t *testing.T, bin string, runs []Invocation) {
	t.Helper()
	for _, r := range runs {
		t.Run(r.Name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := Run(t, bin, r.Env, r.Args...)
			r.Check(t, stdout, stderr, code)
		})
	}
}
