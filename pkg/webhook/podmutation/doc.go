// Package podmutation is the pod mutating webhook: it adds the KruisePodReady readiness gate to the
// pods Kruise's workloads create, so that Kruise can hold such a pod NotReady (its containers
// running) while it prepares it for an update or a deletion. The PodReady controller
// (pkg/controller/podreadiness) sets the gate's condition.
//
// The webhook is scoped so that a Kruise outage cannot block unrelated pods: it is called only for
// pods that carry a Kruise workload's label (Scope's object selector), never in the control
// plane's namespaces, and its failure policy is the manager's --pod-webhook-failure-policy.
//
// Its second entry (LaunchPriorityWebhookName) gives the pods of any owner that ask for a container
// launch order their barrier env (InjectLaunchBarrier); the API server calls it only for such pods
// (its matchConditions), with the same namespaces and failure policy. The container launch
// priority controller (pkg/controller/containerlaunchpriority) releases the barrier.
package podmutation
