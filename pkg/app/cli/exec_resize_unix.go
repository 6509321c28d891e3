//go:build unix

package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// watchResize calls resized each time the terminal is resized (SIGWINCH), until stop.
func watchResize(resized func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				resized()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
