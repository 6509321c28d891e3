package statefulset

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// Snapshot is everything the planner may look at: an immutable view of one Advanced StatefulSet
// and the pods it owns, built by observe from the cache. The planner never modifies it.
type Snapshot struct {
	// Spec is the spec after defaulting (apis/apps/defaults.SetDefaultsStatefulSetV1beta1).
	Spec v1beta1.StatefulSetSpec
	// Name is the StatefulSet's name (pods are <Name>-<ordinal>).
	Name string
	// Reserved are the ordinals reserveOrdinals skips (as intervals: observe refuses a spec beyond
	// pkg/core/ordinal's bounds before any pod is read).
	Reserved ordinal.Reserved
	// CurrentRevision is the revision the pods below the partition keep (status.currentRevision);
	// UpdateRevision is the revision of the current pod template.
	CurrentRevision, UpdateRevision string
	// InPlace holds, per source revision, the in-place decision for moving a pod of that revision
	// to UpdateRevision. A missing entry means the pod must be recreated.
	InPlace map[string]inplace.Decision
	// Pods are the facts of every pod the set owns whose name carries an ordinal, terminating,
	// failed and succeeded ones included, by ascending ordinal.
	Pods []PodFacts
}

// PodFacts is what the planner needs to know about one owned pod.
type PodFacts struct {
	podcontrol.State
	// Name is the pod's name; Ordinal the ordinal in it.
	Name    string
	Ordinal int
	// Labels are the pod's labels (unorderedUpdate.priorityStrategy reads them); shared with the
	// cache, never modified.
	Labels map[string]string
	// Revision is the revision the pod's controller-revision-hash label names.
	Revision string
	// ClaimsBehind: under volumeClaimUpdateStrategy OnPodRollingUpdate, a claim of the pod requests
	// less storage than its template (it is to be expanded); ClaimsResizing: its claims request
	// enough, but one's capacity has not reached its request yet.
	ClaimsBehind, ClaimsResizing bool
	// SpecifiedDelete: the pod carries the apps.kruise.io/specified-delete label; it is deleted and
	// created again.
	SpecifiedDelete bool
}

// running reports whether the pod's phase is Running.
func (p *PodFacts) running() bool { return p.Phase == corev1.PodRunning }

// finished reports whether the pod ran to an end (Failed or Succeeded): it is replaced.
func (p *PodFacts) finished() bool {
	return p.Phase == corev1.PodFailed || p.Phase == corev1.PodSucceeded
}

// healthy is upstream StatefulSet's "running and ready", with Kruise's availability: the pod
// runs, is ready for minReady, and is in no in-place update or lifecycle action.
func (p *PodFacts) healthy(now time.Time, minReady time.Duration) bool {
	return p.running() && p.Available(now, minReady)
}
