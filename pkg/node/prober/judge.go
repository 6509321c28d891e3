package prober

import (
	"fmt"
	"net/http"
	"time"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/node/containeraction"
)

// Result is one run of a probe.
type Result int

// The results of a run.
const (
	// Skipped: not run (the container is not running yet, or its initial delay has not passed).
	Skipped Result = iota
	Succeeded
	Failed
	// Missing: the pod has no such container in the runtime; counted as a failure, reported.
	Missing
)

func (r Result) String() string {
	return [...]string{"skipped", "succeeded", "failed", "container_missing"}[r]
}

// Judge is the result of an action's outcome and error, with the message kept in the status.
func Judge(h containeraction.Handler, out containeraction.Outcome, err error) (Result, string) {
	switch {
	case err != nil:
		return Failed, err.Error()
	case h.HTTPGet != nil && (out.HTTPStatus < http.StatusOK || out.HTTPStatus >= http.StatusBadRequest):
		return Failed, fmt.Sprintf("HTTP probe failed with statuscode: %d", out.HTTPStatus)
	case h.HTTPGet != nil:
		return Succeeded, ""
	}
	return Succeeded, out.Output
}

// Counter applies a probe's thresholds to its results: a state is reached after successThreshold
// successes or failureThreshold failures in a row (each at least 1), as the kubelet counts.
type Counter struct {
	last Result
	run  int32
}

// Add counts r and returns the state it reaches, or "" while below its threshold.
func (c *Counter) Add(r Result, spec *v1alpha1.PodProbeMarkerProbeSpec) v1alpha1.PodProbeMarkerState {
	if r == Skipped {
		return ""
	}
	ok := r == Succeeded
	if c.run > 0 && (c.last == Succeeded) == ok {
		c.run++
	} else {
		c.run = 1
	}
	c.last = r
	if ok && c.run >= max(spec.SuccessThreshold, 1) {
		return v1alpha1.PodProbeMarkerStateSucceeded
	}
	if !ok && c.run >= max(spec.FailureThreshold, 1) {
		return v1alpha1.PodProbeMarkerStateFailed
	}
	return ""
}

// Due reports whether a probe may run on a container started at started: its initial delay passed.
func Due(spec *v1alpha1.PodProbeMarkerProbeSpec, started, now time.Time) bool {
	return !now.Before(started.Add(time.Duration(spec.InitialDelaySeconds) * time.Second))
}
