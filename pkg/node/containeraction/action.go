package containeraction

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	internalapi "k8s.io/cri-api/pkg/apis"
)

// Handler is one action; exactly one field is set. Ports must be numbers (see ResolvePort).
type Handler struct {
	Exec      *corev1.ExecAction
	HTTPGet   *corev1.HTTPGetAction
	TCPSocket *corev1.TCPSocketAction
}

// Outcome is what an action returned: its output (an exec's stdout, the start of an HTTP body) and
// an HTTP GET's status code.
type Outcome struct {
	Output     string
	HTTPStatus int
}

// maxOutput bounds the output kept of an exec or an HTTP body.
const maxOutput = 1024

// Do runs h for container id of the pod at podIP until it ends or ctx does. An exec that exits
// non-zero is an error (with its stderr); an HTTP GET is not judged by its status code here.
func Do(ctx context.Context, rs internalapi.RuntimeService, id, podIP string, h Handler) (Outcome, error) {
	switch {
	case h.Exec != nil:
		timeout := time.Second
		if d, ok := ctx.Deadline(); ok {
			// CRI counts the timeout in whole seconds, 0 meaning none: never pass 0.
			timeout = max(time.Until(d).Round(time.Second), time.Second)
		}
		stdout, stderr, err := rs.ExecSync(ctx, id, h.Exec.Command, timeout)
		if err != nil {
			return Outcome{Output: trim(stdout)}, fmt.Errorf("exec %v: %w (%s)", h.Exec.Command, err, trim(stderr))
		}
		return Outcome{Output: trim(stdout)}, nil
	case h.HTTPGet != nil:
		g := h.HTTPGet
		scheme := "http"
		if g.Scheme == corev1.URISchemeHTTPS {
			scheme = "https"
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+net.JoinHostPort(host(g.Host, podIP), strconv.Itoa(g.Port.IntValue()))+g.Path, nil)
		if err != nil {
			return Outcome{}, err
		}
		for _, hd := range g.HTTPHeaders {
			if strings.EqualFold(hd.Name, "Host") {
				req.Host = hd.Value
				continue
			}
			req.Header.Add(hd.Name, hd.Value)
		}
		resp, err := client.Do(req)
		if err != nil {
			return Outcome{}, err
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxOutput))
		return Outcome{HTTPStatus: resp.StatusCode, Output: trim(body)}, nil
	case h.TCPSocket != nil:
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(host(h.TCPSocket.Host, podIP), strconv.Itoa(h.TCPSocket.Port.IntValue())))
		if err != nil {
			return Outcome{}, err
		}
		_ = conn.Close()
		return Outcome{}, nil
	}
	return Outcome{}, errors.New("no action: set exec, httpGet or tcpSocket")
}

func host(given, podIP string) string {
	if given != "" {
		return given
	}
	return podIP
}

func trim(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > maxOutput {
		s = s[:maxOutput]
	}
	return s
}

// client calls HTTP GETs without verifying the pod's certificate, as the kubelet does (the call
// targets the pod itself); it does not follow redirects. The request's context bounds each call.
var client = &http.Client{
	Transport:     &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // as the kubelet's probes and hooks
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// ResolvePort is p as a number: p itself, or the containerPort of the port named p in ports.
func ResolvePort(p intstr.IntOrString, ports []corev1.ContainerPort) (intstr.IntOrString, error) {
	if p.Type == intstr.Int {
		return p, nil
	}
	for _, cp := range ports {
		if cp.Name == p.StrVal {
			return intstr.FromInt32(cp.ContainerPort), nil
		}
	}
	return p, fmt.Errorf("no container port named %q", p.StrVal)
}
