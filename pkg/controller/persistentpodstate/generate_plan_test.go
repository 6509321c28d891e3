package persistentpodstate

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func workload(annotations map[string]string) Workload {
	return Workload{APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet", Namespace: "ns", Name: "echo", UID: "u1", Annotations: annotations}
}

func TestGenerated(t *testing.T) {
	got := Generated(workload(map[string]string{AutoGenerateAnnotation: "true",
		RequiredTopologyAnnotation:      "topology.kubernetes.io/zone, example.com/rack",
		PreferredTopologyAnnotation:     "kubernetes.io/hostname",
		PersistentAnnotationsAnnotation: "cni.projectcalico.org/podIP"}))
	if got == nil {
		t.Fatal("nothing generated")
	}
	ref := metav1.GetControllerOf(got)
	if got.Name != "echo" || got.Namespace != "ns" || ref == nil || ref.UID != "u1" || ref.APIVersion != "apps.kruise.io/v1beta1" ||
		ref.BlockOwnerDeletion != nil {
		t.Errorf("metadata %+v", got.ObjectMeta)
	}
	s := got.Spec
	if s.TargetReference != (v1alpha1.PersistentPodStateTargetReference{APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet", Name: "echo"}) {
		t.Errorf("targetRef %+v", s.TargetReference)
	}
	if s.RequiredPersistentTopology == nil || !slices.Equal(s.RequiredPersistentTopology.NodeTopologyKeys, []string{"topology.kubernetes.io/zone", "example.com/rack"}) {
		t.Errorf("required %+v", s.RequiredPersistentTopology)
	}
	if len(s.PreferredPersistentTopology) != 1 || s.PreferredPersistentTopology[0].Weight != 100 ||
		!slices.Equal(s.PreferredPersistentTopology[0].Preference.NodeTopologyKeys, []string{"kubernetes.io/hostname"}) {
		t.Errorf("preferred %+v", s.PreferredPersistentTopology)
	}
	if len(s.PersistentPodAnnotations) != 1 || s.PersistentPodAnnotations[0].Key != "cni.projectcalico.org/podIP" {
		t.Errorf("annotations %+v", s.PersistentPodAnnotations)
	}
	if Generated(workload(map[string]string{AutoGenerateAnnotation: "true", RequiredTopologyAnnotation: " , "})) != nil {
		t.Error("generated from blank keys")
	}
}

func TestPlanGenerated(t *testing.T) {
	on := map[string]string{AutoGenerateAnnotation: "true", RequiredTopologyAnnotation: "zone"}
	mine := Generated(workload(on))
	changed := mine.DeepCopy()
	changed.Spec.RequiredPersistentTopology.NodeTopologyKeys = []string{"rack"}
	foreign := mine.DeepCopy()
	foreign.OwnerReferences = nil
	deleting := workload(nil)
	deleting.Deleting = true
	cases := []struct {
		name     string
		w        Workload
		existing *v1alpha1.PersistentPodState
		want     Action
		warn     bool
	}{
		{"annotated, none yet: create", workload(on), nil, Create, false},
		{"annotated, generated already: nothing", workload(on), mine, None, false},
		{"annotations changed: update", workload(on), changed, Update, false},
		{"annotated, but a user's object of that name exists: left alone", workload(on), foreign, None, true},
		{"annotated true without topology: nothing, with a warning", workload(map[string]string{AutoGenerateAnnotation: "true"}), nil, None, true},
		{"annotation removed: the generated one is deleted", workload(nil), mine, Delete, false},
		{"annotation false: a user's object is not deleted", workload(map[string]string{AutoGenerateAnnotation: "false"}), foreign, None, false},
		{"not annotated, nothing there", workload(nil), nil, None, false},
		{"workload being deleted: garbage collection's work", deleting, mine, None, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanGenerated(tc.w, tc.existing)
			if got.Action != tc.want || got.Warn != tc.warn {
				t.Fatalf("action %s warn %v (%s), want %s warn %v", got.Action, got.Warn, got.Reason, tc.want, tc.warn)
			}
			if got.Action != None && (got.Object == nil || got.Reason == "") {
				t.Errorf("%s without an object or a reason: %+v", got.Action, got)
			}
			if got.Action == Update && (got.Object.UID != tc.existing.UID ||
				got.Object.Spec.RequiredPersistentTopology.NodeTopologyKeys[0] != "zone" || tc.existing.Spec.RequiredPersistentTopology.NodeTopologyKeys[0] != "rack") {
				t.Errorf("update %+v from %+v", got.Object, tc.existing)
			}
		})
	}
}
