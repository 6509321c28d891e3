package sidecarset

import (
	"context"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// syncRevisions registers set's latest revision as OpenKruise does — the existing one with the
// same data (renumbered to be the newest when it is not), or a new one named with the collision
// count, raised on a name taken by other data — keeps its custom version label current, and
// prunes the history. It returns the latest revision and the collision count.
func (r *Reconciler) syncRevisions(ctx context.Context, pc *podcontrol.Control, owner podcontrol.Owner, set *v1beta1.SidecarSet,
	pods []*corev1.Pod) (*appsv1.ControllerRevision, int32, error) {
	revs, err := r.revisionsOf(ctx, set)
	if err != nil {
		return nil, 0, err
	}
	var cc int32
	if set.Status.CollisionCount != nil {
		cc = *set.Status.CollisionCount
	}
	data, err := sidecarrules.RevisionData(&set.Spec)
	if err != nil {
		return nil, 0, err
	}
	byName := map[string]*appsv1.ControllerRevision{}
	for _, rev := range revs {
		byName[rev.Name] = rev
	}
	newest := revision.MaxRevision(revs)
	var latest *appsv1.ControllerRevision
	for latest == nil {
		name, err := sidecarrules.RevisionName(set, &cc)
		if err != nil {
			return nil, 0, err
		}
		rev, ok := byName[name]
		switch {
		case !ok:
			if latest, err = r.createRevision(ctx, set, name, data, newest+1); err != nil {
				return nil, 0, err
			}
			revs = append(revs, latest)
		case !sidecarrules.SameRevisionData(rev.Data.Raw, data):
			cc++ // the name is taken by other data
		case rev.Revision < newest:
			rev = rev.DeepCopy()
			rev.Revision = newest + 1
			if err := r.Client.Update(ctx, rev); err != nil {
				return nil, 0, fmt.Errorf("renumber revision %s: %w", rev.Name, err)
			}
			latest = rev
		default:
			latest = rev
		}
	}
	if v := customVersion(set); v != "" && latest.Labels[sidecarrules.CustomVersionLabel] != v {
		rev := latest.DeepCopy()
		rev.Labels[sidecarrules.CustomVersionLabel] = v
		if err := r.Client.Update(ctx, rev); err != nil {
			return nil, 0, fmt.Errorf("label revision %s with custom version %s: %w", rev.Name, v, err)
		}
		latest = rev
	}
	pc.PruneRevisions(ctx, owner, revisionMap(revs, latest), inUse(set, pods, revs, latest), pruneLimit(set, revs, pods, latest))
	return latest, cc, nil
}

// customVersion is set's custom version: spec.customVersion, or, when that is empty, the label a
// v1beta1 client may have set on the SidecarSet itself (as on a v1alpha1 one).
func customVersion(set *v1beta1.SidecarSet) string {
	if set.Spec.CustomVersion != "" {
		return set.Spec.CustomVersion
	}
	return set.Labels[sidecarrules.CustomVersionLabel]
}

// createRevision writes set's revision name as OpenKruise builds it: in the manager's namespace,
// owned by the SidecarSet, with its labels and annotations, the owner label and data.
func (r *Reconciler) createRevision(ctx context.Context, set *v1beta1.SidecarSet, name string, data []byte, number int64) (*appsv1.ControllerRevision, error) {
	labels := maps.Clone(set.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[sidecarrules.RevisionOwnerLabel] = set.Name
	if v := customVersion(set); v != "" {
		labels[sidecarrules.CustomVersionLabel] = v
	}
	rev := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.RevisionNamespace, Labels: labels,
			Annotations:     maps.Clone(set.Annotations),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(set, v1beta1.GroupVersion.WithKind("SidecarSet"))}},
		Data:     runtime.RawExtension{Raw: data},
		Revision: number,
	}
	if err := r.Client.Create(ctx, rev); err != nil {
		return nil, fmt.Errorf("create revision %s: %w", name, err)
	}
	return rev, nil
}

func revisionMap(revs []*appsv1.ControllerRevision, latest *appsv1.ControllerRevision) map[string]*appsv1.ControllerRevision {
	out := make(map[string]*appsv1.ControllerRevision, len(revs))
	for _, rev := range revs {
		out[rev.Name] = rev
	}
	out[latest.Name] = latest
	return out
}

// inUse are the revisions never pruned: the latest, those the pods' hash entries name, and the one
// injectionStrategy.revision pins (by name, or the newest with its custom version).
func inUse(set *v1beta1.SidecarSet, pods []*corev1.Pod, revs []*appsv1.ControllerRevision, latest *appsv1.ControllerRevision) map[string]bool {
	used := map[string]bool{latest.Name: true}
	for _, pod := range pods {
		if specs, err := sidecarrules.PodUpgradeSpecs(pod, sidecarrules.HashAnnotation); err == nil {
			if name := specs[set.Name].ControllerRevision; name != "" {
				used[name] = true
			}
		}
	}
	if ref := set.Spec.InjectionStrategy.Revision; ref != nil {
		if pinned, err := sidecarrules.FindRevision(set, ref, revs); err == nil {
			used[pinned.Name] = true
		}
	}
	return used
}

// pruneLimit turns OpenKruise's rule — at most max(1, revisionHistoryLimit) revisions in all, the
// ones in use counted too — into revision.ToDelete's limit on the unused ones.
func pruneLimit(set *v1beta1.SidecarSet, revs []*appsv1.ControllerRevision, pods []*corev1.Pod, latest *appsv1.ControllerRevision) int32 {
	limit := int32(10)
	if set.Spec.RevisionHistoryLimit != nil {
		limit = max(1, *set.Spec.RevisionHistoryLimit)
	}
	used := inUse(set, pods, revs, latest)
	n := int32(0)
	for name := range revisionMap(revs, latest) {
		if used[name] {
			n++
		}
	}
	return max(0, limit-n)
}
