// Package deletionprotection is the validating webhook of the label
// policy.kruise.io/delete-protection (OpenKruise's ResourcesDeletionProtection): a labelled
// Namespace, Service, Ingress, CustomResourceDefinition or workload (Deployment, ReplicaSet and
// StatefulSet of apps; CloneSet, Advanced StatefulSet and UnitedDeployment of apps.kruise.io) is
// not deleted while the label forbids it:
//
//   - Always refuses every deletion, until the label is removed;
//   - Cascading refuses the deletion of an object that still has dependents: a Namespace with
//     active pods or bound PersistentVolumeClaims, a workload whose spec.replicas is above 0, a
//     CustomResourceDefinition with custom resources (and only with the feature gate
//     DeletionProtectionForCRDCascadingGate: without it the deletion is refused outright, as
//     OpenKruise does). A Service or an Ingress is protected by Always only.
//
// Any other value protects nothing, as in OpenKruise, which does not validate the label's value;
// an object already being deleted is not held either.
//
// The webhook is called for labelled objects only: its entries select objects whose label is
// Always or Cascading (ScopeEntry, applied by pkg/app/install; for a DELETE the API server matches the
// selector against the stored object), and they fail closed: a protected object is not deleted
// while Kruise is down, and an unprotected one never waits for Kruise.
package deletionprotection
