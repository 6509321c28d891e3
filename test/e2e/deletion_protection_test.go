package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/test/harness"
)

const protection = policyv1alpha1.DeletionProtectionKey

// protected are labels with the deletion protection label set to v.
func protected(v string) map[string]string { return map[string]string{protection: v} }

// dryRun asks for the deletion without doing it (admission webhooks are called all the same).
var dryRun = metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}

// refused checks that err is the webhook's denial: 403 with every one of want in its message.
func refused(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: deleted; want refused", what)
	}
	if !apierrors.IsForbidden(err) {
		t.Fatalf("%s: %v; want 403 Forbidden", what, err)
	}
	// OpenKruise's phrase, which scripts match, is in every refusal beside Kruise's own account.
	for _, w := range append([]string{"forbidden by ResourcesProtectionDeletion"}, want...) {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q lacks %q", what, err.Error(), w)
		}
	}
}

// whenAdmitted polls a dry-run deletion until its answer satisfies ok (the manager's cache catches
// up with the dependents), then deletes for real and returns that deletion's error.
func whenAdmitted(t *testing.T, what string, del func(metav1.DeleteOptions) error, ok func(error) bool) error {
	t.Helper()
	harness.Eventually(t, 30*time.Second, what, func() (bool, string) {
		err := del(dryRun)
		return ok(err), fmt.Sprint(err)
	})
	return del(metav1.DeleteOptions{})
}

// unlabel removes the protection label, so that a test's leftovers can be deleted.
var unlabel = client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+protection+`":null}}}`))

// TestDeletionProtection: the label policy.kruise.io/delete-protection refuses deletions (Always:
// every one; Cascading: while a namespace has pods, a CloneSet replicas, a CRD custom resources);
// other values and unlabelled objects are deleted as usual, without calling Kruise at all.
func TestDeletionProtection(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	newNamespace := func(t *testing.T, prefix, v string) *corev1.Namespace {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + rand.String(5), Labels: protected(v)}}
		if err := c.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = c.Patch(context.Background(), ns, unlabel)
			_ = c.Delete(context.Background(), ns)
		})
		return ns
	}
	deleteNamespace := func(name string) func(metav1.DeleteOptions) error {
		return func(o metav1.DeleteOptions) error { return cs.CoreV1().Namespaces().Delete(ctx, name, o) }
	}

	t.Run("namespace Always", func(t *testing.T) {
		ns := newNamespace(t, "dp-always", "Always")
		err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		refused(t, "namespace labelled Always", err, "Namespace "+ns.Name, protection+"=Always")
		if v := metricValue(scrape(t), "namespace_deletion_protection", map[string]string{"name": ns.Name}); v < 1 {
			t.Errorf("namespace_deletion_protection of %s is %v, want the refusal counted (OpenKruise's metric)", ns.Name, v)
		}
		if err := c.Patch(ctx, ns, unlabel); err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("namespace without the label: %v", err)
		}
	})

	t.Run("namespace Cascading", func(t *testing.T) {
		ns := newNamespace(t, "dp-cascading", "Cascading")
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "one"}, Spec: podSpec("registry.example/app:v1")}
		if err := c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		err := whenAdmitted(t, "the manager sees the namespace's pod", deleteNamespace(ns.Name), func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "still contains 1 active pod")
		})
		refused(t, "namespace labelled Cascading with a pod", err, "Namespace "+ns.Name, protection+"=Cascading", "still contains 1 active pod")
		if err := c.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
		err = whenAdmitted(t, "the manager sees the namespace empty", deleteNamespace(ns.Name), func(err error) bool { return err == nil })
		if err != nil {
			t.Errorf("empty namespace labelled Cascading: %v", err)
		}
	})

	t.Run("CloneSet Cascading", func(t *testing.T) {
		ns := namespace(t)
		clone := newCloneSet(ns, "kept", 1, appsv1alpha1.RecreateCloneSetUpdateStrategyType)
		clone.Labels = protected("Cascading")
		plain := newCloneSet(ns, "plain", 1, appsv1alpha1.RecreateCloneSetUpdateStrategyType)
		for _, o := range []*appsv1alpha1.CloneSet{clone, plain} {
			if err := c.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		refused(t, "CloneSet with 1 replica", c.Delete(ctx, clone), "CloneSet "+ns+"/kept", "spec.replicas is 1")
		if v := metricValue(scrape(t), "workload_deletion_protection", map[string]string{"kind_namespace_name": "CloneSet_" + ns + "_kept"}); v < 1 {
			t.Errorf("workload_deletion_protection of the CloneSet is %v, want the refusal counted (OpenKruise's metric)", v)
		}
		if err := c.Delete(ctx, plain); err != nil {
			t.Errorf("unlabelled CloneSet: %v", err)
		}
		patchCloneSet(t, c, clone, `{"spec":{"replicas":0}}`)
		if err := c.Delete(ctx, clone); err != nil {
			t.Errorf("CloneSet labelled Cascading scaled to 0: %v", err)
		}
	})

	t.Run("Services", func(t *testing.T) {
		ns := namespace(t)
		svc := func(name string, labels map[string]string) *corev1.Service {
			s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
			if err := c.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
			return s
		}
		always := svc("always", protected("Always"))
		refused(t, "Service labelled Always", c.Delete(ctx, always), "Service "+ns+"/always", protection+"=Always")
		// Cascading does not protect a Service (as in OpenKruise); other values protect nothing.
		for _, s := range []*corev1.Service{svc("cascading", protected("Cascading")), svc("lowercase", protected("always")),
			svc("never", protected("Never")), svc("plain", nil)} {
			if err := c.Delete(ctx, s); err != nil {
				t.Errorf("Service %s %v: %v", s.Name, s.Labels, err)
			}
		}
		if err := c.Patch(ctx, always, unlabel); err != nil {
			t.Fatal(err)
		}
	})

	// While Kruise is down, a protected object is not deleted, and others are deleted as usual:
	// the API server does not call Kruise for them.
	t.Run("Kruise down", func(t *testing.T) {
		ns := namespace(t)
		var services []*corev1.Service
		for name, labels := range map[string]map[string]string{"always": protected("Always"), "never": protected("Never"), "plain": nil} {
			s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
			if err := c.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
			services = append(services, s)
		}
		plainNS := newNamespace(t, "dp-plain", "")
		err := sb.WithoutKruiseManager(ctx, func() error {
			var errs []string
			for _, s := range services {
				err := c.Delete(ctx, s)
				switch {
				case s.Name == "always" && err == nil:
					errs = append(errs, "Service labelled Always deleted while Kruise was down")
				case s.Name != "always" && err != nil:
					errs = append(errs, fmt.Sprintf("Service %s %v: %v", s.Name, s.Labels, err))
				}
			}
			if err := cs.CoreV1().Namespaces().Delete(ctx, plainNS.Name, metav1.DeleteOptions{}); err != nil {
				errs = append(errs, "unlabelled namespace: "+err.Error())
			}
			if len(errs) > 0 {
				return fmt.Errorf("%s", strings.Join(errs, "; "))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		left := &corev1.Service{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "always"}, left); err != nil {
			t.Fatalf("Service labelled Always after the outage: %v", err)
		}
		refused(t, "Service labelled Always, Kruise back", c.Delete(ctx, left), protection+"=Always")
		if err := c.Patch(ctx, left, unlabel); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("CRD Cascading", func(t *testing.T) { crdCascading(t, c) })
}

// crdCascading: a throwaway CRD labelled Always, then Cascading: without the feature gate
// DeletionProtectionForCRDCascadingGate Cascading refuses its deletion outright; with it, while a
// custom resource exists.
func crdCascading(t *testing.T, c client.Client) {
	ctx := context.Background()
	cfg, err := sb.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	group := "dp" + rand.String(5) + ".e2e.kruise.io"
	crd := &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group, Labels: protected("Always")},
		Spec: apiextv1.CustomResourceDefinitionSpec{Group: group, Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}}},
	}
	if err := c.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Patch(context.Background(), crd, unlabel)
		_ = c.Delete(context.Background(), crd)
	})
	harness.Eventually(t, 30*time.Second, "CRD established", func() (bool, string) {
		got := &apiextv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, got); err != nil {
			return false, err.Error()
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextv1.Established && cond.Status == apiextv1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprint(got.Status.Conditions)
	})
	ns := namespace(t)
	widgets := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "one"}}}
	if _, err := widgets.Create(ctx, w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	refused(t, "CRD labelled Always", c.Delete(ctx, crd), "CustomResourceDefinition "+crd.Name, protection+"=Always")
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+protection+`":"Cascading"}}}`))
	if err := c.Patch(ctx, crd, patch); err != nil {
		t.Fatal(err)
	}
	refused(t, "CRD labelled Cascading without the gate", c.Delete(ctx, crd), protection+"=Cascading", "DeletionProtectionForCRDCascadingGate")

	if err := sb.RestartKruiseManager(ctx, "DeletionProtectionForCRDCascadingGate=true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.RestartKruiseManager(context.Background(), ""); err != nil {
			t.Errorf("restore the manager's feature gates: %v", err)
		}
	})
	refused(t, "CRD labelled Cascading with a custom resource", c.Delete(ctx, crd),
		"CustomResourceDefinition "+crd.Name, "still has 1 custom resource (widgets."+group+")")
	if err := widgets.Delete(ctx, "one", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, crd); err != nil {
		t.Errorf("CRD labelled Cascading without custom resources: %v", err)
	}
}
