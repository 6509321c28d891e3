// Package storage gives a sandbox dynamic volumes: two StorageClasses of one provisioner
// (Provisioner) and the controller that serves them, run by the sandbox as one of its processes.
// Volumes are hostPath folders under a root folder of the sandbox.
//
// Invariants:
//   - a pending claim of a class of Provisioner (no spec.volumeName) gets exactly one volume,
//     named pvc-<claim UID>, pre-bound to it (claimRef with the claim's UID), of the size it
//     requests; kube-controller-manager's volume binder completes the binding;
//   - a volume's folder, ROOT/<volume name>, exists while its PersistentVolume exists, and is
//     removed once the PersistentVolume is gone;
//   - a Released (or Failed) volume of this provisioner whose reclaim policy is Delete is deleted;
//     a Retain volume is left to its owner;
//   - a bound claim of a class that allows expansion whose request exceeds its capacity grows: the
//     volume's capacity, then the claim's status.capacity and status.allocatedResources become the
//     request, and no resize condition or in-progress resize status is left on the claim. A class
//     without expansion never gets there: the API server refuses the larger request.
package storage
