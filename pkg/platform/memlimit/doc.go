// Package memlimit gives a Kruise process a soft memory limit below its cgroup's (its container's,
// or a service's): the Go runtime collects harder as the heap nears it, instead of letting the
// heap grow to twice the live objects (GOGC 100) and the kernel kill the process at the limit. A 10,000-pod
// rollout briefly needs more than its cache; near the limit, the runtime pays for it in CPU.
//
// GOMEMLIMIT, when set, wins: the runtime has read it already and nothing is changed.
package memlimit
