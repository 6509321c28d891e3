package restarter

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/node/containeraction"
)

// stop runs c's preStop hook (a failing or cut hook does not stop the recreation, as with the
// kubelet) and stops the container through CRI with the grace period left.
func (r *Recreator) stop(ctx context.Context, crr *v1alpha1.ContainerRecreateRequest, pod *corev1.Pod, c v1alpha1.ContainerRecreateRequestContainer, cur *Container) error {
	if cur == nil || !cur.Running {
		return nil // nothing runs: the kubelet starts it again by itself
	}
	grace := int64(30)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if s := crr.Spec.Strategy; s != nil && s.TerminationGracePeriodSeconds != nil {
		grace = *s.TerminationGracePeriodSeconds
	}
	now := time.Now()
	deadline := now.Add(time.Duration(grace) * time.Second)
	if c.PreStop != nil {
		cut := r.hookDeadline(now, deadline)
		if err := r.preStop(ctx, pod, c, cur.ID, cut); err != nil {
			msg := "preStop hook failed; stopping the container anyway"
			if !time.Now().Before(cut) {
				msg = "preStop hook cut at its deadline; stopping the container anyway"
			}
			r.Log.Info(msg, "pod", pod.Name, "container", c.Name, "ran", time.Since(now).Round(time.Millisecond).String(),
				"error", err.Error())
		}
	}
	left := max(int64(time.Until(deadline).Seconds()), 0)
	if err := r.Runtime.StopContainer(ctx, cur.ID, left); err != nil {
		return fmt.Errorf("stop container %s: %w", c.Name, err)
	}
	r.Log.Info("stopped container for recreation", "pod", pod.Name, "container", c.Name, "containerID", cur.ID, "graceSeconds", left)
	return nil
}

// hookDeadline is when a preStop hook started at now is cut: at graceEnd, the end of the grace
// period, or MaxPreStop after now when that comes first.
func (r *Recreator) hookDeadline(now, graceEnd time.Time) time.Time {
	if capped := now.Add(r.MaxPreStop); r.MaxPreStop > 0 && capped.Before(graceEnd) {
		return capped
	}
	return graceEnd
}

// preStop runs the hook until it ends or deadline: an exec hook has the runtime's timeout and the
// call's context end there, an HTTP or TCP hook its context.
func (r *Recreator) preStop(ctx context.Context, pod *corev1.Pod, c v1alpha1.ContainerRecreateRequestContainer, id string, deadline time.Time) error {
	left := time.Until(deadline)
	if left <= 0 {
		return errors.New("no time left for it in the grace period")
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	h := containeraction.Handler{Exec: c.PreStop.Exec}
	if g := c.PreStop.HTTPGet; g != nil {
		port, err := containeraction.ResolvePort(g.Port, c.Ports)
		if err != nil {
			return err
		}
		h.HTTPGet = &corev1.HTTPGetAction{Path: g.Path, Port: port, Host: g.Host, Scheme: g.Scheme, HTTPHeaders: g.HTTPHeaders}
	}
	if t := c.PreStop.TCPSocket; t != nil {
		port, err := containeraction.ResolvePort(t.Port, c.Ports)
		if err != nil {
			return err
		}
		h.TCPSocket = t.DeepCopy()
		h.TCPSocket.Port = port
	}
	_, err := containeraction.Do(ctx, r.Runtime, id, pod.Status.PodIP, h)
	return err
}
