package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"testing"
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
