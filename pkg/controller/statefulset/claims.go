package statefulset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// persistentVolumeClaimRetentionPolicy (gate StatefulSetAutoDeletePVC) is carried out by the
// garbage collector, through owner references the controller keeps on the claims of its pods:
//   - whenDeleted Delete: each claim is owned by the set, so deleting the set deletes it;
//   - whenScaled Delete: the claims of a pod whose ordinal is no longer a replica (scale-in,
//     reserveOrdinals) are owned by that pod, so they go with it.
// Under Retain the controller's references are removed again. References of others are kept.

// claimOwners are the owner references the claim of pod should carry, from refs (its current
// ones), under policy. condemned says the pod's ordinal is no longer a replica.
func claimOwners(refs []metav1.OwnerReference, policy *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy,
	set *v1beta1.StatefulSet, pod *corev1.Pod, condemned bool) []metav1.OwnerReference {
	ours := func(r metav1.OwnerReference) bool {
		return r.UID == set.UID || (r.Kind == "Pod" && r.APIVersion == "v1" && ordinal.OrdinalOf(set.Name, r.Name) >= 0)
	}
	out := slices.DeleteFunc(slices.Clone(refs), ours)
	if policy != nil && policy.WhenDeleted == appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		out = append(out, metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: set.Name, UID: set.UID})
	}
	if policy != nil && policy.WhenScaled == appsv1.DeletePersistentVolumeClaimRetentionPolicyType && condemned && pod != nil {
		out = append(out, metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID})
	}
	return out
}

// syncClaimOwners brings the owner references of the claims of the set's pods to what the
// retention policy asks (a merge patch of ownerReferences, with the claim's resourceVersion).
func (r *Reconciler) syncClaimOwners(ctx context.Context, set *v1beta1.StatefulSet, obs *observation, done *podcontrol.Batch) error {
	if !r.AutoDeletePVC {
		return nil
	}
	replicas := ordinal.NewReplicas(startOf(&obs.snap.Spec), *obs.snap.Spec.Replicas, obs.snap.Reserved)
	var errs []error
	for _, f := range obs.snap.Pods {
		pod := obs.pods[f.Name]
		for _, t := range set.Spec.VolumeClaimTemplates {
			pvc := obs.claims[ordinal.ClaimName(t.Name, set.Name, f.Ordinal)]
			if pvc == nil || pvc.DeletionTimestamp != nil || pvc.UID == "" {
				continue
			}
			want := claimOwners(pvc.OwnerReferences, set.Spec.PersistentVolumeClaimRetentionPolicy, set, pod, !replicas.Contains(f.Ordinal))
			if slices.EqualFunc(want, pvc.OwnerReferences, func(a, b metav1.OwnerReference) bool { return a.UID == b.UID }) {
				continue
			}
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": want, "resourceVersion": pvc.ResourceVersion}})
			if err != nil {
				return err
			}
			ref := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: pvc.Name, Namespace: pvc.Namespace}}
			if err := r.Client.Patch(ctx, ref, client.RawPatch(types.MergePatchType, patch)); err != nil {
				// OpenKruise reports it on the set as FailedUpdate (of the claim's pod).
				r.Control().Event(r.owner(set), corev1.EventTypeWarning, "FailedUpdate",
					"set the owners of PVC %s of pod %s (persistentVolumeClaimRetentionPolicy): %v", pvc.Name, f.Name, err)
				errs = append(errs, fmt.Errorf("set the owners of PVC %s: %w", pvc.Name, err))
				continue
			}
			done.Add("UpdatedPVCOwners", "set the owners of the PVC of", f.Name, "persistentVolumeClaimRetentionPolicy")
		}
	}
	return errors.Join(errs...)
}

// startOf is the first ordinal of spec's replicas.
func startOf(spec *v1beta1.StatefulSetSpec) int32 {
	if spec.Ordinals == nil {
		return 0
	}
	return spec.Ordinals.Start
}

// expandClaims sets the storage request of the claims of pod that request less than their
// templates to the templates' (volumeClaimUpdateStrategy OnPodRollingUpdate); the resizer of the
// storage class does the rest. A class that cannot expand refuses it (the error says so).
func (r *Reconciler) expandClaims(ctx context.Context, set *v1beta1.StatefulSet, obs *observation, pod string, done *podcontrol.Batch) error {
	ord := ordinal.OrdinalOf(set.Name, pod)
	var errs []error
	for _, t := range set.Spec.VolumeClaimTemplates {
		pvc := obs.claims[ordinal.ClaimName(t.Name, set.Name, ord)]
		want, ok := t.Spec.Resources.Requests[corev1.ResourceStorage]
		if pvc == nil || !ok {
			continue
		}
		if diff := claimDiff(pvc, &t); diff != "" {
			// OpenKruise's Warning for a claim its template changed beyond the storage request.
			r.Control().Event(r.owner(set), corev1.EventTypeWarning, "FailedUpdatePVC",
				"PVC %s of pod %s differs from its template in %s: only the storage request follows the template; delete the PVC to have it made again from the template",
				pvc.Name, pod, diff)
		}
		if req := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; req.Cmp(want) >= 0 {
			continue
		}
		patch, err := json.Marshal(map[string]any{"spec": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": want.String()}}}})
		if err != nil {
			return err
		}
		ref := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: pvc.Name, Namespace: pvc.Namespace}}
		if err := r.Client.Patch(ctx, ref, client.RawPatch(types.MergePatchType, patch)); err != nil {
			r.Control().Event(r.owner(set), corev1.EventTypeWarning, "FailedResize", "expand PVC %s of pod %s to %s: %v", pvc.Name, pod, want.String(), err)
			errs = append(errs, fmt.Errorf("expand PVC %s: %w", pvc.Name, err))
			continue
		}
		done.Add("SuccessfulResize", "expanded the PVCs of", pod, fmt.Sprintf("%s to %s (volumeClaimUpdateStrategy OnPodRollingUpdate)", t.Name, want.String()))
	}
	return errors.Join(errs...)
}

// claimDiff names what of pvc's spec differs from its template t beyond the storage request (what
// an expansion cannot change): its storage class, access modes or volume mode where the template
// sets them, and its other resource requests and limits; "" when nothing does.
func claimDiff(pvc *corev1.PersistentVolumeClaim, t *corev1.PersistentVolumeClaim) string {
	var diffs []string
	if t.Spec.StorageClassName != nil && ptr.Deref(pvc.Spec.StorageClassName, "") != *t.Spec.StorageClassName {
		diffs = append(diffs, "storageClassName")
	}
	if len(t.Spec.AccessModes) > 0 && !slices.Equal(pvc.Spec.AccessModes, t.Spec.AccessModes) {
		diffs = append(diffs, "accessModes")
	}
	if t.Spec.VolumeMode != nil && ptr.Deref(pvc.Spec.VolumeMode, "") != *t.Spec.VolumeMode {
		diffs = append(diffs, "volumeMode")
	}
	others := func(l corev1.ResourceList) corev1.ResourceList {
		out := corev1.ResourceList{}
		for k, v := range l {
			if k != corev1.ResourceStorage {
				out[k] = v
			}
		}
		return out
	}
	limitsDiffer := len(t.Spec.Resources.Limits) > 0 && !equality.Semantic.DeepEqual(pvc.Spec.Resources.Limits, t.Spec.Resources.Limits)
	if limitsDiffer || !equality.Semantic.DeepEqual(others(pvc.Spec.Resources.Requests), others(t.Spec.Resources.Requests)) {
		diffs = append(diffs, "resources other than the storage request")
	}
	return strings.Join(diffs, ", ")
}
