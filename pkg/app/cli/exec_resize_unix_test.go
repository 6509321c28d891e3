//go:build unix

package cli

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// A SIGWINCH (the terminal resized) is passed on until the watch stops.
func TestWatchResize(t *testing.T) {
	resized := make(chan struct{}, 4)
	stop := watchResize(func() { resized <- struct{}{} })
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGWINCH); err != nil {
		t.Fatal(err)
	}
	select {
	case <-resized:
	case <-time.After(5 * time.Second):
		t.Fatal("SIGWINCH not passed on")
	}
}
