package daemon

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

var workerRestarts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kruise_daemon_worker_restarts_total",
	Help: "Restarts of kruise-daemon's workers after they returned or panicked while the daemon ran."}, []string{"worker"})

// Supervisor runs the daemon's long-running workers: a worker that returns (with an error or not)
// or panics while the daemon runs is logged, with the panic's stack, and started again after a
// backoff. Healthy fails, naming the worker, while one is down or when one restarted MaxRestarts
// times within Window; the kubelet's liveness probe on /healthz then restarts the daemon.
type Supervisor struct {
	Log logr.Logger
	// Backoff is the wait before each restart; it starts over every Window.
	Backoff wait.Backoff
	// MaxRestarts within Window make the daemon unhealthy.
	MaxRestarts int
	Window      time.Duration

	mu      sync.Mutex
	workers map[string]*workerState
}

type workerState struct {
	once     bool // not restarted
	up       bool
	since    time.Time // of the last stop
	err      error     // of the last stop
	restarts []time.Time
}

// NewSupervisor has the daemon's defaults: restarts after 1 s doubling up to 1 min, unhealthy at 5
// restarts within 10 min.
func NewSupervisor(log logr.Logger) *Supervisor {
	return &Supervisor{Log: log, Backoff: wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 10, Cap: time.Minute},
		MaxRestarts: 5, Window: 10 * time.Minute}
}

// Go runs worker name until ctx ends, restarting it whenever it stops before. Each run has its own
// context, cancelled when the run ends, so what a failed run started ends with it.
func (s *Supervisor) Go(ctx context.Context, name string, run func(context.Context) error) {
	s.start(ctx, name, run, false)
}

// GoOnce runs worker name, one that cannot be started twice (an informer cache): when it stops
// before ctx ends it stays down and Healthy fails until the daemon is restarted.
func (s *Supervisor) GoOnce(ctx context.Context, name string, run func(context.Context) error) {
	s.start(ctx, name, run, true)
}

func (s *Supervisor) start(ctx context.Context, name string, run func(context.Context) error, once bool) {
	s.mu.Lock()
	if s.workers == nil {
		s.workers = map[string]*workerState{}
	}
	w := &workerState{once: once, up: true}
	s.workers[name] = w
	s.mu.Unlock()
	workerRestarts.WithLabelValues(name).Add(0)
	delay := s.Backoff.DelayWithReset(clock.RealClock{}, s.Window)
	go func() {
		for {
			err := s.runOnce(ctx, name, run)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				err = errors.New("returned while the daemon runs")
			}
			s.mu.Lock()
			w.up, w.since, w.err = false, time.Now(), err
			s.mu.Unlock()
			if once {
				s.Log.Error(err, "worker stopped; it cannot be restarted, /healthz fails", "worker", name)
				return
			}
			after := delay()
			s.Log.Error(err, "worker stopped; restarting it", "worker", name, "after", after.String())
			select {
			case <-ctx.Done():
				return
			case <-time.After(after):
			}
			now := time.Now()
			s.mu.Lock()
			w.up = true
			w.restarts = append(recent(w.restarts, now, s.Window), now)
			s.mu.Unlock()
			workerRestarts.WithLabelValues(name).Inc()
		}
	}()
}

// runOnce runs the worker once; a panic is logged with its stack and returned as an error.
func (s *Supervisor) runOnce(ctx context.Context, name string, run func(context.Context) error) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
			s.Log.Error(err, "worker panicked", "worker", name, "stack", string(debug.Stack()))
		}
	}()
	return run(ctx)
}

// Healthy is nil when every worker runs and none restarted too often; else it names the workers.
func (s *Supervisor) Healthy() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(s.workers)) {
		w := s.workers[name]
		w.restarts = recent(w.restarts, now, s.Window)
		switch {
		case !w.up && w.once:
			errs = append(errs, fmt.Errorf("worker %s stopped %s ago and cannot be restarted: %w", name, now.Sub(w.since).Round(time.Second), w.err))
		case !w.up:
			errs = append(errs, fmt.Errorf("worker %s is down for %s, restarting: %w", name, now.Sub(w.since).Round(time.Second), w.err))
		case s.MaxRestarts > 0 && len(w.restarts) >= s.MaxRestarts:
			errs = append(errs, fmt.Errorf("worker %s restarted %d times in %s, last after: %w", name, len(w.restarts), s.Window, w.err))
		}
	}
	return errors.Join(errs...)
}

// healthz answers "ok" when every check passes, else 503 "unhealthy": it is served to anyone on
// the host network, so the first failure goes to log only (it names workers, the runtime and
// their errors).
func healthz(log logr.Logger, checks ...func(*http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for _, check := range checks {
			if err := check(r); err != nil {
				log.Error(err, "unhealthy")
				http.Error(w, "unhealthy", http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintln(w, "ok")
	}
}

// recent drops the times older than window before now.
func recent(ts []time.Time, now time.Time, window time.Duration) []time.Time {
	return slices.DeleteFunc(ts, func(t time.Time) bool { return now.Sub(t) > window })
}
