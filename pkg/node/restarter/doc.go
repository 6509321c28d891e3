// Package restarter is kruise-daemon's side of ContainerRecreateRequests: for each active request of its
// node it runs the containers' preStop hooks, stops them through CRI with their grace period, waits
// for the kubelet to start them again (and, with minStartedSeconds, for them to stay up that long),
// and reports each container's state; with orderedRecreate one container at a time, in the
// request's order. failurePolicy Fail ends the request at the first failed container; Ignore goes
// on with the others. Each step is decided afresh from the request's status and the runtime's
// containers, so a restarted daemon picks up where the last one stopped. Requests are processed
// side by side (Recreator.Workers at a time), and each preStop hook is cut at the end of the
// container's grace period or after Recreator.MaxPreStop, so a hanging hook holds up only its own
// request, and that for a bounded time.
package restarter
