package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Front is a TCP front for several kruise-manager replicas in URL mode: the API server calls one
// URL (--webhook-url-port), and each connection goes to the next replica in turn, or to the one
// after it when a replica does not accept (stopped, or restarting). It stands in for the Service a
// cluster puts in front of the replicas' webhook servers. With one backend it is a plain TCP
// proxy. It passes bytes untouched (TLS goes through it end to end), and a fault campaign can
// impair it (Impair) for a while: slow it, make its replies lag, or drop its connections.
type Front struct {
	Addr     string // host:port the front listens on
	l        net.Listener
	backends []string
	next     atomic.Uint32
	wg       sync.WaitGroup
	mu       sync.Mutex
	open     map[net.Conn]struct{}
	// fault, delay and healed are the impairment in force (Impair); healed is closed when it ends.
	fault  FrontFault
	delay  time.Duration
	healed chan struct{}
}

// A FrontFault is what a Front does to the connections through it.
type FrontFault int

const (
	// FrontPass forwards bytes as they come.
	FrontPass FrontFault = iota
	// FrontSlow delivers each byte a client sends the delay after it came, in order: a new
	// connection's first bytes, its TLS handshake and every request on an open connection reach
	// the backend late.
	FrontSlow
	// FrontLag delivers each byte a backend sends the delay after it came, in order: the client
	// connects at once and its requests go out at once, but it reads every reply, and every event
	// of its watches, late.
	FrontLag
	// FrontDrop resets every open connection and each new one as soon as it is accepted.
	FrontDrop
)

func (f FrontFault) String() string {
	switch f {
	case FrontSlow:
		return "slow"
	case FrontLag:
		return "lag"
	case FrontDrop:
		return "drop"
	default:
		return "pass"
	}
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

// Impair puts fault in force, with delay for FrontSlow and FrontLag, until Heal (or the next
// Impair, which heals this one first). FrontDrop resets the open connections at once.
func (f *Front) Impair(fault FrontFault, delay time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.healLocked()
	f.fault, f.delay = fault, delay
	if fault == FrontSlow || fault == FrontLag {
		f.healed = make(chan struct{})
	}
	if fault == FrontDrop {
		for c := range f.open {
			reset(c)
		}
	}
}

// Heal ends the impairment: connections pass again, and the bytes it held are delivered at once,
// in order.
func (f *Front) Heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.healLocked()
}

func (f *Front) healLocked() {
	if f.healed != nil {
		close(f.healed)
		f.healed = nil
	}
	f.fault, f.delay = FrontPass, 0
}

// hold is how long bytes read now from the client (toBackend) or from the backend are held, and
// the channel that releases them early (nil: not held).
func (f *Front) hold(toBackend bool) (time.Duration, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if (f.fault == FrontSlow && toBackend) || (f.fault == FrontLag && !toBackend) {
		return f.delay, f.healed
	}
	return 0, nil
}

// Close stops accepting, closes the open connections and waits for their forwarding to end.
func (f *Front) Close() error {
	err := f.l.Close()
	f.mu.Lock()
	f.healLocked()
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

// track adds c to the open connections; it reports false, and resets c, while the front drops.
func (f *Front) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fault == FrontDrop {
		reset(c)
		return false
	}
	f.open[c] = struct{}{}
	return true
}

func (f *Front) untrack(c net.Conn) {
	f.mu.Lock()
	delete(f.open, c)
	f.mu.Unlock()
	_ = c.Close()
}

// reset closes c with a TCP reset rather than an orderly close.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
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
	if !f.track(conn) {
		return
	}
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
	if !f.track(up) {
		return
	}
	defer f.untrack(up)
	done := make(chan struct{}, 2)
	go func() { f.pipe(up, conn, true); done <- struct{}{} }()
	go func() { f.pipe(conn, up, false); done <- struct{}{} }()
	<-done
	<-done
}

// chunk is bytes read from one side, to be written to the other once due (or released).
type chunk struct {
	data     []byte
	due      time.Time
	released <-chan struct{}
}

// pipe copies src to dst, holding each read as hold says, in order; at src's end it closes dst's
// writing half once every byte read is written.
func (f *Front) pipe(dst, src net.Conn, toBackend bool) {
	chunks := make(chan chunk, 256)
	go func() {
		defer close(chunks)
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				d, released := f.hold(toBackend)
				chunks <- chunk{data: append([]byte(nil), buf[:n]...), due: time.Now().Add(d), released: released}
			}
			if err != nil {
				return
			}
		}
	}()
	failed := false
	for c := range chunks {
		if failed {
			continue // drain, so the reader ends
		}
		if wait := time.Until(c.due); wait > 0 && c.released != nil {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-c.released:
				t.Stop()
			}
		}
		if _, err := dst.Write(c.data); err != nil {
			failed = true
			_ = src.Close() // the other side is gone: end the reader too
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}
