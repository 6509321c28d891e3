package topologypin

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

const zone = "topology.kubernetes.io/zone"

func spec(required []string, preferred ...v1alpha1.PersistentPodStatePreferredTopologyTerm) v1alpha1.PersistentPodStateSpec {
	s := v1alpha1.PersistentPodStateSpec{TargetReference: v1alpha1.PersistentPodStateTargetReference{
		APIVersion: "apps.kruise.io/v1alpha1", Kind: "StatefulSet", Name: "db"}, PreferredPersistentTopology: preferred}
	if required != nil {
		s.RequiredPersistentTopology = &v1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: required}
	}
	return s
}

func prefer(weight int32, keys ...string) v1alpha1.PersistentPodStatePreferredTopologyTerm {
	return v1alpha1.PersistentPodStatePreferredTopologyTerm{Weight: weight, Preference: v1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: keys}}
}

func in(key, value string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}
}

func TestTopology(t *testing.T) {
	recorded := v1alpha1.PersistentPodStatePodState{NodeName: "n1",
		NodeTopologyLabels: map[string]string{zone: "a", corev1.LabelHostname: "n1", "rack": "r7"}}
	cases := []struct {
		name      string
		spec      v1alpha1.PersistentPodStateSpec
		required  map[string]string
		preferred []corev1.PreferredSchedulingTerm
	}{{
		name:     "required keys become a node selector on their recorded values",
		spec:     spec([]string{zone, "rack"}),
		required: map[string]string{zone: "a", "rack": "r7"},
	}, {
		name: "each preferred topology becomes a term of its weight, one requirement per recorded key",
		spec: spec(nil, prefer(100, corev1.LabelHostname), prefer(20, zone, "rack")),
		preferred: []corev1.PreferredSchedulingTerm{
			{Weight: 100, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{in(corev1.LabelHostname, "n1")}}},
			{Weight: 20, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{in(zone, "a"), in("rack", "r7")}}},
		},
	}, {
		name:     "keys the state did not record are left out; a term left with none is dropped",
		spec:     spec([]string{zone, "missing"}, prefer(50, "missing")),
		required: map[string]string{zone: "a"},
	}, {
		name: "nothing recorded for the required keys: no node selector",
		spec: spec([]string{"missing"}),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			required, preferred := Topology(&tc.spec, recorded)
			if !maps.Equal(required, tc.required) || (required == nil) != (tc.required == nil) {
				t.Errorf("required %v, want %v", required, tc.required)
			}
			if !equality.Semantic.DeepEqual(preferred, tc.preferred) {
				t.Errorf("preferred %+v, want %+v", preferred, tc.preferred)
			}
		})
	}
}

func newPod(name string, owner *metav1.OwnerReference) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return p
}

func owner(apiVersion, kind, name string, controller bool) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: "u", Controller: ptr.To(controller)}
}

func TestTargets(t *testing.T) {
	pps := &v1alpha1.PersistentPodState{Spec: spec([]string{zone})}
	cases := []struct {
		owner *metav1.OwnerReference
		want  bool
	}{
		{owner("apps.kruise.io/v1beta1", "StatefulSet", "db", true), true}, // any version of the group
		{owner("apps.kruise.io/v1alpha1", "StatefulSet", "db", true), true},
		{owner("apps/v1", "StatefulSet", "db", true), false}, // another group
		{owner("apps.kruise.io/v1beta1", "StatefulSet", "other", true), false},
		{owner("apps.kruise.io/v1alpha1", "CloneSet", "db", true), false},
		{owner("apps.kruise.io/v1beta1", "StatefulSet", "db", false), false}, // not its controller
		{nil, false},
	}
	for _, tc := range cases {
		if got := Targets(pps, newPod("db-0", tc.owner)); got != tc.want {
			t.Errorf("owner %+v: targeted %v, want %v", tc.owner, got, tc.want)
		}
	}
	// A custom workload's pods (its entry exists only when the whitelist lists it).
	custom := &v1alpha1.PersistentPodState{Spec: spec([]string{zone})}
	custom.Spec.TargetReference = v1alpha1.PersistentPodStateTargetReference{APIVersion: "v1", Kind: "ReplicationController", Name: "db"}
	if !Targets(custom, newPod("db-0", owner("v1", "ReplicationController", "db", true))) ||
		Targets(custom, newPod("db-0", owner("apps/v1", "ReplicationController", "db", true))) {
		t.Error("a ReplicationController's pods: targeted wrongly")
	}
}

func TestInject(t *testing.T) {
	pps := &v1alpha1.PersistentPodState{ObjectMeta: metav1.ObjectMeta{Name: "db-state"},
		Spec: spec([]string{zone}, prefer(60, corev1.LabelHostname)),
		Status: v1alpha1.PersistentPodStateStatus{PodStates: map[string]v1alpha1.PersistentPodStatePodState{
			"db-0": {NodeName: "n1", NodeTopologyLabels: map[string]string{zone: "a", corev1.LabelHostname: "n1"}},
			"db-1": {NodeName: "n2"},
		}}}
	existing := corev1.PreferredSchedulingTerm{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{in("disk", "ssd")}}}
	pod := newPod("db-0", owner("apps.kruise.io/v1beta1", "StatefulSet", "db", true))
	pod.Spec.NodeSelector = map[string]string{"pool": "data", zone: "user-choice"}
	pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{existing}}}
	if !Inject(pod, pps) {
		t.Fatal("nothing injected into db-0")
	}
	if want := map[string]string{"pool": "data", zone: "a"}; !maps.Equal(pod.Spec.NodeSelector, want) {
		t.Errorf("nodeSelector %v, want %v (the recorded zone overrides)", pod.Spec.NodeSelector, want)
	}
	terms := pod.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	if len(terms) != 2 || !equality.Semantic.DeepEqual(terms[0], existing) || terms[1].Weight != 60 ||
		!equality.Semantic.DeepEqual(terms[1].Preference.MatchExpressions, []corev1.NodeSelectorRequirement{in(corev1.LabelHostname, "n1")}) {
		t.Errorf("preferred terms %+v", terms)
	}
	if pod.Annotations[InjectedAnnotation] != "db-state" {
		t.Errorf("annotations %v", pod.Annotations)
	}
	for _, name := range []string{"db-1", "db-2"} { // no topology recorded; nothing recorded
		p := newPod(name, owner("apps.kruise.io/v1beta1", "StatefulSet", "db", true))
		if Inject(p, pps) || p.Annotations != nil || p.Spec.NodeSelector != nil || p.Spec.Affinity != nil {
			t.Errorf("%s changed: %+v", name, p)
		}
	}
}
