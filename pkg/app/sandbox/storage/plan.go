package storage

import (
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Annotations shared with kube-controller-manager and the scheduler.
const (
	// annProvisionedBy names the provisioner of a volume; kube-controller-manager leaves the
	// deletion of a volume of an external provisioner to it.
	annProvisionedBy = "pv.kubernetes.io/provisioned-by"
	// annSelectedNode is the node the scheduler picked for a claim of a WaitForFirstConsumer class.
	annSelectedNode = "volume.kubernetes.io/selected-node"
)

// volumeName is the name of the one volume a claim ever gets.
func volumeName(claim *corev1.PersistentVolumeClaim) string { return "pvc-" + string(claim.UID) }

// volumeDir is the folder of volume name under root.
func volumeDir(root, name string) string { return filepath.Join(root, name) }

// ours reports whether the volume was provisioned by the Controller.
func ours(pv *corev1.PersistentVolume) bool { return pv.Annotations[annProvisionedBy] == Provisioner }

// planVolume returns the volume to create for claim, of class, with its folder under root; or nil
// and why claim gets none (yet).
func planVolume(claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, root string) (*corev1.PersistentVolume, string) {
	size, hasSize := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	switch {
	case class.Provisioner != Provisioner:
		return nil, "class " + class.Name + " is provisioned by " + class.Provisioner
	case claim.DeletionTimestamp != nil:
		return nil, "claim is being deleted"
	case claim.Spec.VolumeName != "":
		return nil, "claim names its volume"
	case claim.Spec.VolumeMode != nil && *claim.Spec.VolumeMode == corev1.PersistentVolumeBlock:
		return nil, "block volumes are not supported"
	case !hasSize:
		return nil, "claim requests no storage"
	case class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer &&
		claim.Annotations[annSelectedNode] == "":
		return nil, "waiting for the first consumer to be scheduled"
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	name := volumeName(claim)
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annProvisionedBy: Provisioner}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   claim.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: reclaim,
			StorageClassName:              class.Name,
			MountOptions:                  class.MountOptions,
			VolumeMode:                    claim.Spec.VolumeMode,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: volumeDir(root, name), Type: ptr.To(corev1.HostPathDirectoryOrCreate)}},
		},
	}, ""
}

// planResize returns the size claim's volume grows to: the claim's request, when the claim is
// bound to pv (provisioned by the Controller), class allows expansion, and the request exceeds the
// claim's capacity. ok is false when nothing is to be done.
func planResize(claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, pv *corev1.PersistentVolume) (size resource.Quantity, ok bool) {
	if class.Provisioner != Provisioner || class.AllowVolumeExpansion == nil || !*class.AllowVolumeExpansion ||
		claim.DeletionTimestamp != nil || claim.Status.Phase != corev1.ClaimBound {
		return size, false
	}
	if pv == nil || !ours(pv) || claim.Spec.VolumeName != pv.Name || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claim.UID {
		return size, false
	}
	size, hasSize := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	capacity := claim.Status.Capacity[corev1.ResourceStorage]
	if !hasSize || size.Cmp(capacity) <= 0 {
		return size, false
	}
	return size, true
}

// resizeConditions are the claim conditions of a resize under way or failed; a finished resize
// leaves none.
var resizeConditions = map[corev1.PersistentVolumeClaimConditionType]bool{
	corev1.PersistentVolumeClaimResizing:                true,
	corev1.PersistentVolumeClaimFileSystemResizePending: true,
	corev1.PersistentVolumeClaimControllerResizeError:   true,
	corev1.PersistentVolumeClaimNodeResizeError:         true,
}

// resizedStatus returns claim's status once its volume has grown to size: capacity and allocated
// resources equal size, no resize status for storage and no resize condition.
func resizedStatus(claim *corev1.PersistentVolumeClaim, size resource.Quantity) corev1.PersistentVolumeClaimStatus {
	st := *claim.Status.DeepCopy()
	if st.Capacity == nil {
		st.Capacity = corev1.ResourceList{}
	}
	st.Capacity[corev1.ResourceStorage] = size
	if st.AllocatedResources == nil {
		st.AllocatedResources = corev1.ResourceList{}
	}
	st.AllocatedResources[corev1.ResourceStorage] = size
	delete(st.AllocatedResourceStatuses, corev1.ResourceStorage)
	if len(st.AllocatedResourceStatuses) == 0 {
		st.AllocatedResourceStatuses = nil
	}
	var conds []corev1.PersistentVolumeClaimCondition
	for _, c := range st.Conditions {
		if !resizeConditions[c.Type] {
			conds = append(conds, c)
		}
	}
	st.Conditions = conds
	return st
}

// reclaimable reports whether pv is to be deleted: provisioned by the Controller, released by
// its claim (or failed) and with reclaim policy Delete.
func reclaimable(pv *corev1.PersistentVolume) bool {
	return ours(pv) && pv.DeletionTimestamp == nil &&
		pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete &&
		(pv.Status.Phase == corev1.VolumeReleased || pv.Status.Phase == corev1.VolumeFailed)
}
