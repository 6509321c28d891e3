package crr

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
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
	h := c.PreStop
	switch {
	case h.Exec != nil:
		// CRI counts the timeout in whole seconds, 0 meaning none: never pass 0.
		timeout := max(left.Round(time.Second), time.Second)
		_, stderr, err := r.Runtime.ExecSync(ctx, id, h.Exec.Command, timeout)
		if err != nil {
			return fmt.Errorf("exec %v: %w (%s)", h.Exec.Command, err, stderr)
		}
	case h.HTTPGet != nil:
		g := h.HTTPGet
		port, err := resolvePort(g.Port, c.Ports)
		if err != nil {
			return err
		}
		host := g.Host
		if host == "" {
			host = pod.Status.PodIP
		}
		scheme := "http"
		if g.Scheme == corev1.URISchemeHTTPS {
			scheme = "https"
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+net.JoinHostPort(host, strconv.Itoa(port))+g.Path, nil)
		if err != nil {
			return err
		}
		for _, hd := range g.HTTPHeaders {
			req.Header.Add(hd.Name, hd.Value)
		}
		resp, err := hookClient.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
	case h.TCPSocket != nil:
		port, err := resolvePort(h.TCPSocket.Port, c.Ports)
		if err != nil {
			return err
		}
		host := h.TCPSocket.Host
		if host == "" {
			host = pod.Status.PodIP
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		_ = conn.Close()
	}
	return nil
}

// hookClient calls httpGet preStop hooks without verifying the pod's certificate, as the kubelet
// does (the hook targets the pod itself); it does not follow redirects. The request's context
// bounds each call.
var hookClient = &http.Client{
	Transport:     &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // as the kubelet's hooks
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func resolvePort(p intstr.IntOrString, ports []corev1.ContainerPort) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("no container port named %q", p.StrVal)
}
