package cloneset

import (
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/predownload"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=imagepulljobs,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=patch

// preDownloadInput is the CloneSet's update as pkg/machinery/predownload reads it: partition and
// maxUnavailable as the planner bounds them, ReCreate ruling pre-download out.
func preDownloadInput(cs *v1alpha1.CloneSet, obs *observation) predownload.Input {
	spec := &obs.snap.Spec
	b := ComputeBounds(spec)
	d, known := obs.snap.InPlace[obs.snap.CurrentRevision]
	in := predownload.Input{Owner: cs, GVK: gvk, Selector: cs.Spec.Selector, Replicas: ptr.Deref(spec.Replicas, 1),
		Partition: b.Partition, MaxUnavailable: b.MaxUnavailable, InPlace: known && d.InPlace(),
		UpdatedReady: cs.Status.UpdatedReadyReplicas, StatusUpdateRevision: cs.Status.UpdateRevision,
		Current: obs.revisions[obs.snap.CurrentRevision], Update: obs.updateRevision}
	if spec.UpdateStrategy.Type == v1alpha1.RecreateCloneSetUpdateStrategyType {
		in.StrategySkip = "the update type is ReCreate"
	}
	return in
}
