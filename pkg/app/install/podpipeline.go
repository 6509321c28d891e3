package install

import "sort"

// PodStep is one admission webhook a pod goes through: the configuration that holds it (the API
// server calls mutating configurations in the order of their names, and the webhooks of one
// configuration in their order there), the webhook (or, for configurations whose entries the
// manager writes per object, the pattern of their names), when it is called, and what it may
// change.
type PodStep struct {
	Configuration string
	Webhook       string
	Mutating      bool
	// PerObject: one entry per object of the kind (its selectors), written by the manager's
	// registrar for that kind, so that an outage blocks only the pods those objects concern.
	PerObject bool
	Calls     string
	Changes   string
}

// PodPipeline is the pod admission pipeline, in the order the API server calls it: every mutating
// step before any validating one, mutating configurations by name. docs/architecture.md draws it;
// TestPodPipelineIsTheInstalledOrder checks it against what Install writes.
var PodPipeline = []PodStep{
	{Configuration: "kruise-mutating-webhook-configuration", Webhook: "mpod.kruise.io", Mutating: true,
		Calls:   "CREATE of a pod whose controller is a Kruise workload (apps.kruise.io/cloneset-instance-id and kin)",
		Changes: "spec.readinessGates (KruisePodReady); with the pod webhook failing closed, the WorkloadSpread placement below in the same call"},
	{Configuration: "kruise-mutating-webhook-configuration", Webhook: "mpodlaunchpriority.kruise.io", Mutating: true,
		Calls:   "CREATE of a pod of several containers asking for a launch order",
		Changes: "each container's env KRUISE_CONTAINER_PRIORITY / KRUISE_CONTAINER_BARRIER (from ConfigMap <pod>-barrier)"},
	{Configuration: PersistentPodStateConfiguration, Webhook: "<namespace>.<name>.persistentpodstate.kruise.io", Mutating: true, PerObject: true,
		Calls:   "CREATE of a pod of the PersistentPodState's workload",
		Changes: "spec.nodeSelector and preferred node affinity from the recorded topology; annotation kruise.io/injected-persistent-pod-state"},
	{Configuration: SidecarInjectionConfiguration, Webhook: "<name>.sidecarset.kruise.io", Mutating: true, PerObject: true,
		Calls:   "CREATE of a pod the SidecarSet selects",
		Changes: "containers, initContainers, volumes, imagePullSecrets, the patched metadata, the SidecarSet hash and injected-list annotations"},
	{Configuration: WorkloadSpreadConfiguration, Webhook: "<namespace>.<name>.workloadspread.kruise.io", Mutating: true, PerObject: true,
		Calls:   "CREATE of a pod of the spread's workload (not placed above); DELETE and eviction of such a pod",
		Changes: "annotation apps.kruise.io/matched-workloadspread, the subset's node affinity, tolerations and patch; deletions change nothing (recorded in the spread's status)"},
	{Configuration: BudgetProtectionConfiguration, Webhook: "<namespace>.<name>.podunavailablebudget.kruise.io", PerObject: true,
		Calls:   "DELETE, UPDATE (in-place update, resize) of a pod the budget guards; eviction in a namespace with a budget",
		Changes: "nothing: refuses (403, 429 for an eviction) beyond the budget, records what it lets through in the budget's status"},
}

// podPipelineInOrder reports whether steps are in the order the API server calls them.
func podPipelineInOrder(steps []PodStep) bool {
	return sort.SliceIsSorted(steps, func(i, j int) bool {
		a, b := steps[i], steps[j]
		if a.Mutating != b.Mutating {
			return a.Mutating
		}
		return a.Configuration < b.Configuration
	})
}
