package cloneset

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// The PVCs of volumeClaimTemplates: created with the pod, deleted with the pods the controller
// deletes (apply), released with scaleStrategy.disablePVCReuse.

// ensureClaims creates the PVCs of a new pod from the CloneSet's volumeClaimTemplates (the live
// spec, as OpenKruise: revisions do not record them), named
// <template>-<pod>, labelled with the CloneSet's selector and the instance ID and owned by the
// CloneSet (an existing one, left by a pod of the same instance ID, is reused), and mounts each as
// the pod volume named after its template.
func (r *Reconciler) ensureClaims(ctx context.Context, cs *v1alpha1.CloneSet, pod *corev1.Pod, id string) error {
	for _, t := range cs.Spec.VolumeClaimTemplates {
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: *t.ObjectMeta.DeepCopy(), Spec: *t.Spec.DeepCopy()}
		pvc.Name, pvc.Namespace = t.Name+"-"+pod.Name, cs.Namespace
		pvc.ResourceVersion, pvc.UID = "", ""
		pvc.Labels = maps.Clone(pvc.Labels)
		if pvc.Labels == nil {
			pvc.Labels = map[string]string{}
		}
		if cs.Spec.Selector != nil {
			maps.Copy(pvc.Labels, cs.Spec.Selector.MatchLabels)
		}
		pvc.Labels[v1alpha1.CloneSetInstanceIDLabelKey] = id
		pvc.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cs, gvk)}
		if err := r.Client.Create(ctx, pvc); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create PVC %s: %w", pvc.Name, err)
		}
		vol := corev1.Volume{Name: t.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}}}
		pod.Spec.Volumes = slices.DeleteFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == t.Name })
		pod.Spec.Volumes = append(pod.Spec.Volumes, vol)
	}
	return nil
}

// deleteClaims deletes PVCs of the CloneSet (each only if it is still the claim observed).
func (r *Reconciler) deleteClaims(ctx context.Context, cs *v1alpha1.CloneSet, claims []*corev1.PersistentVolumeClaim, why string, done *podcontrol.Batch) error {
	var errs []error
	for _, pvc := range claims {
		if pvc.DeletionTimestamp != nil {
			continue
		}
		ref := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: pvc.Name, Namespace: pvc.Namespace}}
		if err := r.Client.Delete(ctx, ref, client.Preconditions{UID: &pvc.UID}); err != nil && !apierrors.IsNotFound(err) {
			r.event(cs, corev1.EventTypeWarning, "FailedDelete", "delete PVC %s: %v", pvc.Name, err)
			errs = append(errs, fmt.Errorf("delete PVC %s: %w", pvc.Name, err))
			continue
		}
		done.Add("DeletedPVC", "deleted PVC", pvc.Name, why)
	}
	return errors.Join(errs...)
}
