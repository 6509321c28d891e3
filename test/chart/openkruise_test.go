package chart

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checker reports, per OpenKruise key, a value that did not take effect.
type checker struct{ t *testing.T }

func (c checker) expect(key string, ok bool, got any) {
	c.t.Helper()
	if !ok {
		c.t.Errorf("%s did not take effect: got %v", key, got)
	}
}

// expectArgs checks, per key, that the container got the flag the key stands for.
func (c checker) expectArgs(ctr corev1.Container, flags map[string]string) {
	c.t.Helper()
	for key, arg := range flags {
		c.expect(key, slices.Contains(ctr.Args, arg), ctr.Args)
	}
}

func envValue(env []corev1.EnvVar, name string) (string, bool) {
	for _, e := range env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

func quantity(rl corev1.ResourceList, name corev1.ResourceName) string {
	q, ok := rl[name]
	if !ok {
		return ""
	}
	return q.String()
}

// An OpenKruise user's values file, in OpenKruise's keys only, installed as OpenKruise installs it
// (release in "default", everything in installation.namespace): each key does what OpenKruise's
// chart documents.
func TestOpenKruiseValues(t *testing.T) {
	objs := render(t, "default", "-f", "values-openkruise.yaml")
	c := checker{t}

	// installation.*: the namespace is the chart's (kept), everything namespaced goes there.
	ns := objs.find("Namespace", "kruise-system")
	c.expect("installation.createNamespace", ns != nil && ns.GetAnnotations()["helm.sh/resource-policy"] == "keep", ns)
	for _, u := range objs {
		if u.GetNamespace() != "" && u.GetNamespace() != "kruise-system" && u.GetNamespace() != "kruise-daemon-config" {
			t.Errorf("installation.namespace: %s %s rendered in %s", u.GetKind(), u.GetName(), u.GetNamespace())
		}
	}
	var role rbacv1.ClusterRole
	objs.typed(t, "ClusterRole", "kruise-manager-role", &role)
	listAny := slices.IndexFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Equal(r.Resources, []string{"*"}) && slices.Equal(r.Verbs, []string{"list"})
	})
	c.expect("installation.roleListGroups", listAny >= 0 && slices.Equal(role.Rules[listAny].APIGroups, []string{"", "apps", "apps.kruise.io"}), role.Rules)
	c.expect("crds.managed", objs.count("CustomResourceDefinition") == 18, objs.count("CustomResourceDefinition"))
	conv, _, _ := unstructured.NestedString(objs.find("CustomResourceDefinition", "statefulsets.apps.kruise.io").Object,
		"spec", "conversion", "webhook", "clientConfig", "service", "namespace")
	c.expect("installation.namespace (CRD conversion)", conv == "kruise-system", conv)

	for _, sa := range []string{"kruise-manager", "kruise-daemon"} {
		var got corev1.ServiceAccount
		objs.typed(t, "ServiceAccount", sa, &got)
		c.expect("serviceAccount.annotations ("+sa+")", got.Annotations["eks.amazonaws.com/role-arn"] == "arn:aws:iam::123456789012:role/kruise", got.Annotations)
	}

	var dep appsv1.Deployment
	objs.typed(t, "Deployment", "kruise-manager", &dep)
	pod, mgr := dep.Spec.Template.Spec, dep.Spec.Template.Spec.Containers[0]
	c.expect("manager.replicas", *dep.Spec.Replicas == 3, *dep.Spec.Replicas)
	c.expect("manager.image.repository, manager.image.tag", mgr.Image == "registry.corp.example/mirror/kruise:v0.1.0", mgr.Image)
	c.expect("imagePullSecrets (manager)", reflect.DeepEqual(pod.ImagePullSecrets, []corev1.LocalObjectReference{{Name: "mirror-pull"}}), pod.ImagePullSecrets)
	c.expectArgs(mgr, map[string]string{
		"manager.webhook.port":     "--webhook-port=9443",
		"manager.metrics.port":     "--metrics-bind-address=:9090",
		"manager.healthProbe.port": "--health-probe-bind-address=:9001",
		"manager.pprofAddr":        "--pprof-bind-address=localhost:8090",
		"manager.resyncPeriod":     "--sync-period=0",
		"manager.log.level":        "--zap-log-level=2",
		"manager.loggingFormat":    "--zap-encoder=json",
		"featureGates":             "--feature-gates=ImagePullJobGate=true,ResourcesDeletionProtection=true,PreDownloadImageForInPlaceUpdate=true",
	})
	c.expect("manager.webhook.port (container port)", containerPort(mgr, "webhook") == 9443, mgr.Ports)
	c.expect("manager.metrics.port (container port)", containerPort(mgr, "metrics") == 9090, mgr.Ports)
	c.expect("manager.healthProbe.port (container port)", containerPort(mgr, "health") == 9001, mgr.Ports)
	c.expect("manager.resources", quantity(mgr.Resources.Limits, corev1.ResourceMemory) == "1Gi" &&
		quantity(mgr.Resources.Requests, corev1.ResourceCPU) == "200m", mgr.Resources)
	c.expect("manager.hostNetwork", !pod.HostNetwork, pod.HostNetwork)
	c.expect("manager.nodeSelector", pod.NodeSelector["kubernetes.io/os"] == "linux", pod.NodeSelector)
	c.expect("manager.tolerations", len(pod.Tolerations) == 1 && pod.Tolerations[0].Key == "dedicated", pod.Tolerations)
	c.expect("manager.nodeAffinity", pod.Affinity != nil && pod.Affinity.NodeAffinity != nil &&
		pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Key == "node-role.kubernetes.io/infra", pod.Affinity)
	_, detector := envValue(mgr.Env, "KUBE_CACHE_MUTATION_DETECTOR")
	c.expect("enableKubeCacheMutationDetector: false (manager)", !detector, mgr.Env)

	var ds appsv1.DaemonSet
	objs.typed(t, "DaemonSet", "kruise-daemon", &ds)
	dpod, daemon := ds.Spec.Template.Spec, ds.Spec.Template.Spec.Containers[0]
	c.expect("manager.image.* (daemon: one image holds both binaries)", daemon.Image == mgr.Image, daemon.Image)
	c.expect("imagePullSecrets (daemon)", reflect.DeepEqual(dpod.ImagePullSecrets, pod.ImagePullSecrets), dpod.ImagePullSecrets)
	c.expectArgs(daemon, map[string]string{
		"daemon.port":                          "--health-probe-bind-address=:10231",
		"daemon.socketLocation, socketFile":    "--runtime-endpoint=unix:///run/k3s/containerd/containerd.sock",
		"daemon.enablePprof, daemon.pprofAddr": "--pprof-bind-address=localhost:10232",
		"daemon.log.level":                     "--zap-log-level=3",
	})
	c.expect("daemon.port (container port)", containerPort(daemon, "health") == 10231, daemon.Ports)
	c.expect("daemon.socketLocation", dpod.Volumes[0].HostPath != nil && dpod.Volumes[0].HostPath.Path == "/run/k3s/containerd" &&
		daemon.VolumeMounts[0].MountPath == "/run/k3s/containerd", dpod.Volumes)
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"} {
		v, ok := envValue(daemon.Env, name)
		c.expect("daemon.extraEnvs "+name, ok && v != "", daemon.Env)
	}
	c.expect("daemon.nodeSelector", dpod.NodeSelector["kruise.io/daemon"] == "true", dpod.NodeSelector)
	c.expect("daemon.affinity", dpod.Affinity != nil && dpod.Affinity.NodeAffinity != nil, dpod.Affinity)
	c.expect("daemon.resources", quantity(daemon.Resources.Limits, corev1.ResourceMemory) == "256Mi" &&
		quantity(daemon.Resources.Requests, corev1.ResourceCPU) == "0", daemon.Resources)

	// webhookConfiguration.timeoutSeconds and installation.namespace: every webhook of both configurations.
	var mwc admissionregistrationv1.MutatingWebhookConfiguration
	objs.typed(t, "MutatingWebhookConfiguration", "kruise-mutating-webhook-configuration", &mwc)
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	objs.typed(t, "ValidatingWebhookConfiguration", "kruise-validating-webhook-configuration", &vwc)
	type hook struct {
		name    string
		timeout *int32
		client  admissionregistrationv1.WebhookClientConfig
	}
	var hooks []hook
	for _, w := range mwc.Webhooks {
		hooks = append(hooks, hook{w.Name, w.TimeoutSeconds, w.ClientConfig})
	}
	for _, w := range vwc.Webhooks {
		hooks = append(hooks, hook{w.Name, w.TimeoutSeconds, w.ClientConfig})
	}
	for _, h := range hooks {
		c.expect("webhookConfiguration.timeoutSeconds ("+h.name+")", h.timeout != nil && *h.timeout == 20, h.timeout)
		c.expect("installation.namespace ("+h.name+")", h.client.Service != nil && h.client.Service.Namespace == "kruise-system", h.client.Service)
	}
}

// The switches of OpenKruise's chart that values-openkruise.yaml leaves at their defaults.
func TestOpenKruiseSwitches(t *testing.T) {
	objs := render(t, "kruise-system", "--set", "enableKubeCacheMutationDetector=true,crds.managed=false")
	c := checker{t}
	c.expect("crds.managed=false", objs.count("CustomResourceDefinition") == 0, objs.count("CustomResourceDefinition"))
	var dep appsv1.Deployment
	objs.typed(t, "Deployment", "kruise-manager", &dep)
	var ds appsv1.DaemonSet
	objs.typed(t, "DaemonSet", "kruise-daemon", &ds)
	for name, env := range map[string][]corev1.EnvVar{"manager": dep.Spec.Template.Spec.Containers[0].Env, "daemon": ds.Spec.Template.Spec.Containers[0].Env} {
		v, _ := envValue(env, "KUBE_CACHE_MUTATION_DETECTOR")
		c.expect("enableKubeCacheMutationDetector ("+name+")", v == "true", env)
	}
	// Log level 0 is klog's default: info.
	objs = render(t, "kruise-system", "--set", "manager.log.level=0,daemon.log.level=0")
	objs.typed(t, "Deployment", "kruise-manager", &dep)
	c.expect("manager.log.level=0", slices.Contains(dep.Spec.Template.Spec.Containers[0].Args, "--zap-log-level=info"), dep.Spec.Template.Spec.Containers[0].Args)
}

// Where Kruise's key and OpenKruise's are both set, OpenKruise's wins (lists: both, Kruise's first);
// with neither, the chart renders what it did before OpenKruise's keys were accepted.
func TestOpenKruiseAliasesWin(t *testing.T) {
	objs := render(t, "kruise-system", "--set", strings.Join([]string{
		"image.repository=registry.example/kruise", "manager.image.repository=mirror.example/kruise",
		"image.tag=v1", "manager.image.tag=v2",
		"manager.webhookPort=1111", "manager.webhook.port=2222",
		"manager.metricsPort=1112", "manager.metrics.port=2223",
		"manager.healthPort=1113", "manager.healthProbe.port=2224",
		"daemon.healthPort=1114", "daemon.port=2225",
		"webhook.timeoutSeconds=5", "webhookConfiguration.timeoutSeconds=25",
		"daemon.runtimeEndpoint=unix:///run/other.sock", "daemon.socketFile=crio/crio.sock", "daemon.socketLocation=/var/run/",
		"daemon.extraEnv[0].name=A,daemon.extraEnv[0].value=kruise", "daemon.extraEnvs[0].name=B,daemon.extraEnvs[0].value=openkruise",
	}, ","))
	var dep appsv1.Deployment
	objs.typed(t, "Deployment", "kruise-manager", &dep)
	var ds appsv1.DaemonSet
	objs.typed(t, "DaemonSet", "kruise-daemon", &ds)
	mgr, daemon := dep.Spec.Template.Spec.Containers[0], ds.Spec.Template.Spec.Containers[0]
	c := checker{t}
	c.expect("manager.image.* over image.*", mgr.Image == "mirror.example/kruise:v2" && daemon.Image == mgr.Image, mgr.Image)
	c.expectArgs(mgr, map[string]string{"manager.webhook.port over manager.webhookPort": "--webhook-port=2222",
		"manager.metrics.port over manager.metricsPort":    "--metrics-bind-address=:2223",
		"manager.healthProbe.port over manager.healthPort": "--health-probe-bind-address=:2224"})
	c.expect("daemon.port over daemon.healthPort", slices.Contains(daemon.Args, "--health-probe-bind-address=:2225"), daemon.Args)
	c.expect("daemon.socketFile over daemon.runtimeEndpoint", slices.Contains(daemon.Args, "--runtime-endpoint=unix:///var/run/crio/crio.sock"), daemon.Args)
	c.expect("daemon.extraEnv, then daemon.extraEnvs", len(daemon.Env) == 3 && daemon.Env[1].Name == "A" && daemon.Env[2].Name == "B", daemon.Env)
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	objs.typed(t, "ValidatingWebhookConfiguration", "kruise-validating-webhook-configuration", &vwc)
	timeout := vwc.Webhooks[0].TimeoutSeconds
	c.expect("webhookConfiguration.timeoutSeconds over webhook.timeoutSeconds", timeout != nil && *timeout == 25, timeout)

	// Without OpenKruise's keys: none of their flags, Kruise's own values.
	objs = render(t, "kruise-system")
	objs.typed(t, "Deployment", "kruise-manager", &dep)
	objs.typed(t, "DaemonSet", "kruise-daemon", &ds)
	mgr, daemon = dep.Spec.Template.Spec.Containers[0], ds.Spec.Template.Spec.Containers[0]
	for _, arg := range append(slices.Clone(mgr.Args), daemon.Args...) {
		for _, flag := range []string{"--zap-", "--pprof-bind-address", "--sync-period", "--runtime-endpoint"} {
			if strings.HasPrefix(arg, flag) {
				t.Errorf("the defaults pass %s", arg)
			}
		}
	}
	c.expect("image.* by default", strings.HasPrefix(mgr.Image, "ghcr.io/kruise-ng/kruise:"), mgr.Image)
	c.expect("no Namespace by default", objs.find("Namespace", "kruise-system") == nil, "a Namespace kruise-system")
}

// What Kruise cannot honour, and keys no chart has, are refused naming the key.
func TestRefusedKeys(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--set", "manager.notAKey=1"}, []string{"at '/manager'", "additional properties 'notAKey' not allowed"}},
		{[]string{"--set", "notAKey=1"}, []string{"additional properties 'notAKey' not allowed"}},
		{[]string{"--set", "daemon.resources.limit.cpu=1"}, []string{"at '/daemon/resources'", "'limit'"}},
		{[]string{"--set-json", `externalCerts.annotations={"cert-manager.io/inject-ca-from":"kruise-system/kruise-webhook-certs"}`}, []string{"externalCerts.annotations:"}},
		{[]string{"--set", "featureGates=EnableExternalCerts=true"}, []string{"featureGates: EnableExternalCerts=true"}},
		{[]string{"--set", "daemon.credentialProvider.enable=true"}, []string{"daemon.credentialProvider.enable:"}},
		{[]string{"--set", "manager.image.repository=openkruise-registry.cn-hangzhou.cr.aliyuncs.com/openkruise/kruise-manager"}, []string{"manager.image.repository:", "OpenKruise's image"}},
		{[]string{"--set", "daemon.socketLocation=/run/k3s/containerd"}, []string{"daemon.socketLocation:", "daemon.socketFile"}},
		{[]string{"--set", "installation.createNamespace=true"}, []string{"installation.createNamespace:"}},
		{[]string{"--set", "manager.log.level=debug"}, []string{"at '/manager/log/level'"}},
		{[]string{"--set", "manager.resyncPeriod=30"}, []string{"at '/manager/resyncPeriod'"}},
	} {
		msg := refusal(t, "kruise-system", tc.args...)
		for _, want := range tc.want {
			if msg != "" && !strings.Contains(msg, want) {
				t.Errorf("%v: refused with %q, which lacks %q", tc.args, msg, want)
			}
		}
	}
}
