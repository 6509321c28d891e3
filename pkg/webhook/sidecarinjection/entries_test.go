package sidecarinjection

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func set(name string, sel *metav1.LabelSelector) *v1beta1.SidecarSet {
	return &v1beta1.SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1beta1.SidecarSetSpec{Selector: sel}}
}

func TestEntries(t *testing.T) {
	app := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	paused := set("paused", app)
	paused.Spec.InjectionStrategy.Paused = true
	scoped := set("scoped", app)
	scoped.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
	alpha := set("alpha", app)
	alpha.Annotations = map[string]string{v1alpha1.ConversionV1alpha1OnlyAnnotation: `{"spec":{"namespace":"ns1"}}`}
	bad := set("bad", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}})
	sets := []*v1beta1.SidecarSet{set("zeta", app), paused, scoped, alpha, set("empty", &metav1.LabelSelector{}), set("none", nil), bad}
	svc := admissionregistrationv1.WebhookClientConfig{CABundle: []byte("ca"),
		Service: &admissionregistrationv1.ServiceReference{Namespace: "kruise-system", Name: "svc", Path: ptr.To("/mutate-pod"), Port: ptr.To[int32](443)}}
	got, skipped := Entries(sets, EntryOptions{ClientConfig: svc, ExcludedNamespaces: []string{"kube-system"}})

	var names []string
	for _, w := range got {
		names = append(names, w.Name)
	}
	if want := "alpha.sidecarset.kruise.io,scoped.sidecarset.kruise.io,zeta.sidecarset.kruise.io"; strings.Join(names, ",") != want {
		t.Fatalf("entries %v, want %s", names, want)
	}
	for name, why := range map[string]string{"paused": SkipPaused, "empty": SkipSelector, "none": SkipSelector, "bad": SkipSelector} {
		if skipped[name] != why {
			t.Errorf("%s skipped for %q, want %q", name, skipped[name], why)
		}
	}
	zeta := got[2]
	if *zeta.FailurePolicy != admissionregistrationv1.Fail || *zeta.ClientConfig.Service.Path != PathPrefix+"zeta" ||
		*svc.Service.Path != "/mutate-pod" || string(zeta.ClientConfig.CABundle) != "ca" {
		t.Errorf("zeta: failure policy %s, path %s (base path %s), CA %q", *zeta.FailurePolicy, *zeta.ClientConfig.Service.Path, *svc.Service.Path, zeta.ClientConfig.CABundle)
	}
	if zeta.ObjectSelector.MatchLabels["app"] != "web" || len(zeta.NamespaceSelector.MatchExpressions) != 1 {
		t.Errorf("zeta selectors: object %v, namespace %v", zeta.ObjectSelector, zeta.NamespaceSelector)
	}
	ops := zeta.Rules[0].Operations
	if len(ops) != 1 || ops[0] != admissionregistrationv1.Create || zeta.Rules[0].Resources[0] != "pods" {
		t.Errorf("zeta rules %+v", zeta.Rules)
	}
	if ns := got[1].NamespaceSelector; ns.MatchLabels["team"] != "a" || len(ns.MatchExpressions) != 1 {
		t.Errorf("scoped namespace selector %v", ns)
	}
	if ns := got[0].NamespaceSelector; len(ns.MatchExpressions) != 2 || ns.MatchExpressions[0].Key != corev1.LabelMetadataName ||
		ns.MatchExpressions[0].Values[0] != "ns1" {
		t.Errorf("v1alpha1 namespace not in the namespace selector: %v", ns)
	}
	if sets[2].Spec.NamespaceSelector.MatchExpressions != nil {
		t.Errorf("Entries modified its input")
	}
}

func TestEntryURLMode(t *testing.T) {
	cfg := admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:9876/mutate-pod")}
	got, _ := Entries([]*v1beta1.SidecarSet{set("a.b", &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}})}, EntryOptions{ClientConfig: cfg})
	if *got[0].ClientConfig.URL != "https://127.0.0.1:9876"+PathPrefix+"a.b" {
		t.Errorf("URL %s", *got[0].ClientConfig.URL)
	}
	if len(got[0].MatchConditions) != 0 {
		t.Errorf("an entry skips pods by what their author wrote: %v", got[0].MatchConditions)
	}
}

func TestEntryNameFitsLongNames(t *testing.T) {
	long := strings.Repeat("a", 253)
	if n := EntryName(long); len(n) > 253 || !strings.HasSuffix(n, ".sidecarset.kruise.io") {
		t.Errorf("EntryName of a 253-character name: %s", n)
	}
	if EntryName(long) == EntryName(long[:252]) {
		t.Errorf("two long names share an entry")
	}
}
