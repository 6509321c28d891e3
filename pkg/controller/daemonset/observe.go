package daemonset

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// gvk is the Advanced DaemonSet kind (the storage version), the owner of its pods and revisions.
var gvk = v1beta1.GroupVersion.WithKind("DaemonSet")

// observation is what observe read: the planner's snapshot plus the objects apply needs.
type observation struct {
	snap      *Snapshot
	selector  labels.Selector
	pods      map[string]*corev1.Pod
	revisions map[string]*appsv1.ControllerRevision
	// newRevision is set when the update revision must be created (or renumbered) first.
	newRevision    *revision.Decision
	updateRevision *appsv1.ControllerRevision
	// current is the revision most pods not at the update revision run (nil: none).
	current        *appsv1.ControllerRevision
	collisionCount int32
	inFlight       podcontrol.InFlight
	// adopt are orphans pinned to a node that match the set's selector; release are pods it
	// controls that no longer match it.
	adopt, release []*corev1.Pod
}

// observe reads the set's revisions and the nodes from the cache and its pods through pods (the
// cache, or the API server to check writes the cache has not shown), and builds the snapshot.
func (r *Reconciler) observe(ctx context.Context, ds *v1beta1.DaemonSet, live bool) (*observation, error) {
	obj := &v1beta1.DaemonSet{Spec: *ds.Spec.DeepCopy()}
	defaults.SetDefaultsDaemonSetV1beta1(obj)
	spec := &obj.Spec
	sel, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err != nil {
		return nil, reconcile.TerminalError(fmt.Errorf("spec.selector: %w", err)) // only a spec change mends it
	}
	read, err := r.ReadPods(ctx, live, ds, sel)
	if err != nil {
		return nil, err
	}
	revs, err := r.Revisions(ctx, ds, gvk, sel,
		revision.Input{Template: &ds.Spec.Template, HashLabel: revision.DaemonHashLabel}, ds.Status.CollisionCount, read.Matching)
	if err != nil {
		return nil, err
	}
	obs := &observation{selector: sel, pods: map[string]*corev1.Pod{}, revisions: revs.ByName, newRevision: revs.Pending(),
		updateRevision: revs.Decision.Update, collisionCount: revs.Decision.CollisionCount}
	obs.snap = &Snapshot{Spec: *spec, UpdateRevision: obs.updateRevision.Name, InPlace: revs.InPlace(r.Engine, &ds.Spec.Template, nil)}
	byHash := map[string]string{revision.ShortHash(obs.updateRevision.Name): obs.updateRevision.Name}
	for name := range obs.revisions {
		byHash[revision.ShortHash(name)] = name
	}
	var nodes corev1.NodeList
	if err := r.Client.List(ctx, &nodes, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	onNode := map[string][]PodFacts{}
	for _, pod := range read.Matching {
		node := nodeeligibility.TargetNode(pod)
		if node == "" || !(metav1.IsControlledBy(pod, ds) || podcontrol.Adoptable(pod)) {
			continue
		}
		obs.pods[pod.Name] = pod
		st, progress, recreate := podcontrol.Observe(pod, spec.Lifecycle)
		obs.inFlight.Add(pod.Name, progress, recreate)
		rev := pod.Labels[revision.DaemonHashLabel]
		if name, ok := byHash[rev]; ok {
			rev = name
		}
		onNode[node] = append(onNode[node], PodFacts{State: st, Name: pod.Name, Revision: rev, Created: pod.CreationTimestamp.Time})
	}
	r.observeCurrent(ds, obs, onNode)
	obs.snap.Nodes = r.observeNodes(ds, spec, nodes.Items, onNode)
	for _, n := range obs.snap.Nodes {
		delete(onNode, n.Name)
	}
	for _, strays := range onNode {
		obs.snap.Strays = append(obs.snap.Strays, strays...)
	}
	obs.adopt, obs.release = podcontrol.Orphans(read.Matching, func(p *corev1.Pod) bool { return nodeeligibility.TargetNode(p) != "" }), read.Strays
	return obs, nil
}

// observeNodes gives every node its verdict for the set's pod template (with the daemon pod
// tolerations), its daemon pods oldest first, and its failure back-off.
func (r *Reconciler) observeNodes(ds *v1beta1.DaemonSet, spec *v1beta1.DaemonSetSpec, nodes []corev1.Node, onNode map[string][]PodFacts) []NodeFacts {
	podSpec := spec.Template.Spec
	podSpec.Tolerations = nodeeligibility.DaemonTolerations(&spec.Template.Spec)
	now := r.Clock.Now()
	out := make([]NodeFacts, 0, len(nodes))
	for i := range nodes {
		node := &nodes[i]
		pods := onNode[node.Name]
		sort.SliceStable(pods, func(a, b int) bool {
			if !pods[a].Created.Equal(pods[b].Created) {
				return pods[a].Created.Before(pods[b].Created)
			}
			return pods[a].Name < pods[b].Name
		})
		n := NodeFacts{Name: node.Name, Labels: node.Labels, Pods: pods,
			Verdict: nodeeligibility.Evaluate(node, &podSpec, nodeeligibility.Rules{})}
		if key := backoffKey(ds, node.Name); r.backoff.IsInBackOffSinceUpdate(key, now) {
			n.BackoffUntil = now.Add(r.backoff.Get(key))
		}
		out = append(out, n)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// observeCurrent finds the current revision: the one most live pods not at the update revision run
// (of two, the newer). Unless the controller keeps unselected nodes as they are, the snapshot
// gets it with the in-place decision for moving back to it.
func (r *Reconciler) observeCurrent(ds *v1beta1.DaemonSet, obs *observation, onNode map[string][]PodFacts) {
	count := map[string]int{}
	for _, pods := range onNode {
		for _, p := range pods {
			if p.live() && p.Revision != obs.snap.UpdateRevision && obs.revisions[p.Revision] != nil {
				count[p.Revision]++
			}
		}
	}
	best := ""
	for rev, n := range count {
		if best == "" || n > count[best] || (n == count[best] && obs.revisions[rev].Revision > obs.revisions[best].Revision) {
			best = rev
		}
	}
	if best == "" {
		return
	}
	obs.current = obs.revisions[best]
	if r.KeepUnselected {
		return
	}
	tmpl, err := revision.TemplateOf(obs.current)
	if err != nil {
		return // unreadable: nothing to move back to
	}
	obs.snap.CurrentRevision = best
	obs.snap.RollBack = r.Engine.CanUpdateInPlace(&ds.Spec.Template, tmpl, best)
}

// backoffKey keys a node's failure back-off for one set (by UID: a set recreated starts afresh).
func backoffKey(ds *v1beta1.DaemonSet, node string) string { return string(ds.UID) + "/" + node }
