// Package apis holds Kruise's API types: apps.kruise.io and policy.kruise.io, wire-compatible with
// OpenKruise v1.9.0. The groups live in subpackages (apps/v1alpha1, apps/v1beta1, policy/v1alpha1);
// their generated CRDs are written to config/crd/bases by `make generate`.
package apis
