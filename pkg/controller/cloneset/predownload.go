package cloneset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/inplace"
	"github.com/kruise-ng/kruise/pkg/revision"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=imagepulljobs,verbs=get;list;watch;create;delete

// Pre-download defaults: OpenKruise's (parallelism 1, 600 s per pull); the job gives up after an
// hour. It has no TTL: the CloneSet deletes it when the rollout no longer needs it (a TTL would
// only make the controller create it again while the rollout lasts).
const (
	preDownloadParallelism      = 1
	preDownloadTimeoutSeconds   = 600
	preDownloadDeadlineSeconds  = 3600
	preDownloadBackoffLimit     = 3
	preDownloadMaxJobNameLength = 253
	// PreDownloadRevisionLabel on a pre-download job names the revision it pulls for.
	PreDownloadRevisionLabel = "apps.kruise.io/pre-download-revision"
)

// PreDownloadStarts reports whether new pre-download jobs may be created: as many updated pods are
// ready as the min-updated-ready-pods annotation asks -- a number, or a percentage of
// spec.replicas rounded up, as OpenKruise reads it (jobs already made are kept regardless).
func PreDownloadStarts(cs *v1alpha1.CloneSet) bool {
	v, ok := cs.Annotations[v1alpha1.ImagePreDownloadMinUpdatedReadyPods]
	if !ok {
		return true
	}
	replicas := 1
	if cs.Spec.Replicas != nil {
		replicas = int(*cs.Spec.Replicas)
	}
	minReady := intstr.Parse(v)
	n, err := intstr.GetScaledValueFromIntOrPercent(&minReady, replicas, true)
	if err != nil || n < 0 {
		return true // refused by the webhook; a stored one asks for nothing
	}
	return int(cs.Status.UpdatedReadyReplicas) >= n
}

// PreDownloadJobs are the ImagePullJobs that pre-download, onto the nodes of cs's pods, the images
// of the update revision (template tpl) that pods not yet on it do not run: one job per image,
// named after the revision and the image. None once no pod needs a new image.
func PreDownloadJobs(cs *v1alpha1.CloneSet, updateRevision string, tpl *corev1.PodTemplateSpec, pods []*corev1.Pod) []*v1beta1.ImagePullJob {
	var images []string
	for _, p := range pods {
		if inplace.AtRevision(p.Labels[inplace.RevisionLabel], updateRevision) || p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range tpl.Spec.Containers {
			i := slices.IndexFunc(p.Spec.Containers, func(pc corev1.Container) bool { return pc.Name == c.Name })
			if (i < 0 || p.Spec.Containers[i].Image != c.Image) && !slices.Contains(images, c.Image) {
				images = append(images, c.Image)
			}
		}
	}
	var secrets []string
	for _, s := range tpl.Spec.ImagePullSecrets {
		secrets = append(secrets, s.Name)
	}
	var jobs []*v1beta1.ImagePullJob
	for _, image := range images {
		sum := sha256.Sum256([]byte(image))
		name := updateRevision + "-" + hex.EncodeToString(sum[:5])
		if len(name) > preDownloadMaxJobNameLength {
			name = name[len(name)-preDownloadMaxJobNameLength:]
		}
		jobs = append(jobs, &v1beta1.ImagePullJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: cs.Namespace, Name: name,
				Labels:          map[string]string{PreDownloadRevisionLabel: revisionLabelValue(updateRevision)},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cs, v1alpha1.GroupVersion.WithKind("CloneSet"))}},
			Spec: v1beta1.ImagePullJobSpec{Image: image, ImagePullJobTemplate: v1beta1.ImagePullJobTemplate{
				PullSecrets: secrets,
				PodSelector: &v1beta1.ImagePullJobPodSelector{LabelSelector: *cs.Spec.Selector.DeepCopy()},
				Parallelism: ptr.To(intstr.FromInt(annotationInt(cs, v1alpha1.ImagePreDownloadParallelismKey, preDownloadParallelism))),
				PullPolicy: &v1beta1.ImagePullJobPullPolicy{BackoffLimit: ptr.To[int32](preDownloadBackoffLimit),
					TimeoutSeconds: ptr.To(int32(annotationInt(cs, v1alpha1.ImagePreDownloadTimeoutSecondsKey, preDownloadTimeoutSeconds)))},
				CompletionPolicy: v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways,
					ActiveDeadlineSeconds: ptr.To[int64](preDownloadDeadlineSeconds)},
				ImagePullPolicy: v1beta1.ImagePullJobPullIfNotPresent,
			}},
		})
	}
	return jobs
}

// revisionLabelValue fits a revision name into a label value (63 characters at most).
func revisionLabelValue(rev string) string {
	if len(rev) <= 63 {
		return rev
	}
	return rev[len(rev)-63:]
}

// annotationInt is cs's annotation key as a positive integer, or def when it is unset (the
// webhook rejects values that are not positive integers).
func annotationInt(cs *v1alpha1.CloneSet, key string, def int) int {
	if v, err := strconv.Atoi(cs.Annotations[key]); err == nil && v >= 0 {
		return v
	}
	return def
}

// syncPreDownload creates the pre-download jobs the rollout needs and deletes the CloneSet's
// others (the rollout moved on or is done).
func (r *Reconciler) syncPreDownload(ctx context.Context, cs *v1alpha1.CloneSet, obs *observation) error {
	var want []*v1beta1.ImagePullJob
	if rev := obs.updateRevision; rev != nil && obs.newRevision == nil {
		tpl, err := revision.TemplateOf(rev)
		if err != nil {
			return err
		}
		pods := make([]*corev1.Pod, 0, len(obs.pods))
		for _, p := range obs.pods {
			pods = append(pods, p)
		}
		want = PreDownloadJobs(cs, rev.Name, tpl, pods)
	}
	have := &v1beta1.ImagePullJobList{}
	if err := r.Client.List(ctx, have, client.InNamespace(cs.Namespace)); err != nil {
		return err
	}
	existing := map[string]bool{}
	for i := range have.Items {
		j := &have.Items[i]
		if ref := metav1.GetControllerOf(j); ref == nil || ref.UID != cs.UID {
			continue
		}
		if slices.ContainsFunc(want, func(w *v1beta1.ImagePullJob) bool { return w.Name == j.Name }) {
			existing[j.Name] = true
			continue
		}
		if err := r.Client.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete pre-download job %s: %w", j.Name, err)
		}
	}
	for _, j := range want {
		if existing[j.Name] || !PreDownloadStarts(cs) {
			continue
		}
		if err := r.Client.Create(ctx, j); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create pre-download job for %s: %w", j.Spec.Image, err)
		}
		r.event(cs, corev1.EventTypeNormal, "PreDownloadImage", "pre-downloading %s onto the nodes of the pods (ImagePullJob %s)", j.Spec.Image, j.Name)
	}
	return nil
}
