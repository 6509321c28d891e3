// Package engine carries out the in-place update protocol on live pods, for every workload
// controller (CloneSet, Advanced StatefulSet, Advanced DaemonSet, and SidecarSet for its sidecars). pkg/core/inplace is its
// pure planner; this package adds the writes and the completion check:
//
//  1. CanUpdateInPlace: can a pod of one revision move to another in place, and with what changes.
//  2. Update: InPlaceUpdateReady and Ready False through pods/status when containers restart; then,
//     once the kubelet has written Ready False itself (it has seen the gate: no container changes
//     while the pod may still take traffic), one JSON patch of the spec that tests the revision label
//     and the images it relies on, sets the new images, labels, annotations, the revision label and
//     apps.kruise.io/inplace-update-state.
//     With a grace period the container changes are recorded on the pod instead (inplace.Deferred)
//     and applied by Refresh once the pod has been NotReady for that long.
//  3. Refresh: once every restarted container runs an image whose ID differs from the one recorded
//     before the update, InPlaceUpdateReady goes back to True.
//
// Conditions are written with strategic-merge patches of pods/status (merged by type, so the
// kubelet's concurrent status writes never conflict with them); nothing here uses a
// resourceVersion precondition.
package engine
