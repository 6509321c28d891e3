package distributionrules

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func namespaces(byName map[string]map[string]string) []corev1.Namespace {
	var out []corev1.Namespace
	for name, labels := range byName {
		out = append(out, corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
	}
	return out
}

func list(names ...string) appsv1alpha1.ResourceDistributionTargetNamespaces {
	var out appsv1alpha1.ResourceDistributionTargetNamespaces
	for _, n := range names {
		out.List = append(out.List, appsv1alpha1.ResourceDistributionNamespace{Name: n})
	}
	return out
}

// Targets: all, or selected by label, plus the listed (existing or not), minus the excluded and
// kube-system / kube-public; every other existing namespace is in others.
func TestTargets(t *testing.T) {
	all := namespaces(map[string]map[string]string{"a": {"team": "x"}, "b": {"team": "y"}, "c": nil, "kube-system": {"team": "x"}, "kube-public": nil})
	for _, tc := range []struct {
		name          string
		targets       appsv1alpha1.ResourceDistributionTargets
		want, wantOut []string
	}{
		{"all but excluded", appsv1alpha1.ResourceDistributionTargets{AllNamespaces: true, ExcludedNamespaces: list("b")},
			[]string{"a", "c"}, []string{"b", "kube-public", "kube-system"}},
		{"selector plus a missing included", appsv1alpha1.ResourceDistributionTargets{IncludedNamespaces: list("c", "gone"),
			NamespaceLabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}},
			[]string{"a", "c", "gone"}, []string{"b", "kube-public", "kube-system"}},
		{"excluded wins over included", appsv1alpha1.ResourceDistributionTargets{IncludedNamespaces: list("a", "b"), ExcludedNamespaces: list("a")},
			[]string{"b"}, []string{"a", "c", "kube-public", "kube-system"}},
		{"an empty selector selects nothing", appsv1alpha1.ResourceDistributionTargets{}, nil, []string{"a", "b", "c", "kube-public", "kube-system"}},
		{"kube-system never, even listed", appsv1alpha1.ResourceDistributionTargets{IncludedNamespaces: list("kube-system")}, nil,
			[]string{"a", "b", "c", "kube-public", "kube-system"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, others, err := Targets(tc.targets, all)
			if err != nil || !slices.Equal(got, tc.want) || !slices.Equal(others, tc.wantOut) {
				t.Errorf("Targets = %v, %v, %v; want %v, %v", got, others, err, tc.want, tc.wantOut)
			}
		})
	}
}

func distribution(raw string) *appsv1alpha1.ResourceDistribution {
	return &appsv1alpha1.ResourceDistribution{TypeMeta: metav1.TypeMeta{APIVersion: "apps.kruise.io/v1alpha1", Kind: "ResourceDistribution"},
		ObjectMeta: metav1.ObjectMeta{Name: "pull", UID: "rd-uid"},
		Spec:       appsv1alpha1.ResourceDistributionSpec{Resource: runtime.RawExtension{Raw: []byte(raw)}}}
}

const secret = `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"regcred","namespace":"elsewhere","labels":{"app":"x"}},"stringData":{"k":"v"}}`

// Only named v1 Secrets and ConfigMaps are distributable.
func TestDecode(t *testing.T) {
	for raw, ok := range map[string]bool{
		secret: true,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`: true,
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}}`:   false,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`:           false,
		`not json`: false,
		``:         false,
	} {
		res, err := Decode([]byte(raw))
		if (err == nil) != ok {
			t.Errorf("Decode(%q) = %v, %v; want ok %v", raw, res, err, ok)
		}
		if err == nil && res.GetNamespace() != "" {
			t.Errorf("Decode(%q) kept namespace %q", raw, res.GetNamespace())
		}
	}
}

// A copy: the namespace, the distribution as controller, the two annotations (the hash of
// spec.resource as stored), stringData moved to data and the type defaulted, as stored; an
// existing copy's other metadata is kept. It needs an update only when its content differs.
func TestWantAndNeedsUpdate(t *testing.T) {
	rd := distribution(secret)
	res, err := Decode(rd.Spec.Resource.Raw)
	if err != nil {
		t.Fatal(err)
	}
	want := Want(rd, res, "ns-1", nil)
	if want.GetNamespace() != "ns-1" || want.GetAnnotations()[FromAnnotation] != "pull" ||
		want.GetAnnotations()[HashAnnotation] != Hash([]byte(secret)) {
		t.Errorf("copy metadata: %+v", want.Object["metadata"])
	}
	if ref := metav1.GetControllerOf(want); ref == nil || ref.Kind != "ResourceDistribution" || ref.Name != "pull" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("owner: %+v", want.GetOwnerReferences())
	}
	if d, _, _ := unstructured.NestedString(want.Object, "data", "k"); d != "dg==" || want.Object["type"] != "Opaque" || want.Object["stringData"] != nil {
		t.Errorf("content: %+v", want.Object)
	}
	if !ControlledBy(want, rd) {
		t.Error("a copy is not controlled by its distribution")
	}
	// OpenKruise's hash code: SHA-256, in hex, of spec.resource as stored.
	if h := Hash([]byte("abc")); h != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("Hash(abc) = %s", h)
	}
	// As stored and read back: nothing to update; an edit of its data is.
	stored := want.DeepCopy()
	stored.SetResourceVersion("7")
	stored.SetLabels(map[string]string{"app": "x", "added-by-user": "y"})
	if NeedsUpdate(stored, res) {
		t.Error("an unchanged copy needs an update")
	}
	edited := stored.DeepCopy()
	_ = unstructured.SetNestedField(edited.Object, "ZWRpdGVk", "data", "k")
	if !NeedsUpdate(edited, res) {
		t.Error("an edited copy needs no update")
	}
	again := Want(rd, res, "ns-1", edited)
	if again.GetResourceVersion() != "7" || again.GetLabels()["added-by-user"] != "y" || len(again.GetOwnerReferences()) != 1 {
		t.Errorf("update keeps the copy's metadata: %+v", again.Object["metadata"])
	}
	// Another distribution of the same name's kind, or none: not controlled.
	other := distribution(secret)
	other.Name = "other"
	if ControlledBy(want, other) {
		t.Error("controlled by another distribution")
	}
}

// Six conditions in OpenKruise's order; a condition keeps its transition time while its status stays.
func TestStatus(t *testing.T) {
	rd := distribution(secret)
	rd.Generation = 4
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	first := Status(rd, 3, 2, []Failure{{Type: appsv1alpha1.ResourceDistributionConflictOccurred, Namespace: "b", Reason: "taken"}}, t0)
	if first.Desired != 3 || first.Succeeded != 2 || first.Failed != 1 || first.ObservedGeneration != 4 || len(first.Conditions) != 6 {
		t.Fatalf("status: %+v", first)
	}
	types := []appsv1alpha1.ResourceDistributionConditionType{}
	for _, c := range first.Conditions {
		types = append(types, c.Type)
	}
	if !slices.Equal(types, conditionOrder) {
		t.Errorf("order %v", types)
	}
	c := first.Conditions[4]
	if c.Status != corev1.ConditionTrue || c.Reason != "taken" || !slices.Equal(c.FailedNamespaces, []string{"b"}) {
		t.Errorf("conflict: %+v", c)
	}
	if g := first.Conditions[0]; g.Status != corev1.ConditionFalse || g.Reason != "Succeeded" {
		t.Errorf("get: %+v", g)
	}
	rd.Status = first
	later := Status(rd, 3, 3, nil, t0.Add(time.Hour))
	if !later.Conditions[0].LastTransitionTime.Time.Equal(t0) || !later.Conditions[4].LastTransitionTime.Time.Equal(t0.Add(time.Hour)) {
		t.Errorf("transition times: %v, %v", later.Conditions[0].LastTransitionTime, later.Conditions[4].LastTransitionTime)
	}
}
