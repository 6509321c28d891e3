package cloneset

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// Snapshot is everything the planner may look at: an immutable view of one CloneSet and the pods it
// owns, built by observe from the cache. The planner never modifies it.
type Snapshot struct {
	// Spec is the CloneSet spec after defaulting (apis/apps/defaults.SetDefaultsCloneSet). Nil
	// strategy fields fall back to the same defaults.
	Spec v1alpha1.CloneSetSpec
	// CurrentRevision is the revision pods kept by the partition run (status.currentRevision);
	// pods created to keep the partition get it.
	CurrentRevision string
	// UpdateRevision is the revision of the current pod template (status.updateRevision).
	UpdateRevision string
	// InPlace holds, per source revision, the in-place decision (pkg/core/inplace.Plan) for moving a pod
	// of that revision to UpdateRevision. A missing entry means the pod must be recreated.
	InPlace map[string]inplace.Decision
	// Rollback is the in-place decision for moving a pod of UpdateRevision back to CurrentRevision;
	// set only with Options.PartitionRollback while the two differ.
	Rollback *inplace.Decision
	// Pods are the facts of every pod the CloneSet owns, terminating ones included.
	Pods []PodFacts
	// FreeInstanceIDs are the instance IDs of the CloneSet's PVCs (volumeClaimTemplates) that no
	// pod has, sorted: a deleted pod's claims wait there to be reused (or released, with
	// scaleStrategy.disablePVCReuse).
	FreeInstanceIDs []string
	// TerminatingInstanceIDs are instance IDs whose pod is terminating (deleted by someone else)
	// while its PVCs stay: its replacement waits to reuse them under the same name.
	TerminatingInstanceIDs []string
	// ExcludePreparingDelete is the CloneSet's label ScalingExcludePreparingDeleteLabel "true".
	ExcludePreparingDelete bool
}

// PodFacts is what the planner needs to know about one owned pod.
type PodFacts struct {
	// Name is the pod's name.
	Name string
	// InstanceID is the value of the apps.kruise.io/cloneset-instance-id label.
	InstanceID string
	// Labels are the pod's labels (updateStrategy.priorityStrategy and scatterStrategy read them);
	// shared with the cache, never modified.
	Labels map[string]string
	// Revision is the pod's controller-revision-hash label.
	Revision string
	// Phase is the pod's status.phase.
	Phase corev1.PodPhase
	// Ready is the pod's Ready condition.
	Ready bool
	// ReadySince is when the Ready condition last became True; zero when unknown or not ready.
	ReadySince time.Time
	// Terminating is true once the pod has a deletionTimestamp.
	Terminating bool
	// SpecifiedDelete is true when the pod is named in scaleStrategy.podsToDelete or carries the
	// apps.kruise.io/specified-delete label.
	SpecifiedDelete bool
	// DeletionCost is the controller.kubernetes.io/pod-deletion-cost annotation, parsed as OpenKruise
	// v1.9.0 and Kubernetes do (deletionCost): a base-10 int32 without a plus sign or leading zeros;
	// 0 when absent, malformed or out of range.
	DeletionCost int32
	// NodeName is the node the pod is bound to; empty while unscheduled.
	NodeName string
	// CreationTime is the pod's creationTimestamp; zero when unknown.
	CreationTime time.Time
	// RestartCount is the sum of the restart counts of the pod's containers. The pod orders compare
	// MaxRestarts and SidecarRestarts instead, as Kubernetes and OpenKruise do.
	RestartCount int32
	// MaxRestarts is the highest restart count among the pod's regular containers.
	MaxRestarts int32
	// SidecarRestarts is the highest restart count among the pod's sidecar containers (init
	// containers with restartPolicy Always).
	SidecarRestarts int32
	// InPlaceUpdating is true while an in-place update of the pod has not completed.
	InPlaceUpdating bool
	// Lifecycle is the pod's lifecycle state (label lifecycle.apps.kruise.io/state).
	Lifecycle appspub.LifecycleStateType
	// The hooks of spec.lifecycle against the pod (pkg/core/lifecycle): PreDeleteHeld and PreUpdateHeld
	// hold it before a deletion or an in-place update; PreNormalReleased and UpdatedReleased let it
	// become Normal after its creation or its in-place update.
	PreDeleteHeld, PreUpdateHeld, PreNormalReleased, UpdatedReleased bool
	// GraceDue is set while the pod's in-place update waits for its grace period
	// (inPlaceUpdateStrategy.gracePeriodSeconds): when its container changes may be applied.
	GraceDue time.Time
}

// AvailableAt is when the pod becomes (or became) available (podcontrol.State.AvailableAt).
func (p *PodFacts) AvailableAt(minReady time.Duration) (time.Time, bool) {
	s := p.state()
	return s.AvailableAt(minReady)
}

// state is the part of the facts every workload shares.
func (p *PodFacts) state() podcontrol.State {
	return podcontrol.State{Phase: p.Phase, Ready: p.Ready, ReadySince: p.ReadySince, Terminating: p.Terminating,
		InPlaceUpdating: p.InPlaceUpdating, Lifecycle: p.Lifecycle}
}

// Available reports whether the pod counts as available at now.
func (p *PodFacts) Available(now time.Time, minReady time.Duration) bool {
	at, ok := p.AvailableAt(minReady)
	return ok && !at.After(now)
}

// servingBeforeNormal reports whether the pod serves although its lifecycle state is still
// PreparingNormal: Ready (for minReady), with no preNormal hook holding it -- only this controller's
// move to Normal is missing (a manager down or behind when the pod became Ready). Such a pod is in
// its Services' endpoints: the maxUnavailable budget counts it as available, so that updating it
// is paid for (the soak's seed 3 saw three such pods updated at once with maxUnavailable 1).
// Status does not count it (availableReplicas stays as OpenKruise counts it).
func (p *PodFacts) servingBeforeNormal(now time.Time, minReady time.Duration) bool {
	if p.Lifecycle != appspub.LifecycleStatePreparingNormal || !p.PreNormalReleased {
		return false
	}
	s := p.state()
	s.Lifecycle = appspub.LifecycleStateNormal
	return s.Available(now, minReady)
}

// PodsToDelete reports whether name is listed in spec.scaleStrategy.podsToDelete. Observe uses it
// (together with the specified-delete label) to fill PodFacts.SpecifiedDelete.
func PodsToDelete(spec *v1alpha1.CloneSetSpec, name string) bool {
	for _, n := range spec.ScaleStrategy.PodsToDelete {
		if n == name {
			return true
		}
	}
	return false
}
