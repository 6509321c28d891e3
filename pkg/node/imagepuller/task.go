package imagepuller

import (
	"context"
	"errors"
	"fmt"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// ImageService is the part of the CRI image service the puller uses.
type ImageService interface {
	ImageStatus(ctx context.Context, image *runtimeapi.ImageSpec, verbose bool) (*runtimeapi.ImageStatusResponse, error)
	PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, sandbox *runtimeapi.PodSandboxConfig) (string, error)
}

// Defaults of a tag's pull policy when the NodeImage leaves them unset (its defaulting webhook
// normally fills them in).
const (
	DefaultTimeoutSeconds = 600
	DefaultBackoffLimit   = 3
)

// Backoff is the wait before retry n (1-based) of a failed pull: 1 s doubling up to MaxBackoff.
func Backoff(n int) time.Duration {
	d := time.Second << min(n-1, 10)
	return min(d, MaxBackoff)
}

// MaxBackoff bounds the wait between two attempts.
var MaxBackoff = 30 * time.Second

// state is what the node reports about one pull task.
type state struct {
	Phase       v1beta1.NodeImagePullPhase
	Progress    int32
	Start, Done time.Time
	ImageID     string
	Message     string
	Version     int64
}

// finished reports whether the task ended (successfully or not).
func (s state) finished() bool {
	return s.Phase == v1beta1.NodeImagePullSucceeded || s.Phase == v1beta1.NodeImagePullFailed
}

// job is one pull: an image reference, how to pull it, and the credentials to try.
type job struct {
	Ref     string
	Policy  v1beta1.NodeImageTagPullPolicy
	Always  bool
	Sandbox *v1beta1.ImagePullJobSandboxConfig
	Auths   func(ctx context.Context) ([]*runtimeapi.AuthConfig, error)
	Start   time.Time // the task's start when a previous daemon began it; zero: now
	Acquire func(ctx context.Context) (release func(), err error)
	Report  func(state)
	Initial state // carries the spec version
}

// run performs j until it succeeds, fails for good (backoff limit, active deadline) or ctx ends
// (the spec changed or the daemon stops); it reports each change of state through j.Report.
func (j *job) run(ctx context.Context, images ImageService) {
	st := j.Initial
	st.Phase, st.Message = v1beta1.NodeImagePullWaiting, ""
	j.Report(st)
	release, err := j.Acquire(ctx)
	if err != nil {
		return // cancelled while waiting for a worker
	}
	defer release()
	st.Phase, st.Start = v1beta1.NodeImagePullPulling, j.Start
	if st.Start.IsZero() {
		st.Start = time.Now()
	}
	j.Report(st)
	timeout := time.Duration(DefaultTimeoutSeconds) * time.Second
	if j.Policy.TimeoutSeconds != nil && *j.Policy.TimeoutSeconds > 0 {
		timeout = time.Duration(*j.Policy.TimeoutSeconds) * time.Second
	}
	backoffLimit := DefaultBackoffLimit
	if j.Policy.BackoffLimit != nil {
		backoffLimit = int(*j.Policy.BackoffLimit)
	}
	var deadline time.Time
	if j.Policy.ActiveDeadlineSeconds != nil {
		deadline = st.Start.Add(time.Duration(*j.Policy.ActiveDeadlineSeconds) * time.Second)
	}
	fail := func(msg string) {
		st.Phase, st.Done, st.Message = v1beta1.NodeImagePullFailed, time.Now(), msg
		j.Report(st)
	}
	for attempt := 1; ; attempt++ {
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			fail(fmt.Sprintf("not pulled within activeDeadlineSeconds %d", *j.Policy.ActiveDeadlineSeconds))
			return
		}
		actx, cancel := context.WithTimeout(ctx, timeout)
		if !deadline.IsZero() {
			actx, cancel = context.WithDeadline(actx, deadline)
		}
		id, err := j.pull(actx, images)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			st.Phase, st.Progress, st.ImageID, st.Done, st.Message = v1beta1.NodeImagePullSucceeded, 100, id, time.Now(), ""
			if attempt > 1 {
				st.Message = fmt.Sprintf("pulled after %d attempts", attempt)
			}
			j.Report(st)
			return
		}
		if errors.Is(err, context.DeadlineExceeded) && actx.Err() != nil {
			err = fmt.Errorf("attempt timed out after %s", timeout)
		}
		if attempt > backoffLimit {
			fail(fmt.Sprintf("failed %d times (backoffLimit %d): %v", attempt, backoffLimit, err))
			return
		}
		wait := Backoff(attempt)
		st.Message = fmt.Sprintf("attempt %d failed, retrying in %s: %v", attempt, wait, err)
		j.Report(st)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// pull makes one attempt: nothing when the image is present and the policy allows it, else a pull
// with each candidate credential in turn (anonymous when there is none). It returns the image ID.
func (j *job) pull(ctx context.Context, images ImageService) (string, error) {
	spec := &runtimeapi.ImageSpec{Image: j.Ref, UserSpecifiedImage: j.Ref}
	if !j.Always {
		st, err := images.ImageStatus(ctx, spec, false)
		if err != nil {
			return "", fmt.Errorf("image status: %w", err)
		}
		if st.GetImage() != nil {
			return st.GetImage().GetId(), nil
		}
	}
	auths, err := j.Auths(ctx)
	if err != nil {
		return "", err
	}
	if len(auths) == 0 {
		auths = []*runtimeapi.AuthConfig{nil}
	}
	var sandbox *runtimeapi.PodSandboxConfig
	if j.Sandbox != nil {
		sandbox = &runtimeapi.PodSandboxConfig{Labels: j.Sandbox.Labels, Annotations: j.Sandbox.Annotations}
	}
	var errs []error
	for _, a := range auths {
		id, err := images.PullImage(ctx, spec, a, sandbox)
		if err == nil {
			return id, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return "", errors.Join(errs...)
}
