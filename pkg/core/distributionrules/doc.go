// Package distributionrules is what a ResourceDistribution means, as OpenKruise v1.9.0 gives it
// meaning, shared by its controller (pkg/controller/resourcedistribution) and its validating
// webhook: which namespaces it targets (Targets), what its copy in a namespace is (Decode, Want,
// NeedsUpdate, ControlledBy, the annotations) and its status (Status). All of it is pure.
package distributionrules
