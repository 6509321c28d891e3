package freeport

import (
	"net"
	"strconv"
	"testing"
)

// Ports are picked below the kernel's ephemeral range, where no outgoing connection takes them,
// and are free: each can be listened on.
func TestPickOutsideTheEphemeralRange(t *testing.T) {
	hi := ephemeralStart()
	for range 20 {
		port, err := Pick()
		if err != nil {
			t.Fatal(err)
		}
		if hi-lowest >= 1000 && (port < lowest || port >= hi) {
			t.Fatalf("port %d, want one in [%d, %d)", port, lowest, hi)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		l.Close()
	}
}
