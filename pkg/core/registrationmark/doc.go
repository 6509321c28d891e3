// Package registrationmark owns the marks a webhook registrar writes on the objects behind its
// dynamic entries (SidecarSets, PodUnavailableBudgets, WorkloadSpreads, PersistentPodStates) — the
// generation whose entry the API server has, and why the current one has none — and the status
// condition each kind's controller reads from them. The registrar (pkg/webhook/registration) is
// the marks' only writer; each controller is the only writer of its condition.
package registrationmark
