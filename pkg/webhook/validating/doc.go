// Package validating serves the validating admission webhooks of the apps.kruise.io kinds. Each kind
// has a pure function returning a field.ErrorList with the exact field path of every problem; the
// webhook only adapts it to controller-runtime and turns the list into an Invalid API error, so the
// user sees "spec.updateStrategy.maxSurge: Forbidden: ..." from kubectl.
package validating
