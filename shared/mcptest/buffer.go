package mcptest

// Buffer is an io.Writer that goroutines may write while a test reads what
// they wrote: a server's log sink, or a child process's stderr. It is the
// buffer stdio clients capture the server's stderr in. The zero value is
// ready to use.
type Buffer = syncBuffer

// String returns everything written so far.
func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}
