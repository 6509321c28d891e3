package harness

import (
	"sync"
	"testing"
	"time"

	"github.com/kruise-ng/kruise/pkg/platform/freeport"
)

// Eventually polls cond until it reports true or timeout passes. cond returns what it observed;
// on timeout the test fails with the last observation, so a failure says what the cluster did.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var seen string
	for {
		var ok bool
		ok, seen = cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last observed: %s", timeout, what, seen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Consistently checks that cond holds on every poll for the whole duration; it fails as soon as
// cond reports false, with what it observed.
func Consistently(t testing.TB, duration time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(duration)
	for time.Now().Before(deadline) {
		if ok, seen := cond(); !ok {
			t.Fatalf("expected %s to hold for %s; it broke: %s", what, duration, seen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// FreePort is a loopback TCP port free at the time of the call, outside the kernel's ephemeral
// range (pkg/platform/freeport): no client connection takes it before the test listens on it.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := freeport.Pick()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// Every calls f every interval, in the background, until stop is called; stop returns once the
// call under way has ended (stopping twice is fine).
func Every(interval time.Duration, f func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(interval):
			}
			f()
		}
	})
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}
