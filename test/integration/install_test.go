package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/webhook/podmutation"
	"github.com/kruise-ng/kruise/test/harness"
)

// render runs a tool of bin/ (helm, or kubectl for kustomize) in the repository and decodes the
// manifests it prints.
func render(t *testing.T, tool string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	bin := filepath.Join(harness.RepoRoot(), "bin", tool)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is missing: run `make tools` (%v)", bin, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = harness.RepoRoot()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode the output of %s %s: %v", tool, strings.Join(args, " "), err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs
}

// Without kruise-daemon (daemon.enabled false, or featureGates with KruiseDaemon=false as in
// OpenKruise's chart) the chart deploys no DaemonSet and gives kruise-manager KruiseDaemon=false.
func TestChartWithoutDaemon(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		gates string
	}{
		{"daemon.enabled false", []string{"-f", "test/chart/values-nodaemon.yaml"}, "--feature-gates=ImagePullJobGate=true,KruiseDaemon=false"},
		{"KruiseDaemon=false", []string{"--set", "featureGates=KruiseDaemon=false"}, "--feature-gates=KruiseDaemon=false"},
	} {
		objs := render(t, "helm", append([]string{"template", "kruise", "charts/kruise", "--namespace", "kruise-system"}, tc.args...)...)
		var args []string
		for _, o := range objs {
			switch {
			case o.GetKind() == "DaemonSet" && o.GetAPIVersion() == "apps/v1":
				t.Errorf("%s: DaemonSet %s rendered", tc.name, o.GetName())
			case o.GetKind() == "Deployment" && o.GetName() == "kruise-manager":
				containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
				for _, c := range containers {
					a, _, _ := unstructured.NestedStringSlice(c.(map[string]any), "args")
					args = append(args, a...)
				}
			}
		}
		if !slices.Contains(args, tc.gates) {
			t.Errorf("%s: manager args %v lack %s", tc.name, args, tc.gates)
		}
	}
}

// The install manifests — the Helm chart with its defaults and with every knob set, and the
// kustomize base config/default — are each accepted object by object by a real API server, and the
// knobs land where they should.
func TestInstallManifestsAreAccepted(t *testing.T) {
	api, err := harness.StartAPIServerWithCRDs(t.TempDir()) // no CRDs: the manifests bring them
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = api.Stop() }()
	c, err := client.New(api.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name, ns, tool string
		args           []string
	}{
		{"helm defaults", "kruise-system", "helm", []string{"template", "kruise", "charts/kruise", "--namespace", "kruise-system"}},
		{"kustomize config/default", "kruise-system", "k8s/kubectl", []string{"kustomize", "config/default"}},
		{"helm every knob", "kruise-full", "helm", []string{"template", "kruise", "charts/kruise", "--namespace", "kruise-full", "-f", "test/chart/values-full.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := render(t, tc.tool, tc.args...)
			kinds := map[string]int{}
			for _, u := range objs {
				kinds[u.GetKind()]++
			}
			for kind, n := range map[string]int{"CustomResourceDefinition": 18, "Deployment": 1, "DaemonSet": 1, "Service": 1,
				"ServiceAccount": 2, "ClusterRole": 3 /* manager, daemon, kruise-metrics-reader */, "ClusterRoleBinding": 2, "Role": 3, "RoleBinding": 3, "NetworkPolicy": 1,
				// The static configurations, and the ones the manager fills per SidecarSet, per
				// WorkloadSpread, per PersistentPodState and per budget.
				"MutatingWebhookConfiguration": 4, "ValidatingWebhookConfiguration": 2} {
				if kinds[kind] != n {
					t.Errorf("%d %s objects rendered, want %d", kinds[kind], kind, n)
				}
			}
			// helm install --create-namespace makes the release's namespace (kustomize brings its own).
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tc.ns}}
			if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
			for _, u := range objs {
				if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("install-test"), client.ForceOwnership); err != nil {
					t.Errorf("%s %s/%s refused: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
				}
			}
			for _, u := range objs {
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(u.GroupVersionKind())
				if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
					t.Errorf("%s %s/%s not stored: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
				}
			}
		})
	}

	// The knobs of values-full.yaml, read back from the API server.
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "kruise-full", Name: "kruise-manager"}, dep); err != nil {
		t.Fatal(err)
	}
	pod := dep.Spec.Template.Spec
	if *dep.Spec.Replicas != 3 || !pod.HostNetwork || pod.Containers[0].Image != "registry.example/kruise:v9.9.9" ||
		pod.PriorityClassName != "system-cluster-critical" || len(pod.Tolerations) != 1 {
		t.Errorf("manager Deployment does not carry the values: replicas %d, hostNetwork %v, image %s, priority %q",
			*dep.Spec.Replicas, pod.HostNetwork, pod.Containers[0].Image, pod.PriorityClassName)
	}
	for _, arg := range []string{"--leader-elect=false", "--leader-election-lease-duration=30s", "--kube-client-qps=200",
		"--kube-client-burst=400", "--workers=8", "--webhook-port=9443", "--pod-webhook-failure-policy=Ignore", "--metrics-secure=false",
		"--pod-webhook-excluded-namespaces=monitoring,legacy-apps",
		"--webhook-client-ca-file=/etc/kruise/webhook-client-ca/ca.crt", "--webhook-client-allowed-names=kube-apiserver-webhook-client",
		"--feature-gates=PreDownloadImageForInPlaceUpdate=true,InPlaceUpdateEnvFromMetadata=true"} {
		if !slices.Contains(pod.Containers[0].Args, arg) {
			t.Errorf("manager args %v lack %s", pod.Containers[0].Args, arg)
		}
	}
	// The webhook port admits the replicas and the API server's peers of values-full.yaml only.
	np := &networkingv1.NetworkPolicy{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "kruise-full", Name: "kruise-manager"}, np); err != nil {
		t.Fatal(err)
	}
	if from := np.Spec.Ingress[0].From; len(from) != 4 || from[0].PodSelector == nil || from[1].IPBlock == nil ||
		from[1].IPBlock.CIDR != "172.16.0.0/28" || from[2].IPBlock.Except[0] != "10.244.0.0/16" || from[3].NamespaceSelector == nil ||
		np.Spec.Ingress[0].Ports[0].Port.StrVal != "webhook" {
		t.Errorf("NetworkPolicy ingress to the webhook port: %+v", np.Spec.Ingress[0])
	}
	ca := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "kruise-full", Name: "kruise-webhook-client-ca"}, ca); err != nil ||
		!strings.Contains(ca.Data["ca.crt"], "BEGIN CERTIFICATE") {
		t.Errorf("webhook client CA ConfigMap: %v %v", ca.Data, err)
	}
	ds := &appsv1.DaemonSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "kruise-full", Name: "kruise-daemon"}, ds); err != nil {
		t.Fatal(err)
	}
	dpod := ds.Spec.Template.Spec
	if dpod.Volumes[0].HostPath.Path != "/run/containerd" || !slices.Contains(dpod.Containers[0].Args, "--runtime-endpoint=unix:///run/containerd/containerd.sock") ||
		!slices.Contains(dpod.Containers[0].Args, "--max-workers-for-pull-image=4") || dpod.HostNetwork ||
		!slices.Contains(dpod.Containers[0].Args, "--metrics-secure=false") || dpod.Containers[0].LivenessProbe.HTTPGet.Scheme != corev1.URISchemeHTTP {
		t.Errorf("daemon DaemonSet does not carry the values: volumes %v, args %v", dpod.Volumes, dpod.Containers[0].Args)
	}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: "kruise-mutating-webhook-configuration"}, mwc); err != nil {
		t.Fatal(err)
	}
	for _, w := range mwc.Webhooks {
		if *w.FailurePolicy != admissionregistrationv1.Ignore || *w.TimeoutSeconds != 5 || w.ClientConfig.Service.Namespace != "kruise-full" {
			t.Errorf("webhook %s: failurePolicy %s, timeout %d, service namespace %s; want Ignore, 5, kruise-full",
				w.Name, *w.FailurePolicy, *w.TimeoutSeconds, w.ClientConfig.Service.Namespace)
		}
		if w.Name == podmutation.WebhookName {
			want := install.PodWebhookExcludedNamespaces("kruise-full", "monitoring", "legacy-apps")
			if got := w.NamespaceSelector.MatchExpressions[0].Values; !slices.Equal(got, want) {
				t.Errorf("pod webhook excludes namespaces %v, want %v", got, want)
			}
		}
	}
}
