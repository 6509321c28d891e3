package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Front is a TCP front for several kruise-manager replicas in URL mode: the API server calls one
// URL (--webhook-url-port), and each connection goes to the next replica in turn, or to the one
// after it when a replica does not accept (stopped, or restarting). It stands in for the Service a
// cluster puts in front of the replicas' webhook servers.
type Front struct {
	Addr     string // host:port the front listens on
	l        net.Listener
	backends []string
	next     atomic.Uint32
	wg       sync.WaitGroup
	mu       sync.Mutex
	open     map[net.Conn]struct{}
}

// StartFront listens on addr (host:0 picks a port) and forwards to backends (host:port each) until
// ctx ends or Close.
func StartFront(ctx context.Context, addr string, backends ...string) (*Front, error) {
	if len(backends) == 0 {
		return nil, errors.New("front: no backends")
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("front: %w", err)
	}
	f := &Front{Addr: l.Addr().String(), l: l, backends: backends, open: map[net.Conn]struct{}{}}
	context.AfterFunc(ctx, func() { _ = f.Close() })
	f.wg.Go(f.serve)
	return f, nil
}

// Port is the port the front listens on.
func (f *Front) Port() int { return f.l.Addr().(*net.TCPAddr).Port }

// Close stops accepting, closes the open connections and waits for their forwarding to end.
func (f *Front) Close() error {
	err := f.l.Close()
	f.mu.Lock()
	for c := range f.open {
		_ = c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// track adds c to the open connections, or closes it when the front is closed.
func (f *Front) track(c net.Conn) {
	f.mu.Lock()
	f.open[c] = struct{}{}
	f.mu.Unlock()
}

func (f *Front) untrack(c net.Conn) {
	f.mu.Lock()
	delete(f.open, c)
	f.mu.Unlock()
	_ = c.Close()
}

func (f *Front) serve() {
	for {
		conn, err := f.l.Accept()
		if err != nil {
			return
		}
		f.wg.Go(func() { f.forward(conn) })
	}
}

// forward connects conn to the first backend that accepts, starting at the next in turn.
func (f *Front) forward(conn net.Conn) {
	f.track(conn)
	defer f.untrack(conn)
	start := int(f.next.Add(1))
	var up net.Conn
	for i := range f.backends {
		c, err := net.DialTimeout("tcp", f.backends[(start+i)%len(f.backends)], time.Second)
		if err == nil {
			up = c
			break
		}
	}
	if up == nil {
		return // no replica accepts: the caller sees the connection closed, as with no endpoints
	}
	f.track(up)
	defer f.untrack(up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, conn)
	go pipe(conn, up)
	<-done
	<-done
}
