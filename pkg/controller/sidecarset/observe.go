package sidecarset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
)

// observe returns set's pods from the cache: those that name it in their injected list, are
// alive, carry its sidecars and are still selected by it (OpenKruise's matching pods).
func (r *Reconciler) observe(ctx context.Context, set *v1beta1.SidecarSet) ([]*corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{PodIndex: set.Name}); err != nil {
		return nil, fmt.Errorf("list the pods of SidecarSet %s: %w", set.Name, err)
	}
	return r.matching(ctx, set, list.Items)
}

// livePods is observe from the API server (the pods the selector selects), for expectations the
// cache has not shown in time.
func (r *Reconciler) livePods(ctx context.Context, set *v1beta1.SidecarSet) (map[string]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		return nil, reconcile.TerminalError(fmt.Errorf("spec.selector: %w", err)) // only a spec change mends it
	}
	list := &corev1.PodList{}
	if err := r.APIReader.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	pods, err := r.matching(ctx, set, list.Items)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*corev1.Pod, len(pods))
	for _, p := range pods {
		out[podKey(p)] = p
	}
	return out, nil
}

func (r *Reconciler) matching(ctx context.Context, set *v1beta1.SidecarSet, items []corev1.Pod) ([]*corev1.Pod, error) {
	nsLabels, err := r.namespaceLabels(ctx, set)
	if err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for i := range items {
		pod := &items[i]
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		ok, err := sidecarrules.Matches(pod, set, nsLabels[pod.Namespace])
		if err != nil { // the SidecarSet's selectors cannot be read: only a spec change mends it
			return nil, reconcile.TerminalError(err)
		}
		if ok && sidecarrules.Injected(pod, set) {
			out = append(out, pod)
		}
	}
	return out, nil
}

// namespaceLabels are the labels of every namespace by name, when set has a namespaceSelector
// (nil otherwise: no match reads them).
func (r *Reconciler) namespaceLabels(ctx context.Context, set *v1beta1.SidecarSet) (map[string]map[string]string, error) {
	if set.Spec.NamespaceSelector == nil {
		return nil, nil
	}
	nss := &corev1.NamespaceList{}
	if err := r.Client.List(ctx, nss, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	out := make(map[string]map[string]string, len(nss.Items))
	for i := range nss.Items {
		out[nss.Items[i].Name] = nss.Items[i].Labels
	}
	return out, nil
}
