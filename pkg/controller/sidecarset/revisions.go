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

// syncRevisions registers set's latest revision as OpenKruise does (planRevision), keeps its
// custom version label current, and prunes the history. It returns the latest revision and the
// collision count.
func (r *Reconciler) syncRevisions(ctx context.Context, pc *podcontrol.Control, owner podcontrol.Owner, set *v1beta1.SidecarSet,
	pods []*corev1.Pod) (*appsv1.ControllerRevision, int32, error) {
	revs, err := r.revisionsOf(ctx, set)
	if err != nil {
		return nil, 0, err
	}
	d, err := planRevision(set, revs, r.RevisionNamespace)
	if err != nil {
		return nil, 0, err
	}
	latest := d.Update
	switch {
	case d.Create:
		if err := r.Client.Create(ctx, latest); err != nil {
			return nil, 0, fmt.Errorf("create revision %s: %w", latest.Name, err)
		}
		revs = append(revs, latest)
	case d.Renumber:
		if err := r.Client.Update(ctx, latest); err != nil {
			return nil, 0, fmt.Errorf("renumber revision %s: %w", latest.Name, err)
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
	return latest, d.CollisionCount, nil
}

// planRevision decides which of revs (set's revisions) records set's spec, named and numbered as
// OpenKruise names them (revision.Choose with revision.ReuseNamed): the revision named with
// status.collisionCount when it holds the same data (renumbered to be the newest when it is not),
// the count raised while the name is held by other data, else a new revision (newRevision).
func planRevision(set *v1beta1.SidecarSet, revs []*appsv1.ControllerRevision, namespace string) (revision.Decision, error) {
	var cc int32
	if set.Status.CollisionCount != nil {
		cc = *set.Status.CollisionCount
	}
	data, err := sidecarrules.RevisionData(&set.Spec)
	if err != nil {
		return revision.Decision{}, err
	}
	d, err := revision.Choose(revs, cc, revision.Wanted{
		Build: func(c int32) (*appsv1.ControllerRevision, error) {
			name, err := sidecarrules.RevisionName(set, &c)
			if err != nil {
				return nil, err
			}
			return newRevision(set, namespace, name, data), nil
		},
		Equal: func(existing, want *appsv1.ControllerRevision) bool {
			return sidecarrules.SameRevisionData(existing.Data.Raw, want.Data.Raw)
		},
		Reuse:   revision.ReuseNamed,
		Subject: "spec",
	})
	if err != nil {
		return revision.Decision{}, fmt.Errorf("revision of SidecarSet %s: %w", set.Name, err)
	}
	return d, nil
}

// customVersion is set's custom version: spec.customVersion, or, when that is empty, the label a
// v1beta1 client may have set on the SidecarSet itself (as on a v1alpha1 one).
func customVersion(set *v1beta1.SidecarSet) string {
	if set.Spec.CustomVersion != "" {
		return set.Spec.CustomVersion
	}
	return set.Labels[sidecarrules.CustomVersionLabel]
}

// newRevision is the revision name recording data for set, as OpenKruise builds it: in namespace
// (the manager's), owned by the SidecarSet, with its labels, annotations and the owner label; its
// number is Choose's to set.
func newRevision(set *v1beta1.SidecarSet, namespace, name string, data []byte) *appsv1.ControllerRevision {
	labels := maps.Clone(set.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[sidecarrules.RevisionOwnerLabel] = set.Name
	if v := customVersion(set); v != "" {
		labels[sidecarrules.CustomVersionLabel] = v
	}
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels,
			Annotations:     maps.Clone(set.Annotations),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(set, v1beta1.GroupVersion.WithKind("SidecarSet"))}},
		Data: runtime.RawExtension{Raw: data},
	}
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
