// Package lifecycle is the pod lifecycle protocol of Kruise workloads, shared by their planners:
// the state label lifecycle.apps.kruise.io/state (PreparingNormal → Normal → PreparingUpdate →
// Updating → Updated → Normal, and PreparingDelete), its timestamp annotation, and the hooks
// (spec.lifecycle preDelete, inPlaceUpdate, preNormal) with which a user's controller holds a pod
// in a state through labels or finalizers it manages. Everything here is a pure function of the pod
// and the hook.
//
// A hook holds a pod before an action (preDelete, inPlaceUpdate before the update) while ANY of its
// labels (with the listed value) or finalizers is on the pod: the user's controller removes them to
// release it. A hook holds a pod after an action (preNormal, inPlaceUpdate after the update) until
// ALL of them are on it: the user's controller adds them to say it is done.
package lifecycle
