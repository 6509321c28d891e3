package persistentpodstate

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// Annotations of a StatefulSet that ask for a generated PersistentPodState (OpenKruise's names).
const (
	// AutoGenerateAnnotation "true" asks for a PersistentPodState named as the workload.
	AutoGenerateAnnotation = "kruise.io/auto-generate-persistent-pod-state"
	// RequiredTopologyAnnotation lists, comma-separated, the node label keys of the required topology.
	RequiredTopologyAnnotation = "kruise.io/required-persistent-topology"
	// PreferredTopologyAnnotation lists the node label keys of a preferred topology of weight 100.
	PreferredTopologyAnnotation = "kruise.io/preferred-persistent-topology"
	// PersistentAnnotationsAnnotation lists the pod annotation keys to record.
	PersistentAnnotationsAnnotation = "kruise.io/persistent-pod-annotations"
)

// preferredWeight is the weight of the preferred topology an annotation asks for.
const preferredWeight = 100

// Workload is what generation reads of a StatefulSet.
type Workload struct {
	// APIVersion and Kind are the workload's, as in its owner references.
	APIVersion, Kind string
	Namespace, Name  string
	UID              types.UID
	Annotations      map[string]string
	Deleting         bool
}

// Action is what generation does.
type Action string

// Actions of a Generation.
const (
	None   Action = "None"
	Create Action = "Create"
	Update Action = "Update"
	Delete Action = "Delete"
)

// Generation is the decision for one workload's generated PersistentPodState.
type Generation struct {
	Action Action
	// Object is the object to create, the existing object with its new spec to update, or the
	// existing object to delete.
	Object *v1alpha1.PersistentPodState
	// Reason says why; a None with a Reason is worth telling the user (Warn).
	Reason string
	Warn   bool
}

// PlanGenerated decides what to do with the PersistentPodState named as w (existing, nil when
// there is none) from w's annotations.
func PlanGenerated(w Workload, existing *v1alpha1.PersistentPodState) Generation {
	owned := existing != nil && controlledBy(existing, w.UID)
	switch {
	case w.Deleting:
		return Generation{Action: None, Reason: "the workload is being deleted; garbage collection removes what it owns"}
	case w.Annotations[AutoGenerateAnnotation] != "true":
		if owned && existing.DeletionTimestamp == nil {
			return Generation{Action: Delete, Object: existing,
				Reason: fmt.Sprintf("annotation %s is no longer \"true\"", AutoGenerateAnnotation)}
		}
		return Generation{Action: None}
	}
	want := Generated(w)
	switch {
	case want == nil:
		return Generation{Action: None, Warn: true, Reason: fmt.Sprintf("annotation %s is \"true\" but neither %s nor %s names a node label",
			AutoGenerateAnnotation, RequiredTopologyAnnotation, PreferredTopologyAnnotation)}
	case existing == nil:
		return Generation{Action: Create, Object: want, Reason: "generated from the workload's annotations"}
	case !owned:
		return Generation{Action: None, Warn: true, Reason: fmt.Sprintf("PersistentPodState %s exists and is not controlled by this workload: left as it is", existing.Name)}
	case existing.DeletionTimestamp != nil:
		return Generation{Action: None, Reason: "the generated PersistentPodState is being deleted; it is created again once gone"}
	case equality.Semantic.DeepEqual(existing.Spec, want.Spec):
		return Generation{Action: None}
	}
	next := existing.DeepCopy()
	next.Spec = want.Spec
	return Generation{Action: Update, Object: next, Reason: "the workload's annotations changed"}
}

// Generated is the PersistentPodState w's annotations ask for (defaulted as the API stores it),
// controlled by w, or nil when they name no topology.
func Generated(w Workload) *v1alpha1.PersistentPodState {
	required := splitKeys(w.Annotations[RequiredTopologyAnnotation])
	preferred := splitKeys(w.Annotations[PreferredTopologyAnnotation])
	if len(required) == 0 && len(preferred) == 0 {
		return nil
	}
	out := &v1alpha1.PersistentPodState{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: w.APIVersion, Kind: w.Kind, Name: w.Name, UID: w.UID, Controller: ptr.To(true)}}},
		Spec: v1alpha1.PersistentPodStateSpec{TargetReference: v1alpha1.PersistentPodStateTargetReference{
			APIVersion: w.APIVersion, Kind: w.Kind, Name: w.Name}},
	}
	if len(required) > 0 {
		out.Spec.RequiredPersistentTopology = &v1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: required}
	}
	for _, k := range splitKeys(w.Annotations[PersistentAnnotationsAnnotation]) {
		out.Spec.PersistentPodAnnotations = append(out.Spec.PersistentPodAnnotations, v1alpha1.PersistentPodStatePersistentPodAnnotation{Key: k})
	}
	if len(preferred) > 0 {
		out.Spec.PreferredPersistentTopology = []v1alpha1.PersistentPodStatePreferredTopologyTerm{{
			Weight: preferredWeight, Preference: v1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: preferred}}}
	}
	defaults.SetDefaultsPersistentPodState(out)
	return out
}

// splitKeys reads a comma-separated list, blanks around entries and empty entries ignored.
func splitKeys(s string) []string {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

func controlledBy(o metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOf(o)
	return ref != nil && ref.UID == uid
}
