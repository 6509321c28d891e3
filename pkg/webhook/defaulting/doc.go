// Package defaulting serves the mutating admission webhooks that fill in the defaults of every
// apps.kruise.io kind, applying the pure functions of apis/apps/defaults. OpenKruise users get the
// same stored objects from the same manifests.
package defaulting
