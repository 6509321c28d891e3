package statefulset

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/machinery/predownload"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=imagepulljobs,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=patch

// preDownloadInput is the set's update as pkg/machinery/predownload reads it, as OpenKruise reads an
// Advanced StatefulSet: OnDelete and the ReCreate pod update policy rule pre-download out;
// partition is the spec's number; maxUnavailable is rounded down, at least one.
func preDownloadInput(set *v1beta1.StatefulSet, obs *observation) predownload.Input {
	spec := &obs.snap.Spec
	replicas := ptr.Deref(spec.Replicas, 1)
	d, known := obs.snap.InPlace[obs.snap.CurrentRevision]
	in := predownload.Input{Owner: set, GVK: gvk, Selector: set.Spec.Selector, Replicas: replicas, InPlace: known && d.InPlace(),
		UpdatedReady: set.Status.UpdatedReadyReplicas, StatusUpdateRevision: set.Status.UpdateRevision,
		Current: obs.revisions[obs.snap.CurrentRevision], Update: obs.updateRevision}
	switch ru := spec.UpdateStrategy.RollingUpdate; {
	case spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType:
		in.StrategySkip = "the update type is OnDelete"
	case ru == nil || ru.PodUpdatePolicy == v1beta1.RecreateStatefulSetPodUpdatePolicy:
		in.StrategySkip = "the pod update policy is ReCreate"
	default:
		in.Partition = int(ptr.Deref(ru.Partition, 0))
		in.MaxUnavailable = scaledValue(ru.MaxUnavailable, int(replicas))
	}
	return in
}
