package sandbox

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kruise-ng/kruise/pkg/platform/pki"
)

// certValidity bounds every certificate a sandbox issues; sandboxes are short-lived.
const certValidity = 365 * 24 * time.Hour

// writeFiles issues the certificates and writes the kubeconfigs and component configuration.
func (s *Sandbox) writeFiles(audit bool) error {
	pkiPath := filepath.Join(s.Dir, pkiDir)
	ca, err := pki.NewAuthority("kruise-sandbox-ca", certValidity)
	if err != nil {
		return err
	}
	if _, _, err := ca.WriteFiles(pkiPath, "ca"); err != nil {
		return err
	}
	serving, err := ca.Issue(pki.Request{
		CommonName: "kube-apiserver",
		DNSNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPs:        []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
		Server:     true,
		Validity:   certValidity,
	})
	if err != nil {
		return err
	}
	if _, _, err := serving.WriteFiles(pkiPath, "apiserver"); err != nil {
		return err
	}
	kubeletClient, err := ca.Issue(pki.Request{CommonName: "kube-apiserver-kubelet-client", Groups: []string{"system:masters"}, Validity: certValidity})
	if err != nil {
		return err
	}
	if _, _, err := kubeletClient.WriteFiles(pkiPath, "apiserver-kubelet-client"); err != nil {
		return err
	}
	if _, _, err := pki.WriteSigningKey(pkiPath, "sa"); err != nil {
		return err
	}
	if err := s.writeWebhookClientFiles(); err != nil {
		return err
	}
	// One identity per client, so the audit log attributes each request.
	clients := []struct {
		file, user string
		groups     []string
	}{
		{s.Kubeconfig(), "kruise-admin", []string{"system:masters"}},
		{filepath.Join(s.Dir, kubeconfigsDir, "kube-controller-manager.kubeconfig"), "system:kube-controller-manager", nil},
		{filepath.Join(s.Dir, kubeconfigsDir, "kube-scheduler.kubeconfig"), "system:kube-scheduler", nil},
		{filepath.Join(s.Dir, kubeconfigsDir, "kwok.kubeconfig"), KwokUser, []string{"system:masters"}},
		{filepath.Join(s.Dir, kubeconfigsDir, "storage.kubeconfig"), "sandbox-storage", []string{"system:masters"}},
	}
	for _, c := range clients {
		kp, err := ca.Issue(pki.Request{CommonName: c.user, Groups: c.groups, Validity: certValidity})
		if err != nil {
			return err
		}
		if err := writeKubeconfig(c.file, s.Server(), ca.CertPEM, kp); err != nil {
			return err
		}
	}
	stages, err := Stages(s.NodeProfile())
	if err != nil {
		return err
	}
	files := map[string]string{
		"scheduler.yaml": schedulerConfig(s.Dir),
		"kwok.yaml":      kwokConfiguration + "---\n" + stages,
	}
	if audit {
		files["audit-policy.yaml"] = auditPolicy
		s.AuditLog = filepath.Join(s.Dir, auditLogFile)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(s.Dir, configDir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return s.saveState()
}

// run starts one component and records it before anything else can fail.
func (s *Sandbox) run(name, binary string, args, env []string) (*Process, error) {
	return s.launch(Process{Name: name, Binary: binary, Args: args, Env: env})
}

// launch runs spec (its Log: the sandbox's log of its Name) as one of the sandbox's processes.
func (s *Sandbox) launch(spec Process) (*Process, error) {
	name := spec.Name
	spec.Log = logPath(s.Dir, name)
	p, err := startProcess(spec)
	if err != nil {
		return nil, err
	}
	s.Processes = append(s.Processes, p)
	s.logf("started %s (pid %d)", name, p.PID)
	return p, s.saveState()
}

// startControlPlane starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler. With
// kruiseCRDs, Kruise's CRDs are installed before kube-controller-manager starts: its garbage
// collector then knows their kinds from the start, instead of from its discovery resync (30 s)
// and the backoff of what it could not resolve before it -- pods of a Kruise workload deleted in
// a sandbox's first minute stayed behind for up to 40 s.
func (s *Sandbox) startControlPlane(ctx context.Context, b Binaries, audit, kruiseCRDs bool) error {
	if _, err := s.run("etcd", b.Etcd, etcdArgs(s.Dir, s.Ports), nil); err != nil {
		return err
	}
	if err := s.waitFor(ctx, "etcd healthy", func(ctx context.Context) (bool, error) {
		return httpOK(ctx, url("http", s.Ports.EtcdClient)+"/health", `"health":"true"`), nil
	}); err != nil {
		return err
	}
	if _, err := s.run("kube-apiserver", b.KubeAPIServer, apiServerArgs(s.Dir, s.Ports, audit), nil); err != nil {
		return err
	}
	if err := s.waitAPIServerReady(ctx); err != nil {
		return err
	}
	cs, err := s.clientset()
	if err != nil {
		return err
	}
	if kruiseCRDs {
		if err := s.InstallCRDs(ctx); err != nil {
			return fmt.Errorf("install Kruise's CRDs: %w", err)
		}
	}
	if _, err := s.run("kube-controller-manager", b.KubeControllerManager, controllerManagerArgs(s.Dir, s.Ports), nil); err != nil {
		return err
	}
	if _, err := s.run("kube-scheduler", b.KubeScheduler, schedulerArgs(s.Dir, s.Ports), nil); err != nil {
		return err
	}
	if err := s.waitFor(ctx, "kube-controller-manager and kube-scheduler healthy", func(ctx context.Context) (bool, error) {
		return httpOK(ctx, url("https", s.Ports.ControllerManager)+"/healthz", "ok") &&
			httpOK(ctx, url("https", s.Ports.Scheduler)+"/healthz", "ok"), nil
	}); err != nil {
		return err
	}
	return s.waitFor(ctx, "default service account (pods can be created)", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

func (s *Sandbox) startNodes(ctx context.Context, b Binaries) error {
	kwok, err := s.run("kwok", b.Kwok, kwokArgs(s.Dir, s.Ports), nil)
	if err != nil {
		return err
	}
	cs, err := s.clientset()
	if err != nil {
		return err
	}
	if err := createFakeNodes(ctx, cs, s.Nodes); err != nil {
		return err
	}
	err = s.waitNodesReady(ctx, cs)
	if err != nil && !kwok.Alive() && startsAgain(tail(kwok.Log, 40)) {
		// restartProcess starts it again as long as it exits for a passing reason.
		err = s.restartProcess(ctx, "kwok", "exited at start; starting again", func(*Process) error { return nil }, sameArgs,
			func(ctx context.Context) error { return s.waitNodesReady(ctx, cs) })
	}
	return err
}

// startsAgain reports whether a process that exited at once, its log ending in log, exited for a
// passing reason and runs when started again: its port was taken (the sandbox's ports come from
// the ephemeral range, where a client's outgoing connection may hold one for a moment), or kwok
// crashed in its own race at start (its workers build a stage's CEL environment lazily, several at
// once, unsynchronized: sigs.k8s.io/kwok v0.8.0, lifecycle.(*Stage).init).
func startsAgain(log string) bool {
	return strings.Contains(log, "address already in use") || strings.Contains(log, "pkg/utils/lifecycle.(*Stage).init")
}

// process is the sandbox's process name (nil when it has none).
func (s *Sandbox) process(name string) *Process {
	for _, p := range s.Processes {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// waitNodesReady waits for the sandbox's kwok nodes to be Ready.
func (s *Sandbox) waitNodesReady(ctx context.Context, cs kubernetes.Interface) error {
	return s.waitFor(ctx, fmt.Sprintf("%d kwok node(s) Ready", s.Nodes), func(ctx context.Context) (bool, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: NodeTypeLabel + "=kwok"})
		if err != nil {
			return false, nil
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready >= s.Nodes, nil
	})
}

// waitAPIServerReady waits until kube-apiserver answers /readyz with ok.
func (s *Sandbox) waitAPIServerReady(ctx context.Context) error {
	cs, err := s.clientset()
	if err != nil {
		return err
	}
	return s.waitFor(ctx, "kube-apiserver ready", func(ctx context.Context) (bool, error) {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && strings.TrimSpace(string(body)) == "ok", nil
	})
}

func (s *Sandbox) clientset() (*kubernetes.Clientset, error) {
	cfg, err := s.RESTConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 50, 100
	return kubernetes.NewForConfig(cfg)
}

// waitFor polls cond until it holds. It fails early, with the end of the log, when a started
// process has exited, and on the context's deadline.
func (s *Sandbox) waitFor(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	t0 := time.Now()
	for {
		ok, err := cond(ctx)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			s.logf("%s (%.1fs)", what, time.Since(t0).Seconds())
			return nil
		}
		for _, p := range s.Processes {
			if !p.Alive() {
				return fmt.Errorf("%s exited while waiting for %s; last lines of %s:\n%s",
					p.Name, what, p.Log, tail(p.Log, 15))
			}
		}
		select {
		case <-ctx.Done():
			// The logs go with the failed sandbox's state, so quote their ends here.
			var logs strings.Builder
			for _, p := range s.Processes {
				fmt.Fprintf(&logs, "\n--- %s (last lines of %s):\n%s", p.Name, p.Log, tail(p.Log, 5))
			}
			return fmt.Errorf("timed out waiting for %s: %w%s", what, ctx.Err(), logs.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// insecureHTTP checks health endpoints of components whose serving certificates are self-signed.
var insecureHTTP = &http.Client{
	Timeout:   2 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback health probe
}

func httpOK(ctx context.Context, u, want string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false
	}
	resp, err := insecureHTTP.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return err == nil && resp.StatusCode == http.StatusOK && strings.Contains(string(body), want)
}
