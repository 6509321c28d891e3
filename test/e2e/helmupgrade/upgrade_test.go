// Package helmupgrade proves the Helm path from OpenKruise to Kruise on a live API server: a release
// of OpenKruise v1.9's chart (a stand-in for its templates, with its own Chart.yaml, values.yaml
// and CRDs), upgraded to Kruise's chart with a values file in OpenKruise's keys, then rolled back.
package helmupgrade

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/compat"
	"github.com/kruise-ng/kruise/test/harness"
)

var (
	sb *sandbox.Sandbox
	cs kubernetes.Interface
	kc client.Client
)

func TestMain(m *testing.M) {
	harness.Main(m, func() (func() error, error) {
		var err error
		// No Kruise: the releases below install everything.
		if sb, err = harness.StartSandboxWithoutKruise(2, os.Stderr); err != nil {
			return nil, err
		}
		cfg, err := sb.RESTConfig()
		if err != nil {
			return nil, err
		}
		cs = kubernetes.NewForConfigOrDie(cfg)
		if kc, err = harness.NewKruiseClient(cfg); err != nil {
			return nil, err
		}
		return func() error { return harness.Down(sb) }, nil
	})
}

// held is what must not change across the upgrade and the rollback: the namespaces OpenKruise's
// chart made, its CRDs, and the workloads and pods in the cluster (the same objects, unwritten).
type held map[string]string

// TestHelmUpgradeFromOpenKruiseAndBack installs OpenKruise's release (`helm install kruise` in
// namespace default, as OpenKruise documents it, with test/chart/values-openkruise.yaml), runs a
// CloneSet with its pods, upgrades the release to charts/kruise with the same values file, and
// rolls it back. Each way: kruise-system, kruise-daemon-config, the CRDs, the CloneSet and its pods are the same objects
// (UID) and not written (resourceVersion); the manager and daemon are the other project's.
func TestHelmUpgradeFromOpenKruiseAndBack(t *testing.T) {
	ctx := context.Background()
	values := filepath.Join(harness.RepoRoot(), "test", "chart", "values-openkruise.yaml")
	openkruise := standInChart(t)

	harness.Helm(t, sb, "install", "kruise", openkruise, "-n", "default", "-f", values)
	checkManager(t, "kruise-controller-manager", "registry.corp.example/mirror/kruise:v0.1.0")
	workload(t)
	before := settled(t)

	harness.Helm(t, sb, "upgrade", "kruise", "charts/kruise", "-n", "default", "-f", values)
	checkHeld(t, "upgrade to Kruise's chart", before)
	checkManager(t, "kruise-manager", "registry.corp.example/mirror/kruise:v0.1.0")
	gone(t, "OpenKruise's manager", "kruise-controller-manager")
	sa, err := cs.CoreV1().ServiceAccounts("kruise-system").Get(ctx, "kruise-manager", metav1.GetOptions{})
	if err != nil || sa.Annotations["eks.amazonaws.com/role-arn"] == "" {
		t.Errorf("kruise-manager's ServiceAccount lost serviceAccount.annotations (err %v): %v", err, sa)
	}

	harness.Helm(t, sb, "rollback", "kruise", "1", "-n", "default")
	checkHeld(t, "rollback to OpenKruise's release", before)
	checkManager(t, "kruise-controller-manager", "registry.corp.example/mirror/kruise:v0.1.0")
	gone(t, "Kruise's manager", "kruise-manager")
}

// standInChart assembles OpenKruise's release chart in a temporary folder: the stand-in templates
// of testdata, OpenKruise's Chart.yaml and values.yaml, and its CRDs.
func standInChart(t *testing.T) string {
	t.Helper()
	oracle := compat.OracleDir(harness.RepoRoot())
	dir := filepath.Join(t.TempDir(), "kruise")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "openkruise-release"))); err != nil {
		t.Fatal(err)
	}
	copies := map[string]string{"Chart.yaml": "chart/Chart.yaml", "values.yaml": "chart/values.yaml"}
	crds, err := filepath.Glob(filepath.Join(oracle, "crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("OpenKruise's CRDs in %s: %v", oracle, err)
	}
	for _, f := range crds {
		copies[filepath.Join("files", "crds", filepath.Base(f))] = filepath.Join("crds", filepath.Base(f))
	}
	for to, from := range copies {
		data, err := os.ReadFile(filepath.Join(oracle, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, to)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// workload is a CloneSet with three pods as OpenKruise's manager left them (no manager runs here:
// nothing but the releases may write to them).
func workload(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	clone := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"},
		Spec: appsv1alpha1.CloneSetSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:v1"}}}}}}
	harness.Eventually(t, 30*time.Second, "the CloneSet created (its CRD established)", func() (bool, string) {
		err := kc.Create(ctx, clone)
		return err == nil, fmt.Sprintf("create: %v", err)
	})
	for i := range 3 {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: fmt.Sprintf("web-%d", i),
			Labels: map[string]string{"app": "web", "controller-revision-hash": "web-1"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web",
				UID: clone.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: *clone.Spec.Template.Spec.DeepCopy()}
		pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
		if _, err := cs.CoreV1().Pods("apps").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	harness.Eventually(t, 60*time.Second, "the CloneSet's pods running", func() (bool, string) {
		pods, err := cs.CoreV1().Pods("apps").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		ready := 0
		for i := range pods.Items {
			if harness.PodCondition(&pods.Items[i], corev1.PodReady) == corev1.ConditionTrue {
				ready++
			}
		}
		return ready == 3, fmt.Sprintf("%d of %d ready", ready, len(pods.Items))
	})
}

// settled is the snapshot once the node simulator has written the pods' last status: unchanged
// for a second.
func settled(t *testing.T) held {
	t.Helper()
	var last held
	var since time.Time
	harness.Eventually(t, 30*time.Second, "the held objects unchanged for 1 s", func() (bool, string) {
		if cur := snapshot(t); !maps.Equal(cur, last) {
			last, since = cur, time.Now()
		}
		return time.Since(since) >= time.Second, fmt.Sprint(last)
	})
	return last
}

// snapshot is UID/resourceVersion of each held object.
func snapshot(t *testing.T) held {
	t.Helper()
	ctx := context.Background()
	out := held{}
	for _, name := range []string{"kruise-system", "kruise-daemon-config"} {
		ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out["namespace/"+name] = string(ns.UID) // a namespace's metadata is Helm's to label
	}
	cfg, err := sb.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	crds, err := apiextensionsclient.NewForConfigOrDie(cfg).ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds.Items {
		if strings.HasSuffix(crd.Name, ".kruise.io") {
			out["crd/"+crd.Name] = string(crd.UID) // their specs are each release's
		}
	}
	clone := &appsv1alpha1.CloneSet{}
	if err := kc.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "web"}, clone); err != nil {
		t.Fatal(err)
	}
	out["cloneset/web"] = string(clone.UID) + "@" + clone.ResourceVersion
	pods, err := cs.CoreV1().Pods("apps").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		out["pod/"+p.Name] = string(p.UID) + "@" + p.ResourceVersion
	}
	return out
}

func checkHeld(t *testing.T, step string, before held) {
	t.Helper()
	after := snapshot(t)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %s was %s, now %q (deleted, recreated or written)", step, k, v, after[k])
		}
	}
	if len(after) != len(before) {
		t.Errorf("%s: %d held objects, was %d", step, len(after), len(before))
	}
}

// checkManager checks that the manager Deployment name runs image in kruise-system, and the daemon
// too (the kruise-daemon DaemonSet, whoever's).
func checkManager(t *testing.T, name, image string) {
	t.Helper()
	ctx := context.Background()
	d, err := cs.AppsV1().Deployments("kruise-system").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("manager Deployment %s: %v", name, err)
	}
	ds, err := cs.AppsV1().DaemonSets("kruise-system").Get(ctx, "kruise-daemon", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("kruise-daemon: %v", err)
	}
	for what, c := range map[string][]corev1.Container{"Deployment " + name: d.Spec.Template.Spec.Containers, "DaemonSet kruise-daemon": ds.Spec.Template.Spec.Containers} {
		if len(c) == 0 || c[0].Image != image {
			t.Errorf("%s: containers %v, want image %s", what, c, image)
		}
	}
}

func gone(t *testing.T, what, name string) {
	t.Helper()
	_, err := cs.AppsV1().Deployments("kruise-system").Get(context.Background(), name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("%s (Deployment %s) still there (err %v)", what, name, err)
	}
}
