// Package holders reads and writes the holders of a pod's KruisePodReady condition: the reasons,
// each named by an agent and a key, for which something holds the pod not ready. OpenKruise lists
// them as JSON in the condition's message ([{"userAgent":"Lifecycle","key":"preDeleteHook"}]),
// sorted by agent then key; the condition is False while the list is not empty. Kruise writes the
// same list, adds and removes only its own holders and keeps everyone else's, so a pod held by
// OpenKruise (or any other agent) before a takeover stays held until its holder is released.
package holders
