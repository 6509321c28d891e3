package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// echoServer answers each line with name: line.
func echoServer(t *testing.T, name string) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				fmt.Fprintf(c, "%s: %s", name, line)
			}()
		}
	}()
	return l
}

// Connections alternate between the backends, and go to the one left when the other stops.
func TestFrontBalancesAndFailsOver(t *testing.T) {
	a, b := echoServer(t, "a"), echoServer(t, "b")
	defer b.Close()
	f, err := StartFront(context.Background(), "127.0.0.1:0", a.Addr().String(), b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	call := func() string {
		c, err := net.Dial("tcp", f.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintln(c, "hi")
		out, _ := bufio.NewReader(c).ReadString('\n')
		return out
	}
	seen := map[string]bool{}
	for range 4 {
		seen[call()] = true
	}
	if !seen["a: hi\n"] || !seen["b: hi\n"] {
		t.Errorf("answers %v, want both backends", seen)
	}
	a.Close()
	for range 4 {
		if out := call(); out != "b: hi\n" {
			t.Errorf("with a stopped: %q, want b's answer", out)
		}
	}
}

// lineServer answers each line of a connection with name: line, until the client closes; got
// receives the time each line came.
func lineServer(t *testing.T, name string) (net.Listener, <-chan time.Time) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time, 100)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					got <- time.Now()
					fmt.Fprintf(c, "%s: %s", name, line)
				}
			}()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return l, got
}

// frontConn is a client connection through a Front that sends lines and reads the answers.
type frontConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialFront(t *testing.T, f *Front) *frontConn {
	t.Helper()
	c, err := net.Dial("tcp", f.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &frontConn{c: c, r: bufio.NewReader(c)}
}

// call sends line and returns the answer, how long it took, and its error.
func (fc *frontConn) call(line string) (string, time.Duration, error) {
	start := time.Now()
	_ = fc.c.SetDeadline(start.Add(10 * time.Second))
	if _, err := fmt.Fprintln(fc.c, line); err != nil {
		return "", time.Since(start), err
	}
	out, err := fc.r.ReadString('\n')
	return out, time.Since(start), err
}

func startOneFront(t *testing.T, backend net.Listener) *Front {
	t.Helper()
	f, err := StartFront(context.Background(), "127.0.0.1:0", backend.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

const frontDelay = 400 * time.Millisecond

// A slowed front delivers a new connection's first bytes, and an open connection's, the delay
// late, and the backend gets them late; after Heal they pass at once.
func TestFrontSlow(t *testing.T) {
	a, got := lineServer(t, "a")
	f := startOneFront(t, a)
	open := dialFront(t, f)
	if out, _, err := open.call("warm"); err != nil || out != "a: warm\n" {
		t.Fatalf("before the fault: %q, %v", out, err)
	}
	<-got
	f.Impair(FrontSlow, frontDelay)
	sent := time.Now()
	fresh := dialFront(t, f)
	out, took, err := fresh.call("hi")
	if err != nil || out != "a: hi\n" || took < frontDelay {
		t.Errorf("new connection while slow: %q, %v after %s, want a's answer after %s", out, err, took, frontDelay)
	}
	if at := <-got; at.Sub(sent) < frontDelay {
		t.Errorf("the backend got the line %s after it was sent, want %s", at.Sub(sent), frontDelay)
	}
	if out, took, err := open.call("again"); err != nil || out != "a: again\n" || took < frontDelay {
		t.Errorf("open connection while slow: %q, %v after %s, want a's answer after %s", out, err, took, frontDelay)
	}
	<-got
	f.Heal()
	if out, took, err := open.call("healed"); err != nil || out != "a: healed\n" || took >= frontDelay {
		t.Errorf("after Heal: %q, %v after %s, want a's answer at once", out, err, took)
	}
}

// Heal delivers the bytes held until then at once, in order.
func TestFrontHealReleasesHeldBytes(t *testing.T) {
	a, _ := lineServer(t, "a")
	f := startOneFront(t, a)
	fc := dialFront(t, f)
	f.Impair(FrontSlow, time.Minute)
	time.AfterFunc(frontDelay, f.Heal)
	if _, err := fmt.Fprint(fc.c, "one\ntwo\n"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, want := range []string{"a: one\n", "a: two\n"} {
		_ = fc.c.SetDeadline(time.Now().Add(10 * time.Second))
		if out, err := fc.r.ReadString('\n'); err != nil || out != want {
			t.Fatalf("%q, %v; want %q", out, err, want)
		}
	}
	if took := time.Since(start); took < frontDelay/2 || took > 5*time.Second {
		t.Errorf("answers after %s, want them once healed (%s)", took, frontDelay)
	}
}

// A lagging front passes requests at once and delivers the replies the delay late.
func TestFrontLag(t *testing.T) {
	a, got := lineServer(t, "a")
	f := startOneFront(t, a)
	f.Impair(FrontLag, frontDelay)
	fc := dialFront(t, f)
	sent := time.Now()
	out, took, err := fc.call("hi")
	if err != nil || out != "a: hi\n" || took < frontDelay {
		t.Errorf("while lagging: %q, %v after %s, want a's answer after %s", out, err, took, frontDelay)
	}
	if at := <-got; at.Sub(sent) >= frontDelay {
		t.Errorf("the backend got the line %s after it was sent, want it at once", at.Sub(sent))
	}
	f.Heal()
	if out, took, err := fc.call("healed"); err != nil || out != "a: healed\n" || took >= frontDelay {
		t.Errorf("after Heal: %q, %v after %s, want a's answer at once", out, err, took)
	}
}

// A dropping front resets its open connections and each new one; after Heal connections pass.
func TestFrontDrop(t *testing.T) {
	a, _ := lineServer(t, "a")
	f := startOneFront(t, a)
	open := dialFront(t, f)
	if out, _, err := open.call("warm"); err != nil || out != "a: warm\n" {
		t.Fatalf("before the fault: %q, %v", out, err)
	}
	f.Impair(FrontDrop, 0)
	if out, _, err := open.call("hi"); err == nil || !dropped(err) {
		t.Errorf("open connection while dropping: %q, %v; want EOF or a reset", out, err)
	}
	// The reset may come before the dial returns.
	if c, err := net.Dial("tcp", f.Addr); err == nil {
		defer c.Close()
		fc := &frontConn{c: c, r: bufio.NewReader(c)}
		if out, _, err := fc.call("hi"); err == nil || !dropped(err) {
			t.Errorf("new connection while dropping: %q, %v; want EOF or a reset", out, err)
		}
	} else if !dropped(err) {
		t.Errorf("dial while dropping: %v; want it accepted, or a reset", err)
	}
	f.Heal()
	if out, _, err := dialFront(t, f).call("healed"); err != nil || out != "a: healed\n" {
		t.Errorf("after Heal: %q, %v, want a's answer", out, err)
	}
}

// dropped: err is the end of a connection the other side closed or reset (not a timeout).
func dropped(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
