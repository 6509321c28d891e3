package podcontrol

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PodIndex reads pods straight from the manager's pod informer: the cache's own objects, neither
// copied nor decoded again. A workload reads all its pods on every reconcile; at 10,000 pods a
// List, even without deep copies, copied 10,000 pod structs (about 12 MB) each time, and a second
// time for the pods it controls (Strays). Objects read here must never be modified (writes go
// through engine.Ref); the informer replaces an object on update, it never changes one.
type PodIndex struct {
	indexer toolscache.Indexer
}

// NewPodIndex is the index of c's pod informer (the informer the manager's client reads).
func NewPodIndex(ctx context.Context, c ctrlcache.Cache) (*PodIndex, error) {
	inf, err := c.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return nil, err
	}
	shared, ok := inf.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, errors.New("the cache's pod informer has no indexer")
	}
	return &PodIndex{indexer: shared.GetIndexer()}, nil
}

// WorkloadPods are a workload's pods as read: Matching are the pods its selector matches (any
// owner), Strays the pods it controls that its selector no longer matches and that are not being
// deleted (the pods to release).
type WorkloadPods struct {
	Matching, Strays []*corev1.Pod
}

// ReadPods reads owner's pods: from idx when it is set and r is the cache it indexes (one walk over
// the namespace's pods, no copies), else from r (the API server, a test's client) by a List, with
// the Strays only when owned (a cache with ControllerIndex, IndexPods) says r can find them.
func ReadPods(ctx context.Context, idx *PodIndex, r client.Reader, fromIndex, owned bool, owner client.Object, sel labels.Selector) (WorkloadPods, error) {
	var out WorkloadPods
	if idx != nil && fromIndex {
		objs, err := idx.indexer.ByIndex(toolscache.NamespaceIndex, owner.GetNamespace())
		if err != nil {
			return out, fmt.Errorf("read the pods of namespace %s: %w", owner.GetNamespace(), err)
		}
		for _, o := range objs {
			p, ok := o.(*corev1.Pod)
			if !ok {
				continue
			}
			switch {
			case sel.Matches(labels.Set(p.Labels)):
				out.Matching = append(out.Matching, p)
			case owned && p.DeletionTimestamp == nil && metav1.IsControlledBy(p, owner):
				out.Strays = append(out.Strays, p)
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
