// Package podreadiness keeps the KruisePodReady condition of the pods that carry its readiness gate
// (added by the pod webhook, pkg/webhook/podmutation): True unless something holds the pod, so
// that such a pod is Ready exactly when its containers are ready and nothing holds it. The holders
// are listed in the condition's message as OpenKruise lists them (pkg/core/holders); Kruise adds and
// removes only its own.
//
// The workload that creates a pod opens the gate in its own first status write; this controller
// repairs the pods whose condition is still missing (or wrong) after OwnerGrace, so the normal path
// costs no extra write.
package podreadiness
