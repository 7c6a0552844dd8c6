package engine

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

// lateListener hands over the connection it accepted only 100 ms after it
// is closed: the window between net/http's accept and its tracking of the
// connection, made wide, and always after the listener closed.
type lateListener struct {
	net.Listener
	accepted chan struct{}
	hold     chan struct{}
}

func (l *lateListener) Close() error {
	err := l.Listener.Close()
	time.AfterFunc(100*time.Millisecond, func() { close(l.hold) })
	return err
}

func (l *lateListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		close(l.accepted)
		<-l.hold
	}
	return c, err
}

// TestShutdownClosesConnectionAcceptedAtTheEnd: a connection accepted just
// as the listener closes, which never carries a request, does not hold
// shutdown up for the 5 s net/http waits for a new connection.
func TestShutdownClosesConnectionAcceptedAtTheEnd(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &lateListener{Listener: raw, accepted: make(chan struct{}), hold: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- ServeListener(ctx, ln, http.NotFoundHandler(), 10*time.Second, nil)
	}()
	conn, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	<-ln.accepted
	start := time.Now()
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("ServeListener: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ServeListener did not return")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("shutdown took %s", d)
	}
}
