package sandbox

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
)

// The real node's fixed host-wide names. They are fixed so that a second sandbox with a real node
// cannot start by accident: it finds the run folder taken and says which sandbox holds it.
const (
	// RealNodeName is the Node the sandbox's kubelet registers.
	RealNodeName = "kruise-real-node"
	// RealNodeIP is the kubelet's node address: an extra address on the loopback interface, so the
	// kubelet (which refuses 127.0.0.0/8) listens on nothing but this machine.
	RealNodeIP = "10.252.0.1"
	// RealPodCIDR is the subnet of the real node's pods, behind the bridge realBridge.
	RealPodCIDR = "10.253.0.0/24"
	realBridge  = "kruise-sbx0"
	// RealRunDir holds containerd's sockets and the shims' sockets: unix socket paths must be short.
	RealRunDir = "/run/kruise-sandbox"
	// RealCgroupRoot is the cgroup under which the kubelet puts every pod.
	RealCgroupRoot = "kruise-sandbox"
	// realCNINetwork names the CNI network (and prefixes its cache entries in /var/lib/cni).
	realCNINetwork = "kruise-sandbox"
	// hostContainerLogs is where every kubelet links its containers' logs; it cannot be moved.
	hostContainerLogs = "/var/log/containers"
	// hostCNICache is libcni's cache folder, which containerd does not let us move.
	hostCNICache = "/var/lib/cni"
	// hostKubeletDir is where the kubelet's device manager makes its folder whatever --root-dir says.
	hostKubeletDir = "/var/lib/kubelet"
)

// The folders of the real node under DIR.
const (
	containerdDir = "containerd"
	kubeletDir    = "kubelet"
	cniDir        = "cni"
)

// ContainerdSocket is the real node's containerd (CRI) socket.
func ContainerdSocket() string { return filepath.Join(RealRunDir, "containerd.sock") }

// containerdConfig is containerd's configuration: everything under DIR (or RealRunDir for the
// sockets), host configuration ignored, CRI with runc and cgroupfs, the sandbox registry as a
// plain-HTTP host.
func containerdConfig(dir, registry string) string {
	root := filepath.Join(dir, containerdDir)
	return fmt.Sprintf(`version = 3
root = %[1]q
state = %[2]q
temp = %[3]q
imports = []
disabled_plugins = ["io.containerd.nri.v1.nri", "io.containerd.snapshotter.v1.blockfile", "io.containerd.snapshotter.v1.erofs", "io.containerd.differ.v1.erofs", "io.containerd.mount-handler.v1.erofs"]

[grpc]
  address = %[4]q

[ttrpc]
  address = %[5]q

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = %[6]q
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = %[7]q

  [plugins.'io.containerd.cri.v1.runtime']
    # This VM lacks CAP_SYS_RESOURCE: without it every pod sandbox fails to start.
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    cdi_spec_dirs = []
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = %[8]q
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [%[9]q]
      conf_dir = %[10]q

  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"

  [plugins.'io.containerd.internal.v1.opt']
    path = %[11]q

  [plugins.'io.containerd.shim.v1.manager']
    socket_dir = %[12]q
`, filepath.Join(root, "root"), filepath.Join(root, "state"), filepath.Join(root, "tmp"),
		ContainerdSocket(), ContainerdSocket()+".ttrpc",
		registry+"/pause:3.10", filepath.Join(root, "certs.d"),
		filepath.Join(RealRunDir, "runc"), cniBinDir, filepath.Join(dir, cniDir, "net.d"),
		filepath.Join(root, "opt"), filepath.Join(RealRunDir, "s"))
}

// registryHosts makes containerd pull from the sandbox registry over plain HTTP.
func registryHosts(registry string) string {
	return fmt.Sprintf(`server = "http://%[1]s"

[host."http://%[1]s"]
  capabilities = ["pull", "resolve"]
`, registry)
}

// cniConfig is the real node's pod network: a bridge with host-local addresses and no masquerade
// (pods need no way out; the host reaches them through the bridge), so it adds no iptables rules.
func cniConfig(dir string) string {
	cfg := map[string]any{
		"cniVersion": "1.0.0",
		"name":       realCNINetwork,
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      realBridge,
				"isGateway":   true,
				"ipMasq":      false,
				"hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  [][]map[string]string{{{"subnet": RealPodCIDR}}},
					"dataDir": filepath.Join(dir, cniDir, "ipam"),
				},
			},
		},
	}
	data, _ := json.MarshalIndent(cfg, "", "  ")
	return string(data) + "\n"
}

// kubeletConfig is the kubelet's configuration, with what these machines need: cgroup v1 allowed,
// cgroupfs, no OOM score change (no CAP_SYS_RESOURCE), swap tolerated, thresholds that a busy disk
// does not trip, and every path under DIR.
func kubeletConfig(dir string, p Ports) string {
	kd := filepath.Join(dir, kubeletDir)
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: %[2]d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %[3]d
tlsCertFile: %[4]q
tlsPrivateKeyFile: %[5]q
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: false
  x509:
    clientCAFile: %[6]q
authorization:
  mode: AlwaysAllow
containerRuntimeEndpoint: %[7]q
cgroupDriver: cgroupfs
cgroupRoot: /%[8]s
cgroupsPerQOS: true
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
podLogsDir: %[9]q
volumePluginDir: %[10]q
resolvConf: /etc/resolv.conf
clusterDomain: cluster.local
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "1Mi"
  nodefs.available: "1%%"
  nodefs.inodesFree: "1%%"
  imagefs.available: "1%%"
evictionPressureTransitionPeriod: 5s
nodeStatusUpdateFrequency: 5s
syncFrequency: 10s
fileCheckFrequency: 0s
maxPods: 110
`, RealNodeIP, p.Kubelet, p.KubeletHealthz,
		filepath.Join(dir, pkiDir, "kubelet.crt"), filepath.Join(dir, pkiDir, "kubelet.key"),
		filepath.Join(dir, pkiDir, "ca.crt"), "unix://"+ContainerdSocket(), RealCgroupRoot,
		filepath.Join(kd, "pod-logs"), filepath.Join(kd, "volume-plugins"))
}

func kubeletArgs(dir string) []string {
	kd := filepath.Join(dir, kubeletDir)
	return []string{
		"--config=" + filepath.Join(dir, configDir, "kubelet.yaml"),
		"--kubeconfig=" + filepath.Join(dir, kubeconfigsDir, "kubelet.kubeconfig"),
		"--root-dir=" + kd,
		"--cert-dir=" + filepath.Join(kd, "pki"),
		"--hostname-override=" + RealNodeName,
		"--node-ip=" + RealNodeIP,
		"--node-labels=" + NodeTypeLabel + "=real",
		"--v=" + strconv.Itoa(1),
	}
}

func containerdArgs(dir string) []string {
	return []string{"--config=" + filepath.Join(dir, configDir, "containerd.toml"), "--log-level=warn"}
}
