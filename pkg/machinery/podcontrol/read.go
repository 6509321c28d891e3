package podcontrol

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PodIndex reads pods straight from the manager's pod informer: the cache's own objects, neither
// copied nor decoded again, found by an index of their controller. A workload reads all its pods
// on every reconcile; at 10,000 pods a List, even without deep copies, copied 10,000 pod structs
// (about 12 MB) each time, and a walk over the namespace costs every workload of a namespace the
// pods of all the others (200 CloneSets of 25 pods: 5,000 pods per reconcile). Objects read here
// must never be modified (writes go through engine.Ref); the informer replaces an object on
// update, it never changes one.
type PodIndex struct {
	indexer toolscache.Indexer
}

// byController is the informer index PodIndex adds: a pod's namespace and the UID of its
// controller ("ns/" for a pod without one).
const byController = "kruise.io/namespace-controller"

func byControllerKey(namespace string, uid types.UID) string { return namespace + "/" + string(uid) }

func indexByController(obj any) ([]string, error) {
	o, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	var uid types.UID
	if ref := metav1.GetControllerOfNoCopy(o); ref != nil {
		uid = ref.UID
	}
	return []string{byControllerKey(o.GetNamespace(), uid)}, nil
}

// NewPodIndex is the index of c's pod informer (the informer the manager's client reads); the
// first call adds the controller index to the informer (before the manager starts).
func NewPodIndex(ctx context.Context, c ctrlcache.Cache) (*PodIndex, error) {
	inf, err := c.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return nil, err
	}
	shared, ok := inf.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, errors.New("the cache's pod informer has no indexer")
	}
	if _, added := shared.GetIndexer().GetIndexers()[byController]; !added {
		if err := inf.AddIndexers(toolscache.Indexers{byController: indexByController}); err != nil {
			return nil, fmt.Errorf("index the cached pods by controller: %w", err)
		}
	}
	return &PodIndex{indexer: shared.GetIndexer()}, nil
}

// WorkloadPods are a workload's pods as read: Matching are the pods its selector matches that it
// controls or that have no controller (read from a client: any owner), Strays the pods it
// controls that its selector no longer matches and that are not being deleted (the pods to
// release).
type WorkloadPods struct {
	Matching, Strays []*corev1.Pod
}

// ReadPods reads owner's pods: from idx when it is set and r is the cache it indexes (the pods
// owner controls and the pods without a controller of its namespace, no copies), else from r (the
// API server, a test's client) by a List, with the Strays only when owned (a cache with
// ControllerIndex, IndexPods) says r can find them.
func ReadPods(ctx context.Context, idx *PodIndex, r client.Reader, fromIndex, owned bool, owner client.Object, sel labels.Selector) (WorkloadPods, error) {
	var out WorkloadPods
	if idx != nil && fromIndex {
		controlled, err := idx.indexer.ByIndex(byController, byControllerKey(owner.GetNamespace(), owner.GetUID()))
		if err != nil {
			return out, fmt.Errorf("read the pods of %s/%s: %w", owner.GetNamespace(), owner.GetName(), err)
		}
		orphans, err := idx.indexer.ByIndex(byController, byControllerKey(owner.GetNamespace(), ""))
		if err != nil {
			return out, fmt.Errorf("read the pods without a controller of namespace %s: %w", owner.GetNamespace(), err)
		}
		out.Matching = make([]*corev1.Pod, 0, len(controlled))
		for _, o := range controlled {
			p, ok := o.(*corev1.Pod)
			if !ok {
				continue
			}
			switch {
			case sel.Matches(labels.Set(p.Labels)):
				out.Matching = append(out.Matching, p)
			case owned && p.DeletionTimestamp == nil:
				out.Strays = append(out.Strays, p)
			}
		}
		for _, o := range orphans {
			if p, ok := o.(*corev1.Pod); ok && sel.Matches(labels.Set(p.Labels)) {
				out.Matching = append(out.Matching, p)
			}
		}
		return out, nil
	}
	var list corev1.PodList
	if err := r.List(ctx, &list, client.InNamespace(owner.GetNamespace()), client.MatchingLabelsSelector{Selector: sel},
		client.UnsafeDisableDeepCopy); err != nil {
		return out, err
	}
	for i := range list.Items {
		out.Matching = append(out.Matching, &list.Items[i])
	}
	if owned {
		var err error
		if out.Strays, err = Strays(ctx, r, owner, sel); err != nil {
			return out, err
		}
	}
	return out, nil
}
