package predownload

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// EventFunc records an event on the workload.
type EventFunc func(eventType, reason, format string, args ...any)

// Sync carries out Decide(in) through c: it deletes the owner's jobs once the rollout is done, or
// creates the update's jobs (an existing one is kept) and then labels the revision, so that a
// failed create is retried by the next sync. Every user-visible decision is an event.
func Sync(ctx context.Context, c client.Client, in Input, event EventFunc) error {
	d, err := Decide(in)
	if err != nil {
		return err
	}
	if d.DeleteJobs {
		return deleteJobs(ctx, c, in.Owner)
	}
	if d.Label == "" {
		return nil
	}
	if d.Skip != "" {
		event(corev1.EventTypeNormal, "PreDownloadSkipped", "revision %s: no image pre-download: %s", in.Update.Name, d.Skip)
	}
	for _, j := range d.Jobs {
		if err := c.Create(ctx, j); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create pre-download job %s: %w", j.Name, err)
		}
		event(corev1.EventTypeNormal, "CreatedImagePullJob", "pre-downloading %s onto the nodes of the pods (ImagePullJob %s)", j.Spec.Image, j.Name)
	}
	return labelRevision(ctx, c, in.Update, d.Label)
}

// labelRevision records the decision on the revision (a metadata patch: Data, in canonical form,
// is left as it is).
func labelRevision(ctx context.Context, c client.Client, rev *appsv1.ControllerRevision, key string) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, key)
	ref := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: rev.Namespace, Name: rev.Name}}
	if err := c.Patch(ctx, ref, client.RawPatch(types.StrategicMergePatchType, []byte(patch))); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("label revision %s %s: %w", rev.Name, key, err)
	}
	return nil
}

// deleteJobs deletes the ImagePullJobs owner controls.
func deleteJobs(ctx context.Context, c client.Client, owner metav1.Object) error {
	have := &v1beta1.ImagePullJobList{}
	if err := c.List(ctx, have, client.InNamespace(owner.GetNamespace())); err != nil {
		return fmt.Errorf("list pre-download jobs: %w", err)
	}
	for i := range have.Items {
		j := &have.Items[i]
		if ref := metav1.GetControllerOf(j); ref == nil || ref.UID != owner.GetUID() || j.DeletionTimestamp != nil {
			continue
		}
		if err := c.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete pre-download job %s: %w", j.Name, err)
		}
	}
	return nil
}
