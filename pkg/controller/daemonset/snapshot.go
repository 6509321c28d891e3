package daemonset

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// Snapshot is everything the planner may look at: an immutable view of one Advanced DaemonSet,
// the nodes and the pods it owns, built by observe from the cache. The planner never modifies it.
type Snapshot struct {
	// Spec is the spec after defaulting (apis/apps/defaults.SetDefaultsDaemonSetV1beta1).
	Spec v1beta1.DaemonSetSpec
	// UpdateRevision is the name of the revision of the current pod template.
	UpdateRevision string
	// CurrentRevision is the revision a rollout with rollingUpdate.selector keeps the unselected
	// nodes on: the one most of the pods not at UpdateRevision run (of two, the newer); "" when
	// every pod runs UpdateRevision or the controller keeps unselected nodes as they are
	// (Reconciler.KeepUnselected). RollBack is the in-place decision for moving a pod of
	// UpdateRevision to it (recreated when it cannot).
	CurrentRevision string
	RollBack        inplace.Decision
	// InPlace holds, per source revision, the in-place decision for moving a pod of that revision
	// to UpdateRevision. A missing entry means the pod must be recreated.
	InPlace map[string]inplace.Decision
	// Nodes are every node of the cluster, by ascending name, each with the daemon pods on it.
	Nodes []NodeFacts
	// Strays are daemon pods pinned to nodes that do not exist (any more).
	Strays []PodFacts
}

// NodeFacts is what the planner knows of one node.
type NodeFacts struct {
	Name string
	// Labels are the node's labels (rollingUpdate.selector reads them); shared with the cache.
	Labels map[string]string
	// Verdict says whether the node runs a daemon pod (pkg/core/nodeeligibility).
	Verdict nodeeligibility.Verdict
	// Pods are the daemon pods on (or pinned to) the node, oldest first.
	Pods []PodFacts
	// BackoffUntil is when the node may get a new pod again after its last pod failed (zero: now).
	BackoffUntil time.Time
}

// PodFacts is what the planner needs to know about one owned pod.
type PodFacts struct {
	podcontrol.State
	Name string
	// Revision is the name of the revision the pod's controller-revision-hash label names (the
	// label's value when no revision has that hash).
	Revision string
	// Created is the pod's creation time.
	Created time.Time
}

// finished reports whether the pod ran to an end (Failed or Succeeded): it is replaced.
func (p *PodFacts) finished() bool {
	return p.Phase == corev1.PodFailed || p.Phase == corev1.PodSucceeded
}

// live reports whether the pod counts as the node's daemon: neither terminating nor finished.
func (p *PodFacts) live() bool { return !p.Terminating && !p.finished() }
