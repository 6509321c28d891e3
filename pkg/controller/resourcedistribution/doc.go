// Package resourcedistribution is the ResourceDistribution controller: it copies one Secret or
// ConfigMap into the namespaces a distribution targets, keeps the copies' content in line with the
// distribution (an edit of a copy is reverted), removes its copies from namespaces that stop being
// targets, and reports every target it could not serve, as OpenKruise v1.9.0 does:
//
//   - a copy carries the annotations kruise.io/resourcedistribution.resource.from (the
//     distribution's name) and kruise.io/resourcedistribution.resource.hashcode (SHA-256 of
//     spec.resource), and the distribution as its controller owner (deleting the distribution
//     deletes its copies);
//   - an object of the same kind and name that the distribution does not control is a conflict:
//     it is left alone and reported;
//   - status: desired, succeeded, failed, and six conditions in a fixed order (GetResourceFailed,
//     CreateResourceFailed, UpdateResourceFailed, DeleteResourceFailed, ConflictOccurred,
//     NamespaceNotExists), each True with its failed namespaces or False with reason Succeeded.
//
// What a distribution means (its targets, its copies, its status) is pkg/core/distributionrules's;
// Reconcile reads and writes.
package resourcedistribution
