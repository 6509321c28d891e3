package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kruise-ng/kruise/pkg/platform/freeport"
)

// ManagerReplica is one kruise-manager process of the sandbox and where it serves.
type ManagerReplica struct {
	// Name is its process name (kruise-manager, kruise-manager-1) and its --replica-name.
	Name                                string
	WebhookPort, ProbePort, MetricsPort int
	pprofPort                           int
	certDir                             string
	// sb scrapes its metrics (Leads).
	sb *Sandbox
}

// AddKruiseManagerReplica runs a second kruise-manager next to the sandbox's, as a cluster runs two
// replicas behind the webhook Service: a Front in this process (it lives as long as the caller:
// tests) takes the webhook calls and passes each to a replica that accepts; the first replica is
// restarted to register the Front's URL, and both serve the webhooks while one leads. It returns
// the replicas and the Front.
func (s *Sandbox) AddKruiseManagerReplica(ctx context.Context) ([]ManagerReplica, *Front, error) {
	var first *Process
	for _, p := range s.Processes {
		if p.Name == "kruise-manager" {
			first = p
		}
	}
	if first == nil {
		return nil, nil, fmt.Errorf("no kruise-manager runs in sandbox %s", s.Dir)
	}
	ports, err := freePorts(4)
	if err != nil {
		return nil, nil, err
	}
	replicas := []ManagerReplica{
		{Name: "kruise-manager", WebhookPort: s.Ports.KruiseWebhook, ProbePort: s.Ports.KruiseProbe, MetricsPort: s.Ports.KruiseMetrics, sb: s},
		{Name: "kruise-manager-1", WebhookPort: ports[0], ProbePort: ports[1], MetricsPort: ports[2], pprofPort: ports[3],
			certDir: filepath.Join(s.Dir, kruiseDir, "webhook-certs-1"), sb: s},
	}
	front, err := StartFront(ctx, "127.0.0.1:0", fmt.Sprintf("127.0.0.1:%d", replicas[0].WebhookPort), fmt.Sprintf("127.0.0.1:%d", replicas[1].WebhookPort))
	if err != nil {
		return nil, nil, err
	}
	withURLPort := webhookURLPort(front.Port())
	if err := s.restartKruiseBehind(ctx, withURLPort); err != nil {
		_ = front.Close()
		return nil, nil, err
	}
	second := replicas[1]
	args := withURLPort(nil)
	for _, a := range first.Args {
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--webhook-port":
			a = name + "=" + strconv.Itoa(second.WebhookPort)
		case "--health-probe-bind-address":
			a = name + "=127.0.0.1:" + strconv.Itoa(second.ProbePort)
		case "--metrics-bind-address":
			a = name + "=127.0.0.1:" + strconv.Itoa(second.MetricsPort)
		case "--pprof-bind-address":
			a = name + "=127.0.0.1:" + strconv.Itoa(second.pprofPort)
		case "--webhook-cert-dir":
			a = name + "=" + second.certDir
		case "--webhook-url-port", "--replica-name":
			continue
		}
		args = append(args, a)
	}
	args = append(args, "--replica-name="+second.Name)
	if _, err := s.run(second.Name, first.Binary, args, first.Env); err != nil {
		_ = front.Close()
		return nil, nil, err
	}
	if err := s.waitFor(ctx, second.Name+" ready", func(ctx context.Context) (bool, error) {
		if !httpOK(ctx, url("http", second.ProbePort)+"/readyz", "ok") {
			return false, nil
		}
		code, _, err := GetMetrics(ctx, second.MetricsPort, "") // its metrics answer (401) too
		return err == nil && code != 0, nil
	}); err != nil {
		_ = front.Close()
		return nil, nil, err
	}
	return replicas, front, nil
}

// KillKruiseManagerReplica kills the replica's process with SIGKILL, as a node failure would, and
// does not start it again.
func (s *Sandbox) KillKruiseManagerReplica(r ManagerReplica) error {
	for _, p := range s.Processes {
		if p.Name == r.Name {
			s.logf("killing %s (pid %d)", p.Name, p.PID)
			return p.Kill()
		}
	}
	return fmt.Errorf("no %s runs in sandbox %s", r.Name, s.Dir)
}

// ScrapeMetrics reads the replica's /metrics as its sandbox's MetricsScraper.
func (r ManagerReplica) ScrapeMetrics(ctx context.Context) ([]byte, error) {
	if r.sb == nil {
		return nil, fmt.Errorf("replica %s: not made by AddKruiseManagerReplica", r.Name)
	}
	return r.sb.ScrapeMetrics(ctx, r.MetricsPort)
}

// Leads reports whether the replica holds the leader-election Lease, from its own metrics
// (leader_election_master_status); a replica that does not answer does not lead.
func (r ManagerReplica) Leads(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	body, err := r.ScrapeMetrics(ctx)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "leader_election_master_status{") && strings.HasSuffix(line, " 1") {
			return true
		}
	}
	return false
}

// webhookURLPort has a manager's args register its webhooks at port (--webhook-url-port, in place
// of the port they named): a Front's.
func webhookURLPort(port int) func([]string) []string {
	urlPort := "--webhook-url-port=" + strconv.Itoa(port)
	return func(args []string) []string {
		out := []string{urlPort}
		for _, a := range args {
			if !strings.HasPrefix(a, "--webhook-url-port=") {
				out = append(out, a)
			}
		}
		return out
	}
}

// restartKruiseBehind stops kruise-manager (SIGTERM) and starts it again with args of its old
// ones (webhookURLPort: behind a Front); it returns once the new one is ready.
func (s *Sandbox) restartKruiseBehind(ctx context.Context, args func([]string) []string) error {
	stop := func(p *Process) error { return p.Stop(10 * time.Second) }
	return s.restartKruise(ctx, "stopped", stop, args)
}

// freePorts returns n loopback ports free right now (freeport).
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := freeport.Listen()
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
