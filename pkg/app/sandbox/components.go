package sandbox

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// The folders and files a sandbox owns under its DIR. Down removes exactly these.
const (
	stateFile      = "sandbox.json"
	adminConfig    = "kubeconfig"
	auditLogFile   = "audit.log"
	pkiDir         = "pki"
	etcdDir        = "etcd"
	logsDir        = "logs"
	configDir      = "config"
	kubeconfigsDir = "kubeconfigs"
	certsDir       = "serving-certs"
	kruiseDir      = "kruise"
	// volumesDir holds the folders of the storage provisioner's volumes.
	volumesDir = "volumes"
)

// ownedPaths lists everything under DIR that a sandbox creates.
var ownedPaths = []string{stateFile, adminConfig, auditLogFile, pkiDir, etcdDir, logsDir, configDir, kubeconfigsDir, certsDir, kruiseDir,
	volumesDir, containerdDir, kubeletDir, cniDir}

// Client QPS of the sandbox's own controllers: high enough that neither kube-controller-manager nor
// the scheduler bounds a 2,000-pod rollout (a rolling update needs a few writes per pod).
const (
	controllerQPS   = 1000
	controllerBurst = 2000
)

// ServiceCIDR is the sandbox's Service IP range; the API server's own Service takes its first IP.
const ServiceCIDR = "10.96.0.0/16"

// PodCIDR is the range kwok assigns fake pod IPs from: room for far more than 2,000 pods.
const PodCIDR = "10.244.0.0/16"

// Ports are the loopback ports of a sandbox's listeners, all chosen free at start.
type Ports struct {
	EtcdClient        int `json:"etcdClient"`
	EtcdPeer          int `json:"etcdPeer"`
	APIServer         int `json:"apiServer"`
	ControllerManager int `json:"controllerManager"`
	Scheduler         int `json:"scheduler"`
	Kwok              int `json:"kwok"`
	// KruiseWebhook, KruiseProbe and KruiseMetrics are kruise-manager's listeners (with --kruise).
	KruiseWebhook int `json:"kruiseWebhook,omitempty"`
	KruiseProbe   int `json:"kruiseProbe,omitempty"`
	KruiseMetrics int `json:"kruiseMetrics,omitempty"`
	// KruisePprof serves kruise-manager's /debug/pprof (profiling a rollout).
	KruisePprof int `json:"kruisePprof,omitempty"`
	// KruiseDaemon serves kruise-daemon's /healthz and /metrics (with --real-node).
	KruiseDaemon int `json:"kruiseDaemon,omitempty"`
	// Registry, Kubelet and KubeletHealthz serve the real node (with --real-node). The kubelet
	// listens on RealNodeIP, the others on loopback.
	Registry       int `json:"registry,omitempty"`
	Kubelet        int `json:"kubelet,omitempty"`
	KubeletHealthz int `json:"kubeletHealthz,omitempty"`
}

func url(scheme string, port int) string { return fmt.Sprintf("%s://127.0.0.1:%d", scheme, port) }

func etcdArgs(dir string, p Ports) []string {
	peer := url("http", p.EtcdPeer)
	return []string{
		"--name=sandbox",
		"--data-dir=" + filepath.Join(dir, etcdDir),
		"--listen-client-urls=" + url("http", p.EtcdClient),
		"--advertise-client-urls=" + url("http", p.EtcdClient),
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=sandbox=" + peer,
		"--unsafe-no-fsync=true", // a throwaway store: durability costs seconds per rollout
		"--quota-backend-bytes=8589934592",
		"--log-level=warn",
	}
}

func apiServerArgs(dir string, p Ports, audit bool) []string {
	pki := filepath.Join(dir, pkiDir)
	args := []string{
		"--etcd-servers=" + url("http", p.EtcdClient),
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(p.APIServer),
		// v1.37 refuses a loopback advertise address unless the endpoint reconciler is off.
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + filepath.Join(dir, certsDir, "apiserver"),
		"--tls-cert-file=" + filepath.Join(pki, "apiserver.crt"),
		"--tls-private-key-file=" + filepath.Join(pki, "apiserver.key"),
		"--client-ca-file=" + filepath.Join(pki, "ca.crt"),
		"--kubelet-client-certificate=" + filepath.Join(pki, "apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + filepath.Join(pki, "apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-key-file=" + filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(pki, "sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--authorization-mode=Node,RBAC",
		// As OpenShift does: setting an owner reference that blocks the owner's deletion needs
		// update on the owner's finalizers, so Kruise's RBAC is checked for it.
		"--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
		// Webhooks are called with the API server's client certificate (webhookclient.go).
		"--admission-control-config-file=" + filepath.Join(dir, configDir, admissionConfig),
		"--enable-priority-and-fairness=true",
		"--max-requests-inflight=800",
		"--max-mutating-requests-inflight=400",
		// Webhooks running as pods on a real node are reached at their endpoints' pod IPs.
		"--enable-aggregator-routing=true",
		"--allow-privileged=true",
		"--event-ttl=1h",
	}
	if audit {
		args = append(args,
			"--audit-policy-file="+filepath.Join(dir, configDir, "audit-policy.yaml"),
			"--audit-log-path="+filepath.Join(dir, auditLogFile),
			"--audit-log-format=json",
			"--audit-log-maxsize=0",
		)
	}
	return args
}

func controllerManagerArgs(dir string, p Ports) []string {
	pki := filepath.Join(dir, pkiDir)
	kc := filepath.Join(dir, kubeconfigsDir, "kube-controller-manager.kubeconfig")
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(p.ControllerManager),
		"--cert-dir=" + filepath.Join(dir, certsDir, "kube-controller-manager"),
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + filepath.Join(pki, "sa.key"),
		"--root-ca-file=" + filepath.Join(pki, "ca.crt"),
		"--cluster-signing-cert-file=" + filepath.Join(pki, "ca.crt"),
		"--cluster-signing-key-file=" + filepath.Join(pki, "ca.key"),
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--kube-api-qps=" + strconv.Itoa(controllerQPS),
		"--kube-api-burst=" + strconv.Itoa(controllerBurst),
		"--concurrent-deployment-syncs=10",
		"--concurrent-replicaset-syncs=10",
	}
}

func schedulerArgs(dir string, p Ports) []string {
	kc := filepath.Join(dir, kubeconfigsDir, "kube-scheduler.kubeconfig")
	return []string{
		"--config=" + filepath.Join(dir, configDir, "scheduler.yaml"),
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(p.Scheduler),
		"--cert-dir=" + filepath.Join(dir, certsDir, "kube-scheduler"),
	}
}

func schedulerConfig(dir string) string {
	return fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: %d
  burst: %d
leaderElection:
  leaderElect: false
`, filepath.Join(dir, kubeconfigsDir, "kube-scheduler.kubeconfig"), controllerQPS, controllerBurst)
}

// FakeNodeAnnotation marks the nodes kwok manages; nodes without it (a real kubelet) are left alone.
const FakeNodeAnnotation = "kwok.x-k8s.io/node"

func kwokArgs(dir string, p Ports) []string {
	return []string{
		"--kubeconfig=" + filepath.Join(dir, kubeconfigsDir, "kwok.kubeconfig"),
		"--config=" + filepath.Join(dir, configDir, "kwok.yaml"),
		"--manage-nodes-with-annotation-selector=" + FakeNodeAnnotation + "=fake",
		"--server-address=127.0.0.1:" + strconv.Itoa(p.Kwok),
		"--cidr=" + PodCIDR,
		"--node-lease-duration-seconds=40",
	}
}

// kwokConfiguration raises kwok's parallelism so that it never bounds a 2,000-pod rollout. Every
// parallelism field is set: leaving one unset made kwok exit on these machines.
const kwokConfiguration = `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: 64
  nodePlayStageParallelism: 16
  nodeLeaseParallelism: 16
  podsOnNodeSyncParallelism: 16
`

// auditPolicy records every request at Metadata level: who did what to which resource.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`
