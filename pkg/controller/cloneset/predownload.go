package cloneset

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/inplace"
	"github.com/kruise-ng/kruise/pkg/revision"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=imagepulljobs,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=patch

// Image pre-download for in-place updates (gate PreDownloadImageForInPlaceUpdate), as OpenKruise
// does it, so that either manager continues what the other started:
//   - once per update revision, while it differs from the current revision and as many updated
//     pods are ready as apps.kruise.io/image-predownload-min-updated-ready-pods asks; the revision
//     is then labelled PreDownloadCreatedLabel (or PreDownloadIgnoredLabel when skipped) and never
//     considered again;
//   - skipped for ReCreate, for 3 replicas or fewer, when every pod updates in one batch (partition
//     0 and maxUnavailable at least replicas), and when the update cannot be in place;
//   - one ImagePullJob per container whose image the update changes, named
//     <update revision>-<container>, for the nodes of the CloneSet's pods not at the update
//     revision; owned by the CloneSet;
//   - every such job is deleted once the current revision is the update revision.

// The labels OpenKruise puts on a revision whose pre-download it has decided.
const (
	PreDownloadCreatedLabel = "apps.kruise.io/pre-predownload-created"
	PreDownloadIgnoredLabel = "apps.kruise.io/image-predownload-ignored"
)

// Pre-download defaults, OpenKruise's: one node at a time, 300 s per pull, one retry, the job
// deleted 600 s after it finished.
const (
	preDownloadParallelism    = 1
	preDownloadTimeoutSeconds = 300
	preDownloadBackoffLimit   = 1
	preDownloadTTLSeconds     = 600
	// preDownloadMinReplicas: a CloneSet of this many pods or fewer pre-downloads nothing.
	preDownloadMinReplicas = 3
)

// PreDownloadStarts reports whether the pre-download of the update revision may be decided: as
// many updated pods are ready as the min-updated-ready-pods annotation asks -- a number, or a
// percentage of spec.replicas rounded up, as OpenKruise reads it. Status counts of an older update
// revision count as none.
func PreDownloadStarts(cs *v1alpha1.CloneSet, updateRevision string) bool {
	v, ok := cs.Annotations[v1alpha1.ImagePreDownloadMinUpdatedReadyPods]
	if !ok {
		return true
	}
	minReady := intstr.Parse(v)
	n, err := intstr.GetScaledValueFromIntOrPercent(&minReady, int(ptr.Deref(cs.Spec.Replicas, 1)), true)
	if err != nil || n < 0 {
		return true // refused by the webhook; a stored one asks for nothing
	}
	ready := cs.Status.UpdatedReadyReplicas
	if cs.Status.UpdateRevision != updateRevision {
		ready = 0
	}
	return int(ready) >= n
}

// PreDownloadSkip is why the pre-download of an update is skipped; "" when it is not.
func PreDownloadSkip(spec *v1alpha1.CloneSetSpec, inPlace bool) string {
	replicas := ptr.Deref(spec.Replicas, 1)
	b := ComputeBounds(spec)
	switch {
	case spec.UpdateStrategy.Type == v1alpha1.RecreateCloneSetUpdateStrategyType:
		return "the update type is ReCreate"
	case replicas <= preDownloadMinReplicas:
		return fmt.Sprintf("%d replicas, not more than %d", replicas, preDownloadMinReplicas)
	case b.Partition == 0 && b.MaxUnavailable >= int(replicas):
		return "every pod updates in one batch"
	case !inPlace:
		return "the update cannot be made in place"
	}
	return ""
}

// PreDownloadJobs are the ImagePullJobs of an update from current to update (their templates):
// one per container whose image changes.
func PreDownloadJobs(cs *v1alpha1.CloneSet, update *appsv1.ControllerRevision, current, next *corev1.PodTemplateSpec) []*v1beta1.ImagePullJob {
	was := map[string]string{}
	for _, c := range current.Spec.Containers {
		was[c.Name] = c.Image
	}
	var secrets []string
	for _, s := range next.Spec.ImagePullSecrets {
		secrets = append(secrets, s.Name)
	}
	hash := update.Labels[revision.HashLabel]
	selector := cs.Spec.Selector.DeepCopy()
	selector.MatchExpressions = append(selector.MatchExpressions, metav1.LabelSelectorRequirement{
		Key: inplace.RevisionLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{update.Name, hash}})
	labels := maps.Clone(next.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[revision.HashLabel] = hash
	var jobs []*v1beta1.ImagePullJob
	for _, c := range next.Spec.Containers {
		if image, ok := was[c.Name]; ok && image == c.Image {
			continue
		}
		jobs = append(jobs, &v1beta1.ImagePullJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: cs.Namespace, Name: update.Name + "-" + c.Name, Labels: maps.Clone(labels),
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cs, gvk)}},
			Spec: v1beta1.ImagePullJobSpec{Image: c.Image, ImagePullJobTemplate: v1beta1.ImagePullJobTemplate{
				PullSecrets: secrets,
				PodSelector: &v1beta1.ImagePullJobPodSelector{LabelSelector: *selector.DeepCopy()},
				Parallelism: ptr.To(intstr.FromInt(annotationInt(cs, v1alpha1.ImagePreDownloadParallelismKey, preDownloadParallelism))),
				PullPolicy: &v1beta1.ImagePullJobPullPolicy{BackoffLimit: ptr.To[int32](preDownloadBackoffLimit),
					TimeoutSeconds: ptr.To(int32(annotationInt(cs, v1alpha1.ImagePreDownloadTimeoutSecondsKey, preDownloadTimeoutSeconds)))},
				CompletionPolicy: v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways,
					TTLSecondsAfterFinished: ptr.To[int32](preDownloadTTLSeconds)},
				SandboxConfig: &v1beta1.ImagePullJobSandboxConfig{Labels: maps.Clone(labels), Annotations: maps.Clone(next.Annotations)},
			}},
		})
	}
	return jobs
}

// annotationInt is cs's annotation key as a positive integer, or def when it is unset (the
// webhook rejects values that are not positive integers).
func annotationInt(cs *v1alpha1.CloneSet, key string, def int) int {
	if v, err := strconv.Atoi(cs.Annotations[key]); err == nil && v > 0 {
		return v
	}
	return def
}

// syncPreDownload decides the update revision's pre-download once, or deletes the CloneSet's
// pre-download jobs once the rollout is done.
func (r *Reconciler) syncPreDownload(ctx context.Context, cs *v1alpha1.CloneSet, obs *observation) error {
	update, current := obs.updateRevision, obs.revisions[obs.snap.CurrentRevision]
	if update == nil || obs.newRevision != nil || current == nil {
		return nil
	}
	if current.Name == update.Name {
		return r.deletePreDownloadJobs(ctx, cs)
	}
	_, created := update.Labels[PreDownloadCreatedLabel]
	_, ignored := update.Labels[PreDownloadIgnoredLabel]
	if created || ignored || !PreDownloadStarts(cs, update.Name) {
		return nil
	}
	d, known := obs.snap.InPlace[current.Name]
	if why := PreDownloadSkip(&obs.snap.Spec, known && d.Spec != nil); why != "" {
		r.event(cs, corev1.EventTypeNormal, "PreDownloadSkipped", "revision %s: no image pre-download: %s", update.Name, why)
		return r.labelRevision(ctx, update, PreDownloadIgnoredLabel)
	}
	curTpl, err := revision.TemplateOf(current)
	if err != nil {
		return err
	}
	nextTpl, err := revision.TemplateOf(update)
	if err != nil {
		return err
	}
	for _, j := range PreDownloadJobs(cs, update, curTpl, nextTpl) {
		if err := r.Client.Create(ctx, j); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create pre-download job %s: %w", j.Name, err)
		}
		r.event(cs, corev1.EventTypeNormal, "CreatedImagePullJob", "pre-downloading %s onto the nodes of the pods (ImagePullJob %s)", j.Spec.Image, j.Name)
	}
	return r.labelRevision(ctx, update, PreDownloadCreatedLabel)
}

// labelRevision records the pre-download decision on the revision (a metadata patch: Data, in
// canonical form, is left as it is).
func (r *Reconciler) labelRevision(ctx context.Context, rev *appsv1.ControllerRevision, key string) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, key)
	ref := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: rev.Namespace, Name: rev.Name}}
	if err := r.Client.Patch(ctx, ref, client.RawPatch(types.StrategicMergePatchType, []byte(patch))); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("label revision %s %s: %w", rev.Name, key, err)
	}
	return nil
}

// deletePreDownloadJobs deletes the ImagePullJobs the CloneSet controls.
func (r *Reconciler) deletePreDownloadJobs(ctx context.Context, cs *v1alpha1.CloneSet) error {
	have := &v1beta1.ImagePullJobList{}
	if err := r.Client.List(ctx, have, client.InNamespace(cs.Namespace)); err != nil {
		return err
	}
	for i := range have.Items {
		j := &have.Items[i]
		if ref := metav1.GetControllerOf(j); ref == nil || ref.UID != cs.UID || j.DeletionTimestamp != nil {
			continue
		}
		if err := r.Client.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete pre-download job %s: %w", j.Name, err)
		}
	}
	return nil
}
