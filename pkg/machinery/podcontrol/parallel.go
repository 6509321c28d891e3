package podcontrol

import (
	"errors"
	"sync"
)

// WriteParallelism bounds the pod writes one reconcile issues at once: the actions of a plan are
// independent of each other, and a rollout step should take one API round trip, not one per pod.
// 64, as the bench's floor keeps in flight: at 16, taking 500 pods out at once took several
// seconds of round trips on a loaded API server (maxUnavailable 100%: 1.2–1.46 × the floor; at 64,
// 0.88–1.09; docs/development.md).
const WriteParallelism = 64

// Parallel runs write for every item, at most WriteParallelism at a time, and joins the errors.
func Parallel[T any](items []T, write func(T) error) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, WriteParallelism)
	)
	for _, it := range items {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := write(it); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// SlowStart runs write for the items in batches of 1, 2, 4, … (each batch at most
// WriteParallelism at a time), as the Kubernetes workload controllers create pods, and stops after
// the first batch with an error: when every create is refused (a ResourceQuota, an admission
// webhook) one reconcile sends one request and emits one event, not one per missing pod. The items
// not attempted are planned again on the next reconcile.
func SlowStart[T any](items []T, write func(T) error) error {
	for size := 1; len(items) > 0; size *= 2 {
		n := min(size, len(items))
		if err := Parallel(items[:n], write); err != nil {
			return err
		}
		items = items[n:]
	}
	return nil
}
