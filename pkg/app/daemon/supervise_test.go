package daemon

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/util/wait"
)

func testSupervisor(backoff time.Duration, log logr.Logger) *Supervisor {
	return &Supervisor{Log: log, Backoff: wait.Backoff{Duration: backoff}, MaxRestarts: 3, Window: time.Minute}
}

func restarts(t *testing.T, worker string) float64 {
	t.Helper()
	m := &dto.Metric{}
	if err := workerRestarts.WithLabelValues(worker).Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("not within 5s: %s", what)
}

func healthErr(s *Supervisor) string {
	if err := s.Healthy(); err != nil {
		return err.Error()
	}
	return ""
}

// A worker that panics is logged with its stack, /healthz fails while it is down, and it is
// started again.
func TestSupervisorRestartsAPanickingWorker(t *testing.T) {
	var mu sync.Mutex
	var logs []string
	log := funcr.New(func(prefix, args string) { mu.Lock(); logs = append(logs, args); mu.Unlock() }, funcr.Options{})
	s := testSupervisor(300*time.Millisecond, log)
	runs := make(chan int32, 10)
	var n atomic.Int32
	before := restarts(t, "panicky") // the metric is global: count from here
	s.Go(t.Context(), "panicky", func(ctx context.Context) error {
		i := n.Add(1)
		runs <- i
		if i == 1 {
			panic("boom")
		}
		<-ctx.Done()
		return nil
	})
	<-runs
	eventually(t, "healthz fails naming the worker", func() bool {
		h := healthErr(s)
		return strings.Contains(h, "worker panicky is down") && strings.Contains(h, "panic: boom")
	})
	select {
	case <-runs:
	case <-time.After(5 * time.Second):
		t.Fatal("the worker was not restarted")
	}
	if h := healthErr(s); h != "" {
		t.Errorf("healthz after the restart: %s", h)
	}
	if got := restarts(t, "panicky") - before; got != 1 {
		t.Errorf("kruise_daemon_worker_restarts_total{worker=panicky} = %v, want 1", got)
	}
	mu.Lock()
	defer mu.Unlock()
	joined := strings.Join(logs, "\n")
	if !strings.Contains(joined, "worker panicked") || !strings.Contains(joined, "supervise_test.go") {
		t.Errorf("the panic was not logged with its stack:\n%s", joined)
	}
}

// A worker that keeps returning is restarted each time; MaxRestarts within the window fail
// /healthz even once it runs again. What a failed run started is cancelled with it.
func TestSupervisorUnhealthyWhenAWorkerKeepsFailing(t *testing.T) {
	s := testSupervisor(time.Millisecond, logr.Discard())
	var n atomic.Int32
	firstCtx := make(chan context.Context, 1)
	up := make(chan struct{})
	before := restarts(t, "flaky")
	s.Go(t.Context(), "flaky", func(ctx context.Context) error {
		switch n.Add(1) {
		case 1:
			firstCtx <- ctx
			return nil // returning without an error while the daemon runs is a failure too
		case 2, 3, 4:
			return errors.New("no luck")
		}
		close(up)
		<-ctx.Done()
		return nil
	})
	if ctx := <-firstCtx; ctx.Err() == nil {
		t.Error("the context of a failed run was not cancelled")
	}
	<-up
	eventually(t, "healthz names the restarts", func() bool {
		return strings.Contains(healthErr(s), "worker flaky restarted 4 times in 1m0s, last after: no luck")
	})
	if got := restarts(t, "flaky") - before; got != 4 {
		t.Errorf("restarts metric %v, want 4", got)
	}
	s.Window = time.Nanosecond // the restarts age out
	if h := healthErr(s); h != "" {
		t.Errorf("healthz with the restarts out of the window: %s", h)
	}
}

// A worker that cannot be restarted fails /healthz for good once it stops; one stopped by the
// daemon's end is neither restarted nor a failure.
func TestSupervisorOnceAndShutdown(t *testing.T) {
	s := testSupervisor(time.Millisecond, logr.Discard())
	var onceRuns atomic.Int32
	s.GoOnce(t.Context(), "cache", func(context.Context) error {
		onceRuns.Add(1)
		return errors.New("informer already started")
	})
	eventually(t, "healthz names the stopped worker", func() bool {
		return strings.Contains(healthErr(s), "worker cache stopped") && strings.Contains(healthErr(s), "cannot be restarted: informer already started")
	})
	rec := httptest.NewRecorder()
	var logged strings.Builder
	hlog := funcr.New(func(_, args string) { logged.WriteString(args) }, funcr.Options{})
	healthz(hlog, func(*http.Request) error { return nil }, func(*http.Request) error { return s.Healthy() })(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	// /healthz is open to the host network: the reason is logged, never answered.
	if rec.Code != http.StatusServiceUnavailable || rec.Body.String() != "unhealthy\n" {
		t.Errorf("/healthz answered %d %q, want 503 \"unhealthy\" only", rec.Code, rec.Body.String())
	}
	if !strings.Contains(logged.String(), "worker cache stopped") {
		t.Errorf("the reason was not logged: %q", logged.String())
	}
	time.Sleep(20 * time.Millisecond)
	if got := onceRuns.Load(); got != 1 {
		t.Errorf("a GoOnce worker ran %d times", got)
	}

	s = testSupervisor(time.Millisecond, logr.Discard())
	ctx, cancel := context.WithCancel(t.Context())
	var runs atomic.Int32
	stopped := make(chan struct{})
	before := restarts(t, "steady")
	s.Go(ctx, "steady", func(ctx context.Context) error {
		runs.Add(1)
		<-ctx.Done()
		close(stopped)
		return ctx.Err()
	})
	cancel()
	<-stopped
	time.Sleep(20 * time.Millisecond)
	if runs.Load() != 1 || healthErr(s) != "" || restarts(t, "steady") != before {
		t.Errorf("after the daemon's end: %d runs, healthz %q", runs.Load(), healthErr(s))
	}
	rec = httptest.NewRecorder()
	healthz(logr.Discard(), func(*http.Request) error { return s.Healthy() })(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != "ok\n" {
		t.Errorf("/healthz answered %d %q", rec.Code, rec.Body.String())
	}
}
