package statefulset

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// gvk is the Advanced StatefulSet kind (the storage version), the owner of its pods and revisions.
var gvk = v1beta1.GroupVersion.WithKind("StatefulSet")

// observation is what observe read: the planner's snapshot plus the objects apply needs.
type observation struct {
	snap      *Snapshot
	selector  labels.Selector
	pods      map[string]*corev1.Pod
	revisions map[string]*appsv1.ControllerRevision
	// newRevision is set when the update revision must be created (or renumbered) first.
	newRevision    *revision.Decision
	updateRevision *appsv1.ControllerRevision
	collisionCount int32
	inFlight       podcontrol.InFlight
	// adopt are orphans named as the set's pods that match its selector; release are pods it
	// controls that no longer match it.
	adopt, release []*corev1.Pod
	// claims are the PVCs of the set's namespace that match its selector, by name.
	claims map[string]*corev1.PersistentVolumeClaim
}

// observe reads the set's revisions and claims from the cache and its pods through pods (the
// cache, or the API server to check writes the cache has not shown), and builds the snapshot. A
// spec the controller cannot run is a *refusal, returned before anything is read.
func (r *Reconciler) observe(ctx context.Context, set *v1beta1.StatefulSet, live bool) (*observation, error) {
	obj := &v1beta1.StatefulSet{Spec: *set.Spec.DeepCopy()}
	defaults.SetDefaultsStatefulSetV1beta1(obj)
	spec := &obj.Spec
	if !r.StartOrdinal {
		spec.Ordinals = nil // StatefulSetStartOrdinal off: ordinals start at 0
	}
	sel, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err != nil {
		return nil, refuse(fmt.Errorf("spec.selector: %w", err))
	}
	// Before any pod is read: a spec beyond the bounds is refused in O(its entries).
	replicas, err := ordinal.Bounded(startOf(spec), ptr.Deref(spec.Replicas, 1), spec.ReserveOrdinals)
	if err != nil {
		return nil, refuse(err)
	}
	read, err := r.ReadPods(ctx, live, set, sel)
	if err != nil {
		return nil, err
	}
	revs, err := r.Revisions(ctx, set, gvk, sel, revision.Input{Template: &set.Spec.Template}, set.Status.CollisionCount, read.Matching)
	if err != nil {
		return nil, err
	}
	obs := &observation{selector: sel, pods: map[string]*corev1.Pod{}, revisions: revs.ByName, newRevision: revs.Pending(),
		updateRevision: revs.Decision.Update, collisionCount: revs.Decision.CollisionCount}
	current := set.Status.CurrentRevision
	if _, ok := obs.revisions[current]; !ok {
		current = obs.updateRevision.Name
	}
	obs.snap = &Snapshot{Spec: *spec, Name: set.Name, Reserved: replicas.Reserved(), CurrentRevision: current,
		UpdateRevision: obs.updateRevision.Name, InPlace: revs.InPlace(r.Engine, &set.Spec.Template, nil)}
	for _, pod := range read.Matching {
		ord := ordinal.OrdinalOf(set.Name, pod.Name)
		if ord < 0 || !(metav1.IsControlledBy(pod, set) || podcontrol.Adoptable(pod)) {
			continue // an orphan with the name of one of its pods is adopted by apply, so it counts
		}
		obs.pods[pod.Name] = pod
		st, progress, recreate := podcontrol.Observe(pod, spec.Lifecycle)
		obs.inFlight.Add(pod.Name, progress, recreate)
		f := PodFacts{State: st, Name: pod.Name, Ordinal: ord, Labels: pod.Labels,
			Revision: pod.Labels[inplace.RevisionLabel]}
		_, f.SpecifiedDelete = pod.Labels[v1alpha1.SpecifiedDeleteKey]
		obs.snap.Pods = append(obs.snap.Pods, f)
	}
	sort.Slice(obs.snap.Pods, func(i, j int) bool { return obs.snap.Pods[i].Ordinal < obs.snap.Pods[j].Ordinal })
	if err := r.observeClaims(ctx, set, sel, obs); err != nil {
		return nil, err
	}
	obs.adopt, obs.release = podcontrol.Orphans(read.Matching, func(p *corev1.Pod) bool { return ordinal.OrdinalOf(set.Name, p.Name) >= 0 }), read.Strays
	if spec.VolumeClaimUpdateStrategy.Type == v1beta1.OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy {
		for i := range obs.snap.Pods {
			f := &obs.snap.Pods[i]
			f.ClaimsBehind, f.ClaimsResizing = claimsState(set, obs.claims, f.Ordinal)
		}
	}
	return obs, nil
}

// claimsState says whether a claim of the pod of ordinal ord requests less storage than its
// template (behind), or requests enough but has less capacity (resizing). Missing claims are
// neither: they are created with the template's size.
func claimsState(set *v1beta1.StatefulSet, claims map[string]*corev1.PersistentVolumeClaim, ord int) (behind, resizing bool) {
	for _, t := range set.Spec.VolumeClaimTemplates {
		pvc := claims[ordinal.ClaimName(t.Name, set.Name, ord)]
		want, ok := t.Spec.Resources.Requests[corev1.ResourceStorage]
		if pvc == nil || !ok {
			continue
		}
		req := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		got, bound := pvc.Status.Capacity[corev1.ResourceStorage]
		switch {
		case req.Cmp(want) < 0:
			behind = true
		case bound && got.Cmp(req) < 0:
			resizing = true
		}
	}
	return behind, resizing
}

// observeClaims reads the PVCs that may belong to the set's pods.
func (r *Reconciler) observeClaims(ctx context.Context, set *v1beta1.StatefulSet, sel labels.Selector, obs *observation) error {
	obs.claims = map[string]*corev1.PersistentVolumeClaim{}
	if len(set.Spec.VolumeClaimTemplates) == 0 {
		return nil
	}
	var list corev1.PersistentVolumeClaimList
	if err := r.Client.List(ctx, &list, client.InNamespace(set.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return fmt.Errorf("list PVCs: %w", err)
	}
	for i := range list.Items {
		obs.claims[list.Items[i].Name] = &list.Items[i]
	}
	return nil
}
