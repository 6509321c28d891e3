package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/app/manager"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

// Config says what the demo runs.
type Config struct {
	// Sandbox is the sandbox to start; the demo runs Kruise in it.
	Sandbox sandbox.Config
	// Replicas is the CloneSet's size (50), Canary the pods the partition lets update first (5).
	Replicas, Canary int32
	// MaxUnavailable is the CloneSet's updateStrategy.maxUnavailable ("20%").
	MaxUnavailable string
	// CanaryCheck is how long the updated canary pods must stay ready before the rest follows.
	CanaryCheck time.Duration
	// Out receives the progress and the summary; Live redraws one progress line in place (a
	// terminal) instead of printing a line per change.
	Out  io.Writer
	Live bool
	// Explore is printed after the summary: how to use and tear down the cluster.
	Explore func(*sandbox.Sandbox) string
	// Timeout bounds the rollout (after the sandbox is up).
	Timeout time.Duration
}

// Run starts the sandbox and runs the demo. It returns the running sandbox and the summary. When
// anything fails after the sandbox started, Run tears it down and says so.
func Run(ctx context.Context, cfg Config) (*sandbox.Sandbox, *Summary, error) {
	if cfg.Replicas < 1 || cfg.Canary < 1 || cfg.Canary >= cfg.Replicas {
		return nil, nil, fmt.Errorf("the demo needs 0 < canary (%d) < replicas (%d)", cfg.Canary, cfg.Replicas)
	}
	if cfg.Sandbox.KruiseManager == "" {
		return nil, nil, errors.New("the demo runs Kruise: name the kruise-manager binary")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Minute
	}
	fmt.Fprintf(cfg.Out, "Starting a sandbox in %s: etcd, kube-apiserver, controllers, %d kwok node(s)%s and kruise-manager\n",
		cfg.Sandbox.Dir, cfg.Sandbox.Nodes, map[bool]string{true: ", the real node (containerd + kubelet) with kruise-daemon"}[cfg.Sandbox.RealNode])
	t0 := time.Now()
	sb, err := sandbox.Up(ctx, cfg.Sandbox)
	if err != nil {
		return nil, nil, fmt.Errorf("start the sandbox: %w", err)
	}
	fmt.Fprintf(cfg.Out, "Sandbox up in %.1fs (API server %s)\n\n", time.Since(t0).Seconds(), sb.Server())
	sum, err := runRollout(ctx, cfg, sb)
	if err != nil {
		if derr := sb.Down(); derr != nil {
			return nil, nil, fmt.Errorf("%w (and tearing the sandbox down: %v)", err, derr)
		}
		return nil, nil, fmt.Errorf("%w; the sandbox in %s was torn down", err, sb.Dir)
	}
	sum.Write(cfg.Out)
	if cfg.Explore != nil {
		fmt.Fprint(cfg.Out, cfg.Explore(sb))
	}
	return sb, sum, nil
}

func runRollout(ctx context.Context, cfg Config, sb *sandbox.Sandbox) (*Summary, error) {
	rc, err := sb.RESTConfig()
	if err != nil {
		return nil, err
	}
	rc.QPS, rc.Burst = 50, 100
	scheme, err := manager.NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	images := [2]string{"demo:v1", "demo:v2"}
	if sb.RealNode != nil {
		images = [2]string{sb.Image("app:v1"), sb.Image("app:v2")}
	}
	r := &rollout{c: c, cfg: cfg, images: images, view: newView(cfg.Out, cfg.Live)}
	return r.run(ctx)
}
