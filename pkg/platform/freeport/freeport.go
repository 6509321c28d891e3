package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// lowest is the lowest port picked: below it are well-known and registered services.
const lowest = 10000

// rangeFile holds the kernel's ephemeral port range.
const rangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// Listen listens on a free loopback port outside the ephemeral range (on ":0" where the range
// leaves no room below it); the caller closes the listener before starting what uses its port.
func Listen() (net.Listener, error) {
	if hi := ephemeralStart(); hi-lowest >= 1000 {
		for range 50 {
			if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", lowest+rand.IntN(hi-lowest))); err == nil {
				return l, nil
			}
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

// Pick returns a loopback port free right now (Listen).
func Pick() (int, error) {
	l, err := Listen()
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralStart is the first port of the kernel's ephemeral range (0 when unknown).
func ephemeralStart() int {
	data, err := os.ReadFile(rangeFile)
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return 0
	}
	lo, err := strconv.Atoi(fields[0])
	if err != nil {
		return 0
	}
	return lo
}
