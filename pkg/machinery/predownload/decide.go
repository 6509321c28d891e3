package predownload

import (
	"fmt"
	"maps"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/revision"
)

// The labels OpenKruise puts on a revision whose pre-download it has decided.
const (
	CreatedLabel = "apps.kruise.io/pre-predownload-created"
	IgnoredLabel = "apps.kruise.io/image-predownload-ignored"
)

// MinReplicas: a workload of this many pods or fewer pre-downloads nothing.
const MinReplicas = 3

// Job defaults, OpenKruise's: one node at a time, 300 s per pull, one retry, the job deleted 600 s
// after it finished.
const (
	defaultParallelism    = 1
	defaultTimeoutSeconds = 300
	backoffLimit          = 1
	ttlSecondsAfterFinish = 600
)

// Input is one workload's update, its spec read as the workload reads it.
type Input struct {
	// Owner is the workload: its namespace, its apps.kruise.io/image-predownload-* annotations, and
	// the controller of the jobs (of kind GVK).
	Owner metav1.Object
	GVK   schema.GroupVersionKind
	// Selector is the workload's pod selector.
	Selector *metav1.LabelSelector
	// Replicas is spec.replicas; Partition and MaxUnavailable are the update strategy's, as pod
	// counts.
	Replicas                  int32
	Partition, MaxUnavailable int
	// StrategySkip is why the update strategy rules pre-download out ("" when it does not), e.g.
	// "the update type is ReCreate".
	StrategySkip string
	// InPlace: a pod at Current can be updated in place to Update.
	InPlace bool
	// UpdatedReady is status.updatedReadyReplicas, a count of pods at StatusUpdateRevision
	// (status.updateRevision).
	UpdatedReady         int32
	StatusUpdateRevision string
	// Current and Update are the revisions the rollout goes from and to; nil when not known yet
	// (nothing is decided).
	Current, Update *appsv1.ControllerRevision
	// HashLabel is the label carrying the revisions' hash: revision.HashLabel when empty,
	// revision.DaemonHashLabel for Advanced DaemonSets.
	HashLabel string
}

// Decision is what Sync does for one Input.
type Decision struct {
	// DeleteJobs: the rollout is done; every job the owner controls goes.
	DeleteJobs bool
	// Label records the decision on the update revision: CreatedLabel or IgnoredLabel; "" when
	// there is nothing to decide now.
	Label string
	// Skip is why the update gets no jobs (Label is IgnoredLabel).
	Skip string
	// Jobs are created before the revision is labelled CreatedLabel.
	Jobs []*v1beta1.ImagePullJob
}

// Decide is the pre-download of in's update. It fails only on a revision whose template cannot be
// read.
func Decide(in Input) (Decision, error) {
	if in.Update == nil || in.Current == nil {
		return Decision{}, nil
	}
	if in.Current.Name == in.Update.Name {
		return Decision{DeleteJobs: true}, nil
	}
	_, created := in.Update.Labels[CreatedLabel]
	_, ignored := in.Update.Labels[IgnoredLabel]
	if created || ignored || !starts(in) {
		return Decision{}, nil
	}
	if why := skip(in); why != "" {
		return Decision{Label: IgnoredLabel, Skip: why}, nil
	}
	cur, err := revision.TemplateOf(in.Current)
	if err != nil {
		return Decision{}, fmt.Errorf("read revision %s: %w", in.Current.Name, err)
	}
	next, err := revision.TemplateOf(in.Update)
	if err != nil {
		return Decision{}, fmt.Errorf("read revision %s: %w", in.Update.Name, err)
	}
	return Decision{Label: CreatedLabel, Jobs: jobs(in, cur, next)}, nil
}

// starts reports whether the pre-download may be decided: as many updated pods are ready as the
// min-updated-ready-pods annotation asks -- a number, or a percentage of replicas rounded up, as
// OpenKruise reads it. Counts of an older update revision count as none.
func starts(in Input) bool {
	v, ok := in.Owner.GetAnnotations()[v1alpha1.ImagePreDownloadMinUpdatedReadyPods]
	if !ok {
		return true
	}
	minReady := intstr.Parse(v)
	n, err := intstr.GetScaledValueFromIntOrPercent(&minReady, int(in.Replicas), true)
	if err != nil || n < 0 {
		return true // a stored value that is no count asks for nothing
	}
	ready := in.UpdatedReady
	if in.StatusUpdateRevision != in.Update.Name {
		ready = 0
	}
	return int(ready) >= n
}

// skip is why the update is not pre-downloaded; "" when it is. The rules are checked in
// OpenKruise's order, so the reason given is the one it would log.
func skip(in Input) string {
	switch {
	case in.StrategySkip != "":
		return in.StrategySkip
	case in.Replicas <= MinReplicas:
		return fmt.Sprintf("%d replicas, not more than %d", in.Replicas, MinReplicas)
	case in.Partition == 0 && in.MaxUnavailable >= int(in.Replicas):
		return "every pod updates in one batch"
	case !in.InPlace:
		return "the update cannot be made in place"
	}
	return ""
}

// jobs are the ImagePullJobs of an update from template current to next: one per container whose
// image changes, for the owner's pods not at the update revision.
func jobs(in Input, current, next *corev1.PodTemplateSpec) []*v1beta1.ImagePullJob {
	was := map[string]string{}
	for _, c := range current.Spec.Containers {
		was[c.Name] = c.Image
	}
	var secrets []string
	for _, s := range next.Spec.ImagePullSecrets {
		secrets = append(secrets, s.Name)
	}
	key := in.HashLabel
	if key == "" {
		key = revision.HashLabel
	}
	hash := in.Update.Labels[key]
	selector := in.Selector.DeepCopy()
	if selector == nil {
		selector = &metav1.LabelSelector{}
	}
	selector.MatchExpressions = append(selector.MatchExpressions, metav1.LabelSelectorRequirement{
		Key: inplace.RevisionLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{in.Update.Name, hash}})
	labels := maps.Clone(next.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[revision.HashLabel] = hash
	parallelism := annotationInt(in.Owner, v1alpha1.ImagePreDownloadParallelismKey, defaultParallelism)
	timeout := annotationInt(in.Owner, v1alpha1.ImagePreDownloadTimeoutSecondsKey, defaultTimeoutSeconds)
	var out []*v1beta1.ImagePullJob
	for _, c := range next.Spec.Containers {
		if image, ok := was[c.Name]; ok && image == c.Image {
			continue
		}
		out = append(out, &v1beta1.ImagePullJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: in.Owner.GetNamespace(), Name: in.Update.Name + "-" + c.Name, Labels: maps.Clone(labels),
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(in.Owner, in.GVK)}},
			Spec: v1beta1.ImagePullJobSpec{Image: c.Image, ImagePullJobTemplate: v1beta1.ImagePullJobTemplate{
				PullSecrets: secrets,
				PodSelector: &v1beta1.ImagePullJobPodSelector{LabelSelector: *selector.DeepCopy()},
				Parallelism: ptr.To(intstr.FromInt(parallelism)),
				PullPolicy: &v1beta1.ImagePullJobPullPolicy{BackoffLimit: ptr.To[int32](backoffLimit),
					TimeoutSeconds: ptr.To(int32(timeout))},
				CompletionPolicy: v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways,
					TTLSecondsAfterFinished: ptr.To[int32](ttlSecondsAfterFinish)},
				SandboxConfig: &v1beta1.ImagePullJobSandboxConfig{Labels: maps.Clone(labels), Annotations: maps.Clone(next.Annotations)},
			}},
		})
	}
	return out
}

// annotationInt is the owner's annotation key as a positive integer, or def when it is unset or
// not one.
func annotationInt(owner metav1.Object, key string, def int) int {
	if v, err := strconv.Atoi(owner.GetAnnotations()[key]); err == nil && v > 0 {
		return v
	}
	return def
}
