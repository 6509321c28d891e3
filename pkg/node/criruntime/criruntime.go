package criruntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remote "k8s.io/cri-client/pkg"
)

// Candidates are the endpoints auto-detection tries, in order: containerd's and CRI-O's sockets.
var Candidates = []string{
	"unix:///run/containerd/containerd.sock",
	"unix:///var/run/containerd/containerd.sock",
	"unix:///run/crio/crio.sock",
	"unix:///var/run/crio/crio.sock",
}

// Runtime is a connected container runtime.
type Runtime struct {
	// Endpoint is the CRI endpoint it answered on.
	Endpoint string
	// Name, Version and APIVersion are what the runtime reported (e.g. containerd, v2.4.2, v1).
	Name, Version, APIVersion string
	Runtime                   internalapi.RuntimeService
	Images                    internalapi.ImageManagerService
}

// String describes the runtime for logs.
func (r *Runtime) String() string {
	return fmt.Sprintf("%s %s (CRI %s) at %s", r.Name, r.Version, r.APIVersion, r.Endpoint)
}

// Connect connects to endpoint, or, when it is empty, to the first of Candidates whose socket
// exists and whose runtime answers. The error names every endpoint tried and why it failed.
func Connect(ctx context.Context, endpoint string, timeout time.Duration) (*Runtime, error) {
	tries := []string{endpoint}
	if endpoint == "" {
		tries = nil
		for _, c := range Candidates {
			if _, err := os.Stat(strings.TrimPrefix(c, "unix://")); err == nil {
				tries = append(tries, c)
			}
		}
		if len(tries) == 0 {
			return nil, fmt.Errorf("no container runtime socket found (tried %s); give one with --runtime-endpoint",
				strings.Join(Candidates, ", "))
		}
	}
	var errs []error
	for _, ep := range tries {
		r, err := connect(ctx, ep, timeout)
		if err == nil {
			return r, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", ep, err))
	}
	return nil, fmt.Errorf("no container runtime answered: %w", errors.Join(errs...))
}

func connect(ctx context.Context, endpoint string, timeout time.Duration) (*Runtime, error) {
	rs, err := remote.NewRemoteRuntimeServiceBuilder().WithEndpoint(endpoint).WithConnectionTimeout(timeout).Build(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := rs.Version(ctx, "v1")
	if err != nil {
		return nil, err
	}
	is, err := remote.NewRemoteImageServiceBuilder().WithEndpoint(endpoint).WithConnectionTimeout(timeout).Build(ctx)
	if err != nil {
		return nil, err
	}
	return &Runtime{Endpoint: endpoint, Name: v.RuntimeName, Version: v.RuntimeVersion, APIVersion: v.RuntimeApiVersion,
		Runtime: rs, Images: is}, nil
}

// Healthy reports whether the runtime answers within timeout.
func (r *Runtime) Healthy(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := r.Runtime.Version(ctx, "v1")
	return err
}

// The kubelet's labels on the containers it creates.
const (
	PodUIDLabel        = "io.kubernetes.pod.uid"
	ContainerNameLabel = "io.kubernetes.container.name"
)

// Container is what kruise-daemon needs of a pod's container in the runtime.
type Container struct {
	ID      string
	Running bool
	// Started is when a running container started.
	Started time.Time
}

// Newest is the runtime's newest container named name in pod uid (the kubelet's labels), or nil.
func Newest(ctx context.Context, rs internalapi.RuntimeService, uid, name string) (*Container, error) {
	list, err := rs.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{PodUIDLabel: uid, ContainerNameLabel: name}})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	var best *runtimeapi.Container
	for _, c := range list {
		if best == nil || c.CreatedAt > best.CreatedAt {
			best = c
		}
	}
	if best == nil {
		return nil, nil
	}
	out := &Container{ID: best.Id, Running: best.State == runtimeapi.ContainerState_CONTAINER_RUNNING}
	if out.Running {
		st, err := rs.ContainerStatus(ctx, best.Id, false)
		if err != nil {
			return nil, fmt.Errorf("container status: %w", err)
		}
		out.Started = time.Unix(0, st.GetStatus().GetStartedAt())
	}
	return out, nil
}
