// Package registration holds what the manager's dynamically registered webhook entries share
// (SidecarSet injection, PodUnavailableBudget protection, WorkloadSpread placement,
// PersistentPodState injection): each entry reaches the manager as the static pod webhook does —
// same Service or URL, same CA bundle, which the certificate rotator keeps current there — at a
// path of its own, and is named so that the API server's error names the object behind it.
//
// No window: a request that reaches the API server after the create (or update) of an object
// with entries returned goes through that object's entries. A registrar writes entries from its
// cache, after the object is stored, and the API server loads them after that; so the object's
// own admission registers them first (Gate, Admission):
//   - the validating webhook of the object, once the object is valid and about to be stored (not
//     for a dry run, nor for an update that keeps the generation), adds the entries of that
//     version as pending entries, or records that it needs those already in place (a registrar
//     that does not know the object yet might remove them), in one write of the configuration;
//   - it then answers only once a probe shows that the API server calls them: every
//     configuration carries a probe entry (ProbeEntryName) for the dry-run creation of a labelled
//     ConfigMap in the manager's namespace, whose path carries the count of the configuration's
//     writes (SerialAnnotation); the API server loads a configuration object whole, so when the
//     probe's answer names this write or a later one, every entry of the write is called;
//   - when that cannot be confirmed within AdmitTimeout, the object is refused, saying why, rather
//     than stored with requests passing by its entries; the user retries;
//   - the registrar keeps a pending entry, or an entry needed, until its cache has seen the
//     version (its own entries then cover it), or, past PendingTTL, while the API server holds it.
//
// A request made while the object's create is under way may or may not go through its entries,
// as if made just before or just after it. With several API servers, the probe confirms the one
// the manager reaches; the others load the configuration within their own watch's lag.
package registration
