// Package livepod finds the pod an admission request is about as the cluster holds it, so that a
// webhook that writes (a budget's or a spread's status) decides from what the API server vouches
// for rather than from the request's oldObject, which anyone reaching the webhook port could have
// written: a request naming a pod that does not exist, or that exists under another UID, finds
// none.
package livepod
