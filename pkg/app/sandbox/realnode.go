package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/pkg/app/sandbox/images"
	"github.com/kruise-ng/kruise/pkg/platform/pki"
)

// RealNodeState records what a real node put on the host, so that Down removes exactly that.
type RealNodeState struct {
	// Name is the Node's name.
	Name string `json:"name"`
	// Registry is the host:port of the sandbox's in-memory image registry.
	Registry string `json:"registry"`
	// Images maps each pushed reference to its manifest digest.
	Images map[string]string `json:"images,omitempty"`
	// AddedAddress is true when the sandbox added RealNodeIP to the loopback interface.
	AddedAddress bool `json:"addedAddress,omitempty"`
	// CreatedHostDirs are host folders outside DIR that did not exist before the real node started.
	CreatedHostDirs []string `json:"createdHostDirs,omitempty"`
	// IPTablesBefore lists the iptables chains ("tool/table" → names) before the kubelet started;
	// teardown removes the chains added since. Nil when the machine has no iptables tools.
	IPTablesBefore map[string][]string `json:"iptablesBefore,omitempty"`
}

// realNodeBinaries are the executables of the real node, next to the control plane's in bin/k8s.
type realNodeBinaries struct {
	Containerd, Shim, Kubelet, Registry string
}

func realNodeBinariesIn(dir string) realNodeBinaries {
	return realNodeBinaries{
		Containerd: filepath.Join(dir, "containerd"),
		Shim:       filepath.Join(dir, "containerd-shim-runc-v2"),
		Kubelet:    filepath.Join(dir, "kubelet"),
		Registry:   filepath.Join(dir, "registry"),
	}
}

// maxDirForSockets bounds DIR: the kubelet puts unix sockets (at most 108 bytes) under DIR/kubelet.
const maxDirForSockets = 60

// checkRealNode runs before anything starts: it says exactly why this machine or dir cannot run a
// real node.
func checkRealNode(dir, binDir string) error {
	if err := checkRealNodeHost(); err != nil {
		return err
	}
	b := realNodeBinariesIn(binDir)
	var missing []string
	for _, p := range []string{b.Containerd, b.Shim, b.Kubelet, b.Registry} {
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing binaries for --real-node: %s; run `make tools` in the Kruise checkout to build them",
			strings.Join(missing, ", "))
	}
	if len(dir) > maxDirForSockets {
		return fmt.Errorf("--dir %s is too long for a real node (the kubelet's unix sockets live under it): use a path of at most %d characters",
			dir, maxDirForSockets)
	}
	if owner, err := os.ReadFile(filepath.Join(RealRunDir, "owner")); err == nil {
		return fmt.Errorf("another sandbox with a real node holds %s (its folder: %s); stop it with `kruise-sandbox down --dir %s`",
			RealRunDir, strings.TrimSpace(string(owner)), strings.TrimSpace(string(owner)))
	} else if _, err := os.Stat(RealRunDir); err == nil {
		return fmt.Errorf("%s exists but names no sandbox; remove it if no real node runs", RealRunDir)
	}
	if linkExists(realBridge) {
		return fmt.Errorf("the network interface %s exists: another real node runs or was not torn down (remove it with `ip link del %s`)",
			realBridge, realBridge)
	}
	return nil
}

// startRealNode starts the registry, pushes the standard images, and starts containerd and a
// kubelet that registers RealNodeName; it returns when that Node is Ready.
func (s *Sandbox) startRealNode(ctx context.Context, binDir string) error {
	b := realNodeBinariesIn(binDir)
	rn := &RealNodeState{Name: RealNodeName, Registry: "127.0.0.1:" + strconv.Itoa(s.Ports.Registry)}
	s.RealNode = rn
	for _, d := range []string{RealRunDir, hostContainerLogs, hostCNICache, hostKubeletDir} {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			rn.CreatedHostDirs = append(rn.CreatedHostDirs, d)
		}
	}
	if err := os.MkdirAll(RealRunDir, 0o711); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(RealRunDir, "owner"), []byte(s.Dir+"\n"), 0o644); err != nil {
		return err
	}
	if err := s.saveState(); err != nil {
		return err
	}
	if err := s.startRegistry(ctx, b); err != nil {
		return err
	}
	if err := s.prepareHostNetwork(); err != nil {
		return err
	}
	env := []string{"PATH=" + binDir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	if err := s.startContainerd(ctx, b, env); err != nil {
		return err
	}
	return s.startKubelet(ctx, b, env)
}

// startRegistry runs the real node's image registry and pushes the sandbox's images to it.
func (s *Sandbox) startRegistry(ctx context.Context, b realNodeBinaries) error {
	rn := s.RealNode
	if _, err := s.run("registry", b.Registry, []string{"--port=" + strconv.Itoa(s.Ports.Registry)}, nil); err != nil {
		return err
	}
	if err := s.waitFor(ctx, "image registry", func(ctx context.Context) (bool, error) {
		return httpStatus(ctx, "http://"+rn.Registry+"/v2/") == http.StatusOK, nil
	}); err != nil {
		return err
	}
	busybox, err := os.ReadFile(firstExisting(busyboxPaths))
	if err != nil {
		return fmt.Errorf("read the static busybox for the images: %w", err)
	}
	t0 := time.Now()
	digests, err := images.Push(ctx, rn.Registry, busybox, images.Standard)
	if err != nil {
		return err
	}
	rn.Images = map[string]string{}
	for ref, d := range digests {
		rn.Images[ref] = d.String()
	}
	s.logf("pushed %d images to %s (%.1fs)", len(digests), rn.Registry, time.Since(t0).Seconds())
	return nil
}

// prepareHostNetwork gives the host the node's address and the pods' cgroup root, recording what
// it added for Down.
func (s *Sandbox) prepareHostNetwork() error {
	if !hasAddress("lo", RealNodeIP+"/32") {
		if err := ip("addr", "add", RealNodeIP+"/32", "dev", "lo"); err != nil {
			return err
		}
		s.RealNode.AddedAddress = true
	}
	if err := createCgroup(RealCgroupRoot); err != nil {
		return err
	}
	return s.saveState()
}

// startContainerd writes the real node's files and runs containerd until its socket answers.
func (s *Sandbox) startContainerd(ctx context.Context, b realNodeBinaries, env []string) error {
	if err := s.writeRealNodeFiles(); err != nil {
		return err
	}
	if _, err := s.run("containerd", b.Containerd, containerdArgs(s.Dir), env); err != nil {
		return err
	}
	return s.waitFor(ctx, "containerd socket", func(context.Context) (bool, error) {
		c, err := net.DialTimeout("unix", ContainerdSocket(), time.Second)
		if err != nil {
			return false, nil
		}
		_ = c.Close()
		return true, nil
	})
}

// startKubelet runs the kubelet (after recording the iptables chains it will add to) until the
// node is Ready.
func (s *Sandbox) startKubelet(ctx context.Context, b realNodeBinaries, env []string) error {
	s.RealNode.IPTablesBefore = iptablesChains()
	if err := s.saveState(); err != nil {
		return err
	}
	if _, err := s.run("kubelet", b.Kubelet, kubeletArgs(s.Dir), env); err != nil {
		return err
	}
	cs, err := s.clientset()
	if err != nil {
		return err
	}
	return s.waitFor(ctx, "real node "+RealNodeName+" Ready", func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, RealNodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// TrustPlainHTTPRegistry lets the real node's containerd pull from host (host:port) over plain
// HTTP, as it does from the sandbox's registry; tests use it for registries of their own on
// loopback. containerd reads the setting at each pull: no restart.
func (s *Sandbox) TrustPlainHTTPRegistry(host string) error {
	if s.RealNode == nil {
		return fmt.Errorf("sandbox %s has no real node", s.Dir)
	}
	dir := filepath.Join(s.Dir, containerdDir, "certs.d", host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(registryHosts(host)), 0o644)
}

// writeRealNodeFiles writes containerd's, the CNI's and the kubelet's configuration and the
// kubelet's certificates.
func (s *Sandbox) writeRealNodeFiles() error {
	for _, d := range []string{
		filepath.Join(s.Dir, containerdDir, "certs.d", s.RealNode.Registry),
		filepath.Join(s.Dir, cniDir, "net.d"),
		filepath.Join(s.Dir, kubeletDir),
	} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	pkiPath := filepath.Join(s.Dir, pkiDir)
	ca, err := pki.LoadAuthority(filepath.Join(pkiPath, "ca.crt"), filepath.Join(pkiPath, "ca.key"))
	if err != nil {
		return err
	}
	serving, err := ca.Issue(pki.Request{CommonName: "system:node:" + RealNodeName, DNSNames: []string{RealNodeName},
		IPs: []net.IP{net.ParseIP(RealNodeIP)}, Server: true, Validity: certValidity})
	if err != nil {
		return err
	}
	if _, _, err := serving.WriteFiles(pkiPath, "kubelet"); err != nil {
		return err
	}
	client, err := ca.Issue(pki.Request{CommonName: "system:node:" + RealNodeName, Groups: []string{"system:nodes"}, Validity: certValidity})
	if err != nil {
		return err
	}
	if err := writeKubeconfig(filepath.Join(s.Dir, kubeconfigsDir, "kubelet.kubeconfig"), s.Server(), ca.CertPEM, client); err != nil {
		return err
	}
	files := map[string]string{
		filepath.Join(s.Dir, configDir, "containerd.toml"):                                containerdConfig(s.Dir, s.RealNode.Registry),
		filepath.Join(s.Dir, containerdDir, "certs.d", s.RealNode.Registry, "hosts.toml"): registryHosts(s.RealNode.Registry),
		filepath.Join(s.Dir, cniDir, "net.d", "10-"+realCNINetwork+".conflist"):           cniConfig(s.Dir),
		filepath.Join(s.Dir, configDir, "kubelet.yaml"):                                   kubeletConfig(s.Dir, s.Ports),
	}
	for name, content := range files {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Image returns the reference of a standard image (e.g. "app:v1") in the real node's registry.
func (s *Sandbox) Image(nameTag string) string {
	if s.RealNode == nil {
		return ""
	}
	return s.RealNode.Registry + "/" + nameTag
}

// PushImage builds spec on the real node's busybox base (plus spec.Files) and pushes it to the
// sandbox's registry; it returns the image reference.
func (s *Sandbox) PushImage(ctx context.Context, spec images.Spec) (string, error) {
	if s.RealNode == nil {
		return "", errors.New("the sandbox has no real node (and no registry)")
	}
	busybox, err := os.ReadFile(firstExisting(busyboxPaths))
	if err != nil {
		return "", fmt.Errorf("read the static busybox for the image: %w", err)
	}
	if _, err := images.Push(ctx, s.RealNode.Registry, busybox, []images.Spec{spec}); err != nil {
		return "", err
	}
	return spec.Ref(s.RealNode.Registry), nil
}

func httpStatus(ctx context.Context, u string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0
	}
	resp, err := insecureHTTP.Do(req)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}
