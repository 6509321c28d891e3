package podcontrol

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
)

// ApplyRevision creates the update revision dec decided on, or renumbers it to be the newest; it
// returns the revision as written (nil dec: nothing to do).
func (c *Control) ApplyRevision(ctx context.Context, dec *revision.Decision) (*appsv1.ControllerRevision, error) {
	if dec == nil {
		return nil, nil
	}
	rev := dec.Update
	if dec.Create {
		if err := c.Client.Create(ctx, rev); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create revision %s: %w", rev.Name, err)
		}
	} else if err := c.Client.Update(ctx, rev); err != nil {
		return nil, fmt.Errorf("renumber revision %s: %w", rev.Name, err)
	}
	return rev, nil
}

// PruneRevisions deletes the oldest revisions not in use beyond limit (revisionHistoryLimit).
func (c *Control) PruneRevisions(ctx context.Context, o Owner, revs map[string]*appsv1.ControllerRevision, inUse map[string]bool, limit int32) {
	all := make([]*appsv1.ControllerRevision, 0, len(revs))
	for _, rev := range revs {
		all = append(all, rev)
	}
	for _, rev := range revision.ToDelete(all, inUse, limit) {
		if err := c.Client.Delete(ctx, rev); err != nil && !apierrors.IsNotFound(err) {
			c.Event(o, corev1.EventTypeWarning, "FailedDeleteRevision", "delete revision %s: %v", rev.Name, err)
		}
	}
}

// WriteStatus writes status as obj's whole status in one JSON patch ("add" replaces an existing
// member), without a resourceVersion precondition: the controller is the status's only writer, so
// an object read from a cache one write behind must not cost a conflict and a retried reconcile.
// (A merge patch of the difference would be wrong here: computed against a stale status it would
// leave fields of the last write in place.) obj is not modified.
func (c *Control) WriteStatus(ctx context.Context, obj client.Object, status any) error {
	body, err := json.Marshal([]map[string]any{{"op": "add", "path": "/status", "value": status}})
	if err != nil {
		return err
	}
	if err := c.Client.Status().Patch(ctx, obj.DeepCopyObject().(client.Object), client.RawPatch(types.JSONPatchType, body)); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	return nil
}

// Revisions are a workload's ControllerRevisions as observed: by name, with the update revision
// Select decided on for the workload's template.
type Revisions struct {
	ByName map[string]*appsv1.ControllerRevision
	// Decision is revision.Select's for the workload's template; Decision.Update is the update
	// revision (to create or renumber first when Decision.Create or Decision.Renumber).
	Decision revision.Decision
}

// ObserveRevisions reads the revisions owner (of kind gvk) controls among those of its namespace
// that match sel, and decides which records in (revision.Select, with the owner's
// status.collisionCount). indexed says c is the manager's cache with ControllerIndex (IndexOwned):
// the owner's revisions are then found by the index and read without copies (the cache's own
// objects: read-only, as Select and the workloads treat them), else by a List of sel.
func ObserveRevisions(ctx context.Context, c client.Reader, indexed bool, owner client.Object, gvk schema.GroupVersionKind, sel labels.Selector,
	in revision.Input, collisionCount *int32) (Revisions, error) {
	var list appsv1.ControllerRevisionList
	opts := []client.ListOption{client.InNamespace(owner.GetNamespace()), client.MatchingLabelsSelector{Selector: sel}}
	if indexed {
		opts = []client.ListOption{client.InNamespace(owner.GetNamespace()),
			client.MatchingFields{ControllerIndex: string(owner.GetUID())}, client.UnsafeDisableDeepCopy}
	}
	if err := c.List(ctx, &list, opts...); err != nil {
		return Revisions{}, fmt.Errorf("list revisions: %w", err)
	}
	out := Revisions{ByName: map[string]*appsv1.ControllerRevision{}}
	var revs []*appsv1.ControllerRevision
	for i := range list.Items {
		rev := &list.Items[i]
		if metav1.IsControlledBy(rev, owner) && (!indexed || sel.Matches(labels.Set(rev.Labels))) {
			revs = append(revs, rev)
			out.ByName[rev.Name] = rev
		}
	}
	dec, err := revision.Select(revs, owner, gvk, in, collisionCount)
	if err != nil {
		return Revisions{}, err
	}
	out.Decision = dec
	return out, nil
}

// AdoptRevisions makes owner (of kind gvk) the controller of the revisions that match sel and have
// no controller, read live from r (the cache may not show a garbage collector's orphaning yet), with
// writer w; it returns how many it adopted. Each patch names the revision's UID: a revision deleted
// and made again meanwhile is not adopted. Revisions its predecessor still holds (HeldByPredecessor:
// the garbage collector has not released them yet) make it return a PredecessorError after the
// adoptions. An owner being deleted (CanAdopt, asked of r) adopts nothing.
func AdoptRevisions(ctx context.Context, w client.Writer, r client.Reader, owner client.Object, gvk schema.GroupVersionKind, sel labels.Selector) (int, error) {
	var list appsv1.ControllerRevisionList
	if err := r.List(ctx, &list, client.InNamespace(owner.GetNamespace()), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return 0, fmt.Errorf("list revisions to adopt: %w", err)
	}
	ref, err := json.Marshal(metav1.NewControllerRef(owner, gvk))
	if err != nil {
		return 0, err
	}
	adopted := 0
	var held []string
	checked := false
	for i := range list.Items {
		rev := &list.Items[i]
		if HeldByPredecessor(rev, owner, gvk) && rev.DeletionTimestamp == nil {
			held = append(held, rev.Name)
		}
		if metav1.GetControllerOfNoCopy(rev) != nil || rev.DeletionTimestamp != nil {
			continue
		}
		if !checked {
			if ok, err := CanAdopt(ctx, r, owner); err != nil || !ok {
				return 0, err
			}
			checked = true
		}
		if err := w.Patch(ctx, rev, adoptPatch(ref, rev.UID)); err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				continue
			}
			return adopted, fmt.Errorf("adopt revision %s: %w", rev.Name, err)
		}
		adopted++
	}
	if len(held) > 0 {
		return adopted, &PredecessorError{What: "revisions", Names: held}
	}
	return adopted, nil
}

// Unknown is a revision one of pods is labelled with (inplace.RevisionLabel: the revision's name
// or, as Kubernetes' DaemonSets and CloneSetShortHash write it, its hash) that r does not hold;
// "" when r holds every pod's.
func (r Revisions) Unknown(pods []*corev1.Pod) string {
	var hashes map[string]bool
	for _, p := range pods {
		v := p.Labels[inplace.RevisionLabel]
		if v == "" || r.ByName[v] != nil {
			continue
		}
		if hashes == nil {
			hashes = make(map[string]bool, len(r.ByName))
			for name := range r.ByName {
				hashes[revision.ShortHash(name)] = true
			}
		}
		if !hashes[v] {
			return v
		}
	}
	return ""
}

// Pending is the decision to write before the update revision can be used (nil when it exists as
// it should).
func (r Revisions) Pending() *revision.Decision {
	if r.Decision.Create || r.Decision.Renumber {
		return &r.Decision
	}
	return nil
}

// InPlace is, per revision other than the update revision, whether a pod of it moves to the
// update revision (template to) in place (eng.CanUpdateInPlace). A revision whose template cannot
// be read has no entry: its pods are recreated. skip, when not nil, gives the decision for a
// revision instead (ok true).
func (r Revisions) InPlace(eng engine.Engine, to *corev1.PodTemplateSpec,
	skip func(rev *appsv1.ControllerRevision) (inplace.Decision, bool)) map[string]inplace.Decision {
	update := r.Decision.Update.Name
	out := map[string]inplace.Decision{}
	for name, rev := range r.ByName {
		if name == update {
			continue
		}
		if skip != nil {
			if d, ok := skip(rev); ok {
				out[name] = d
				continue
			}
		}
		if old, err := revision.TemplateOf(rev); err == nil {
			out[name] = eng.CanUpdateInPlace(old, to, update)
		}
	}
	return out
}
