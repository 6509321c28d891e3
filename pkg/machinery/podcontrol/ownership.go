package podcontrol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/pkg/machinery/engine"
)

// What a workload owns, as every Kubernetes workload controller keeps it: pods that match its
// selector and have no controller are adopted; pods it controls whose labels stop matching are
// released (their controller reference removed; they keep running).

// ControllerIndex indexes pods and ControllerRevisions by the UID of their controller, whatever its
// kind (IndexOwned).
const ControllerIndex = "pod.controller.uid"

// IndexOwned registers ControllerIndex for pods and ControllerRevisions with the manager's cache;
// call it once per manager. A workload then reads its own revisions, not every revision its
// selector matches in the namespace (200 CloneSets with one selector: 400 per reconcile).
func IndexOwned(ctx context.Context, indexer client.FieldIndexer) error {
	for _, obj := range []client.Object{&corev1.Pod{}, &appsv1.ControllerRevision{}} {
		if err := indexer.IndexField(ctx, obj, ControllerIndex, controllerUID); err != nil {
			return err
		}
	}
	return nil
}

func controllerUID(obj client.Object) []string {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return []string{string(ref.UID)}
	}
	return nil
}

// Adoptable reports whether a pod that matches a workload's selector may be adopted: no
// controller owns it and it runs (not terminating, not finished).
func Adoptable(p *corev1.Pod) bool {
	return metav1.GetControllerOfNoCopy(p) == nil && p.DeletionTimestamp == nil &&
		p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded
}

// Orphans are the Adoptable pods of matching (they match the workload's selector) that member
// accepts: the pods to adopt.
func Orphans(matching []*corev1.Pod, member func(*corev1.Pod) bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range matching {
		if Adoptable(p) && member(p) {
			out = append(out, p)
		}
	}
	return out
}

// Strays are the pods owner controls whose labels no longer match sel: the pods to release. c
// must be a cache with ControllerIndex (IndexPods).
func Strays(ctx context.Context, c client.Reader, owner client.Object, sel labels.Selector) ([]*corev1.Pod, error) {
	var owned corev1.PodList
	if err := c.List(ctx, &owned, client.InNamespace(owner.GetNamespace()), client.MatchingFields{ControllerIndex: string(owner.GetUID())},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list the pods it controls: %w", err)
	}
	var out []*corev1.Pod
	for i := range owned.Items {
		if p := &owned.Items[i]; !sel.Matches(labels.Set(p.Labels)) && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// ErrOwnerGone is returned instead of any write by a workload that is gone, being deleted or
// replaced under its name, as the API server shows it while the cache still holds it as it was.
var ErrOwnerGone = errors.New("the workload is being deleted, or is gone, as the API server shows it: the cache is behind; no pod is written for it")

// OwnerLive returns ErrOwnerGone when o may not act on pods it would adopt (CanAdopt): a
// workload that finds pods matching its selector with no controller checks it before it writes
// anything, since such orphans are what the garbage collector leaves when it deletes the
// workload with propagation Orphan, and a reconcile of its stale cached copy would otherwise
// count them as its own and update them or make more (the soak, seed 38).
func (c *Control) OwnerLive(ctx context.Context, o Owner) error {
	ok, err := CanAdopt(ctx, c.APIReader, o.Object)
	switch {
	case err != nil:
		return err
	case !ok:
		return ErrOwnerGone
	}
	return nil
}

// Adopt makes o the controller of pods (each only if it is still the pod observed: UID
// precondition). The caller has checked o live first (OwnerLive: workloadloop.Apply does, before
// any write).
func (c *Control) Adopt(ctx context.Context, o Owner, pods []*corev1.Pod, done *Batch) error {
	ref, err := json.Marshal(metav1.NewControllerRef(o.Object, o.GVK))
	if err != nil {
		return err
	}
	if len(pods) == 0 {
		return nil
	}
	var errs []error
	for _, p := range pods {
		if err := c.Client.Patch(ctx, engine.Ref(p), adoptPatch(ref, p.UID)); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("adopt pod %s: %w", p.Name, err))
			continue
		}
		done.Add("Adopted", "adopted", p.Name, "it matches the selector and had no controller")
	}
	return errors.Join(errs...)
}

// adoptPatch adds the controller reference ref (JSON) to an object's owner references, merged by
// UID; the object's own UID is a precondition (one deleted and made again is not adopted).
func adoptPatch(ref []byte, uid types.UID) client.Patch {
	return client.RawPatch(types.StrategicMergePatchType, fmt.Appendf(nil, `{"metadata":{"ownerReferences":[%s],"uid":%q}}`, ref, uid))
}

// Release removes o's controller reference from pods.
func (c *Control) Release(ctx context.Context, o Owner, pods []*corev1.Pod, done *Batch) error {
	var errs []error
	for _, p := range pods {
		patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"$patch":"delete","uid":%q}],"uid":%q}}`, o.Object.GetUID(), p.UID)
		if err := c.Client.Patch(ctx, engine.Ref(p), client.RawPatch(types.StrategicMergePatchType, []byte(patch))); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("release pod %s: %w", p.Name, err))
			continue
		}
		done.Add("Released", "released", p.Name, "its labels no longer match the selector")
	}
	return errors.Join(errs...)
}

// ToController enqueues an object's controller when it is a workload of kind owner (namespaced):
// what the builder's Owns does, without the REST mapping controller-runtime's owner handler looks
// up on every event (at 2,000 pods, a tenth of the manager's allocations during a rollout).
func ToController(owner schema.GroupKind) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		ref := metav1.GetControllerOfNoCopy(o)
		if ref == nil || ref.Kind != owner.Kind {
			return nil
		}
		group, _, found := strings.Cut(ref.APIVersion, "/")
		if !found {
			group = "" // the core group: "v1"
		}
		if group != owner.Group {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}}}
	})
}

// OrphanPods passes events of pods without a controller: a workload may adopt them.
var OrphanPods = predicate.NewPredicateFuncs(func(o client.Object) bool { return metav1.GetControllerOfNoCopy(o) == nil })

// Selecting are the requests for the workloads of o's namespace (listed into list) whose selector
// (selectorOf) matches o's labels and that accept o (nil: all): the workloads an event of o (an
// orphan pod, a claim) concerns.
func Selecting(ctx context.Context, c client.Reader, o client.Object, list client.ObjectList,
	selectorOf func(client.Object) *metav1.LabelSelector, accept func(workload, o client.Object) bool) []reconcile.Request {
	if err := c.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, item := range items {
		w, ok := item.(client.Object)
		if !ok {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(selectorOf(w))
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(o.GetLabels())) && (accept == nil || accept(w, o)) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: w.GetNamespace(), Name: w.GetName()}})
		}
	}
	return reqs
}
