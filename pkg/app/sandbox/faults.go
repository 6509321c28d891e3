package sandbox

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// Faults a sandbox can inject into its own processes, for fault campaigns (test/soak): each acts
// only on a process the sandbox started (by PID and start time), and returns once the component is
// back (ready as at start), so the caller knows when the fault ended.

// RestartAPIServer kills kube-apiserver (SIGKILL: no graceful drain) and starts it again with the
// same flags; it returns once it answers /readyz.
func (s *Sandbox) RestartAPIServer(ctx context.Context) error {
	return s.restartProcess(ctx, "kube-apiserver", "killed", (*Process).Kill, sameArgs, s.waitAPIServerReady)
}

// ReviveKruiseManager starts kruise-manager again, with the same flags, if it has exited (it
// exits when it loses its leader election, as every controller-runtime manager does; in a cluster
// its pod's restart policy brings it back); it returns whether it did, once the manager is ready.
func (s *Sandbox) ReviveKruiseManager(ctx context.Context) (bool, error) {
	for _, p := range s.Processes {
		if p.Name == "kruise-manager" && p.Alive() {
			return false, nil
		}
	}
	return true, s.restartKruise(ctx, "exited; starting again", func(*Process) error { return nil }, sameArgs)
}

// ReviveControlPlane starts kube-controller-manager and kube-scheduler again if they have exited
// (each exits when it loses its leader election, as a restarted or frozen API server or etcd can
// make it: in a cluster its static pod restarts), with the same flags; it returns the ones it
// started, once they serve again.
func (s *Sandbox) ReviveControlPlane(ctx context.Context) ([]string, error) {
	var started []string
	for _, c := range []struct {
		name string
		port int
	}{{"kube-controller-manager", s.Ports.ControllerManager}, {"kube-scheduler", s.Ports.Scheduler}} {
		alive := false
		for _, p := range s.Processes {
			alive = alive || (p.Name == c.name && p.Alive())
		}
		if alive {
			continue
		}
		started = append(started, c.name)
		if err := s.restartProcess(ctx, c.name, "exited; starting again", func(*Process) error { return nil }, sameArgs, s.healthy(c.name, c.port)); err != nil {
			return started, err
		}
	}
	return started, nil
}

// RestartControllerManager kills kube-controller-manager and starts it again with the same flags;
// it returns once it serves again. Its garbage collector then builds its graph from a fresh list:
// the remedy, in a cluster too, for a graph gone stale (an object deleted and created again under
// its name while the collector's watch was away keeps its old UID in the graph, and orphaning its
// owner's dependents fails for good: "metadata.uid: field is immutable").
func (s *Sandbox) RestartControllerManager(ctx context.Context) error {
	return s.restartProcess(ctx, "kube-controller-manager", "killed", (*Process).Kill, sameArgs, s.healthy("kube-controller-manager", s.Ports.ControllerManager))
}

// healthy waits for the control-plane component name to answer /healthz on port.
func (s *Sandbox) healthy(name string, port int) func(context.Context) error {
	return func(ctx context.Context) error {
		return s.waitFor(ctx, name+" healthy", func(ctx context.Context) (bool, error) {
			return httpOK(ctx, url("https", port)+"/healthz", "ok"), nil
		})
	}
}

// RestartKwok kills kwok (the kwok nodes' simulated kubelets) and starts it again; it returns once
// it serves again (its own /healthz).
func (s *Sandbox) RestartKwok(ctx context.Context) error {
	return s.restartProcess(ctx, "kwok", "killed", (*Process).Kill, sameArgs, func(ctx context.Context) error {
		return s.waitFor(ctx, "kwok healthy", func(ctx context.Context) (bool, error) {
			return httpOK(ctx, url("http", s.Ports.Kwok)+"/healthz", "ok"), nil
		})
	})
}

// Freeze stops the sandbox's process name (SIGSTOP) for d, as a stalled process or a VM pause
// would, then lets it go on (SIGCONT). It returns when the process runs again; ctx ending early
// resumes it at once.
func (s *Sandbox) Freeze(ctx context.Context, name string, d time.Duration) error {
	for _, p := range s.Processes {
		if p.Name != name {
			continue
		}
		if !p.Alive() {
			return fmt.Errorf("%s (pid %d) is not running", name, p.PID)
		}
		if err := syscall.Kill(p.PID, syscall.SIGSTOP); err != nil {
			return fmt.Errorf("freeze %s (pid %d): %w", name, p.PID, err)
		}
		s.logf("froze %s (pid %d) for %s", name, p.PID, d)
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		if err := syscall.Kill(p.PID, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("resume %s (pid %d): %w", name, p.PID, err)
		}
		return nil
	}
	return fmt.Errorf("no %s runs in sandbox %s", name, s.Dir)
}

func sameArgs(args []string) []string { return args }
