package cloneset

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/core/updateorder"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// gvk is the CloneSet kind, the owner of its pods and revisions.
var gvk = v1alpha1.GroupVersion.WithKind("CloneSet")

// observation is what observe read: the planner's snapshot plus the objects apply needs.
type observation struct {
	snap           *Snapshot
	pods           map[string]*corev1.Pod
	revisions      map[string]*appsv1.ControllerRevision
	updateRevision *appsv1.ControllerRevision
	// newRevision is set when the update revision must be created (or renumbered) first.
	newRevision    *revision.Decision
	collisionCount *int32
	// inFlight are the pods whose in-place updates need the engine's next step.
	inFlight podcontrol.InFlight
	// claims are the CloneSet's PVCs by instance ID.
	claims map[string][]*corev1.PersistentVolumeClaim
	// inactive are the CloneSet's Failed and Succeeded pods: no replicas, left alone.
	inactive []*corev1.Pod
	// adopt are orphans that match the selector; release are pods it controls that no longer do.
	adopt, release []*corev1.Pod
}

// observe reads the CloneSet's revisions from the cache and its pods through pods (the cache, or
// the API server to check writes the cache has not shown: Expectations.Pending), and builds the
// snapshot.
func (r *Reconciler) observe(ctx context.Context, cs *v1alpha1.CloneSet, live bool) (*observation, error) {
	// The planner needs defaults even for objects stored before the webhook ran; default a copy.
	obj := &v1alpha1.CloneSet{Spec: *cs.Spec.DeepCopy()}
	defaults.SetDefaultsCloneSet(obj)
	spec := &obj.Spec
	sel, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err != nil {
		return nil, reconcile.TerminalError(fmt.Errorf("spec.selector: %w", err)) // only a spec change mends it
	}
	// The pods are the cache's own objects, not copies (podcontrol.ReadPods): a reconcile reads
	// every pod and writes to a few. Nothing here or in the planner modifies them; apply writes
	// through engine.Ref.
	read, err := r.ReadPods(ctx, live, cs, sel)
	if err != nil {
		return nil, err
	}
	in := revision.Input{Template: &cs.Spec.Template, VolumeClaimTemplates: cs.Spec.VolumeClaimTemplates, RecordClaimTemplates: true}
	revs, err := r.Revisions(ctx, cs, gvk, sel, in, cs.Status.CollisionCount, read.Matching)
	if err != nil {
		return nil, err
	}
	dec := revs.Decision
	obs := &observation{pods: make(map[string]*corev1.Pod, len(read.Matching)), revisions: revs.ByName, updateRevision: dec.Update,
		newRevision: revs.Pending()}
	cc := dec.CollisionCount
	obs.collisionCount = &cc
	current := cs.Status.CurrentRevision
	if _, ok := obs.revisions[current]; !ok {
		current = dec.Update.Name
	}
	newTemplate := &cs.Spec.Template
	obs.snap = &Snapshot{Spec: *spec, CurrentRevision: current, UpdateRevision: dec.Update.Name,
		ExcludePreparingDelete: cs.Labels[ScalingExcludePreparingDeleteLabel] == "true",
		InPlace: revs.InPlace(r.Engine, newTemplate, func(rev *appsv1.ControllerRevision) (inplace.Decision, bool) {
			if r.RecreateOnClaimChange && revision.ClaimTemplatesChanged(rev, dec.Update) {
				return inplace.Decision{RecreateReasons: []string{
					"spec.volumeClaimTemplates changed with the template (RecreatePodWhenChangeVCTInCloneSetGate): pods need new claims"}}, true
			}
			return inplace.Decision{}, false
		}),
		Pods: make([]PodFacts, 0, len(read.Matching))}
	if rev := obs.revisions[current]; r.PartitionRollback && rev != nil && current != dec.Update.Name {
		if old, err := revision.TemplateOf(rev); err == nil {
			d := r.Engine.CanUpdateInPlace(newTemplate, old, current)
			obs.snap.Rollback = &d
		}
	}
	// known are the revisions a pod's label may name, by that label: each revision's name and its
	// short hash (CloneSetShortHash), and the update revision's even before it is created.
	known := map[string]string{dec.Update.Name: dec.Update.Name, revision.ShortHash(dec.Update.Name): dec.Update.Name}
	for name := range obs.revisions {
		known[name], known[revision.ShortHash(name)] = name, name
	}
	for _, pod := range read.Matching {
		if !metav1.IsControlledBy(pod, cs) && !predecessors(pod, known) {
			continue
		}
		if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
			// Not a replica (an evicted pod, say), as in OpenKruise: not counted, not updated, not
			// deleted -- the pod garbage collector removes it. Its instance ID stays taken.
			obs.inactive = append(obs.inactive, pod)
			continue
		}
		obs.pods[pod.Name] = pod
		facts, progress, recreate := podFacts(pod, spec)
		if name, ok := known[facts.Revision]; ok {
			facts.Revision = name // a short hash (CloneSetShortHash) names its revision
		}
		obs.inFlight.Add(pod.Name, progress, recreate)
		obs.snap.Pods = append(obs.snap.Pods, facts)
	}
	sort.Slice(obs.snap.Pods, func(i, j int) bool { return obs.snap.Pods[i].Name < obs.snap.Pods[j].Name })
	if err := r.observeClaims(ctx, cs, sel, obs); err != nil {
		return nil, err
	}
	obs.adopt, obs.release = podcontrol.Orphans(read.Matching, func(*corev1.Pod) bool { return true }), read.Strays
	if err := r.predecessorPods(ctx, cs, sel, len(obs.snap.Pods)); err != nil {
		return nil, err
	}
	return obs, nil
}

// predecessorPods is a podcontrol.PredecessorError while cs has fewer pods than its replicas (it
// would make pods) and pods its selector matches are still held by its predecessor (deleted with
// propagation Orphan, created again under its name; the garbage collector has not released them
// yet): they are adopted, and counted, once released (the soak, seed 3).
func (r *Reconciler) predecessorPods(ctx context.Context, cs *v1alpha1.CloneSet, sel labels.Selector, have int) error {
	if int32(have) >= ptr.Deref(cs.Spec.Replicas, 1) {
		return nil
	}
	var list corev1.PodList
	if err := r.Client.List(ctx, &list, client.InNamespace(cs.Namespace), client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	var held []string
	for i := range list.Items {
		if p := &list.Items[i]; p.DeletionTimestamp == nil && podcontrol.HeldByPredecessor(p, cs, gvk) {
			held = append(held, p.Name)
		}
	}
	if len(held) > 0 {
		return &podcontrol.PredecessorError{What: "pods", Names: held}
	}
	return nil
}

// predecessors reports whether pod, to adopt (no controller), was made by a CloneSet of this
// template: it has an instance ID and names a revision this CloneSet knows (known: by name or
// short hash), the update revision included even while it is to be created. Such a pod -- a
// CloneSet deleted with propagation Orphan and created again leaves them -- is adopted before the
// plan acts (Apply) and counts as a replica at once, as OpenKruise claims pods before it counts
// them: not counting it made the CloneSet create as many pods again, then delete them (the soak,
// seed 3; again when the garbage collector had deleted the orphans' revision, which the new
// CloneSet then created under the same name). Other orphans are adopted and counted from the next
// reconcile.
func predecessors(pod *corev1.Pod, known map[string]string) bool {
	if !podcontrol.Adoptable(pod) || pod.Labels[v1alpha1.CloneSetInstanceIDLabelKey] == "" {
		return false
	}
	rev := pod.Labels[inplace.RevisionLabel]
	_, ok := known[rev]
	return rev != "" && ok
}

// observeClaims reads the CloneSet's PVCs (volumeClaimTemplates) by instance ID, and the instance
// IDs whose PVCs no pod has (FreeInstanceIDs; a PVC being deleted is not free).
func (r *Reconciler) observeClaims(ctx context.Context, cs *v1alpha1.CloneSet, sel labels.Selector, obs *observation) error {
	obs.claims = map[string][]*corev1.PersistentVolumeClaim{}
	var list corev1.PersistentVolumeClaimList
	if err := r.Client.List(ctx, &list, client.InNamespace(cs.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return fmt.Errorf("list PVCs: %w", err)
	}
	used, terminating := map[string]bool{}, map[string]bool{}
	for _, p := range obs.inactive {
		used[p.Labels[v1alpha1.CloneSetInstanceIDLabelKey]] = true
	}
	for _, p := range obs.pods {
		id := p.Labels[v1alpha1.CloneSetInstanceIDLabelKey]
		used[id] = true
		if p.DeletionTimestamp != nil {
			terminating[id] = true
		}
	}
	free, soon := map[string]bool{}, map[string]bool{}
	for i := range list.Items {
		pvc := &list.Items[i]
		id := pvc.Labels[v1alpha1.CloneSetInstanceIDLabelKey]
		if id == "" || !metav1.IsControlledBy(pvc, cs) {
			continue
		}
		obs.claims[id] = append(obs.claims[id], pvc)
		switch {
		case pvc.DeletionTimestamp != nil:
		case !used[id]:
			free[id] = true
		case terminating[id]:
			soon[id] = true
		}
	}
	obs.snap.FreeInstanceIDs = slices.Sorted(maps.Keys(free))
	obs.snap.TerminatingInstanceIDs = slices.Sorted(maps.Keys(soon))
	return nil
}

// podFacts summarises a pod for the planner, with where its in-place update stands and the containers
// kruise-daemon must still restart for their env.
func podFacts(pod *corev1.Pod, spec *v1alpha1.CloneSetSpec) (PodFacts, inplace.Progress, []string) {
	f := PodFacts{
		Name:         pod.Name,
		InstanceID:   pod.Labels[v1alpha1.CloneSetInstanceIDLabelKey],
		Labels:       pod.Labels,
		Revision:     pod.Labels[inplace.RevisionLabel],
		Phase:        pod.Status.Phase,
		Terminating:  pod.DeletionTimestamp != nil,
		NodeName:     pod.Spec.NodeName,
		CreationTime: pod.CreationTimestamp.Time,
	}
	if _, ok := pod.Labels[v1alpha1.SpecifiedDeleteKey]; ok {
		f.SpecifiedDelete = true
	}
	for _, name := range spec.ScaleStrategy.PodsToDelete {
		if name == pod.Name {
			f.SpecifiedDelete = true
		}
	}
	f.DeletionCost = deletionCost(pod.Annotations[corev1.PodDeletionCost])
	for _, c := range pod.Status.ContainerStatuses {
		f.RestartCount += c.RestartCount
	}
	f.MaxRestarts, f.SidecarRestarts = updateorder.Restarts(pod)
	st, progress, recreate := podcontrol.Observe(pod, spec.Lifecycle)
	f.Ready, f.ReadySince, f.InPlaceUpdating, f.GraceDue = st.Ready, st.ReadySince, st.InPlaceUpdating, st.GraceDue
	f.Lifecycle, f.PreDeleteHeld, f.PreUpdateHeld = st.Lifecycle, st.PreDeleteHeld, st.PreUpdateHeld
	f.PreNormalReleased, f.UpdatedReleased = st.PreNormalReleased, st.UpdatedReleased
	return f, progress, recreate
}
