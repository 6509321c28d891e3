// Package crr is the manager's side of ContainerRecreateRequests (kruise-daemon on the pod's node
// does the recreating, pkg/node/restarter): it starts a request (phase Pending), holds the pod not
// ready first when unreadyGracePeriodSeconds asks (through the pod-readiness controller, and
// records when the pod was seen not ready in crr.apps.kruise.io/unready-acquired, from which the
// daemon counts the grace period), ends a request whose pod is gone or replaced or whose
// activeDeadlineSeconds passed, and, once a request has ended, releases the pod, drops the
// request's active label and deletes it ttlSecondsAfterFinished later.
package crr
