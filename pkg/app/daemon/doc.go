// Package daemon is kruise-daemon, Kruise's agent on every node: it talks to the node's container
// runtime over CRI (pkg/node/criruntime) and acts only on its own node's objects: its pod watch is
// limited to spec.nodeName, and the API server holds it to that node (RBAC cannot scope pods to a
// node; the ValidatingAdmissionPolicy install.DaemonNodePolicy does, from the node its
// service-account token is bound to). It
// serves its health (to anyone, without detail) and metrics (over TLS, to authorized scrapers:
// pkg/platform/metricsauth), reports container meta (pkg/node/containermeta) and pulls the
// images its NodeImage lists (pkg/node/imagepuller), recreates containers on request
// (pkg/node/restarter) and runs the probes its NodePodProbe lists (pkg/node/prober). A Supervisor restarts those workers when they stop or panic, and /healthz
// fails while one is down or keeps failing.
package daemon
