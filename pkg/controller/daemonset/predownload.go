package daemonset

import (
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/core/updateorder"
	"github.com/kruise-ng/kruise/pkg/machinery/predownload"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=imagepulljobs,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=patch

// preDownloadInput is the set's update as pkg/machinery/predownload reads it, as OpenKruise reads an
// Advanced DaemonSet: only InPlaceIfPossible rolling updates without surge pre-download; replicas
// are the desired nodes; the partition is resolved over them; maxUnavailable is rounded down.
// The rollout goes from the current revision (what most old pods run); when every pod is
// updated, from the update revision itself (the jobs are deleted).
func preDownloadInput(ds *v1beta1.DaemonSet, obs *observation) predownload.Input {
	spec := &obs.snap.Spec
	desired := ds.Status.DesiredNumberScheduled
	current := obs.current
	if current == nil {
		current = obs.updateRevision
	}
	d, known := obs.snap.InPlace[current.Name]
	status := ""
	if ds.Status.UpdateRevision == revision.ShortHash(obs.updateRevision.Name) {
		status = obs.updateRevision.Name
	}
	in := predownload.Input{Owner: ds, GVK: gvk, Selector: ds.Spec.Selector, Replicas: desired, InPlace: known && d.InPlace(),
		UpdatedReady: min(ds.Status.UpdatedNumberScheduled, ds.Status.NumberReady), StatusUpdateRevision: status,
		Current: current, Update: obs.updateRevision, HashLabel: revision.DaemonHashLabel}
	switch ru := spec.UpdateStrategy.RollingUpdate; {
	case spec.UpdateStrategy.Type == v1beta1.DaemonSetOnDeleteStrategyType:
		in.StrategySkip = "the update type is OnDelete"
	case ru == nil || ru.Type != v1beta1.DaemonSetInplaceRollingUpdateType:
		in.StrategySkip = "the rolling update type is Standard"
	case scaled(ru.MaxSurge, int(desired), 0) > 0:
		in.StrategySkip = "maxSurge recreates pods"
	default:
		in.Partition = updateorder.Partition(ru.Partition, int(desired))
		n, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, int(desired), false)
		if err != nil || n < 1 {
			n = 1
		}
		in.MaxUnavailable = n
	}
	return in
}
