package podprobemarker

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/proberules"
)

// Markers keeps each PodProbeMarker's finalizer (OpenKruise's proberules.Finalizer: a marker goes
// only once no NodePodProbe lists its probes) and its status (matched pods, observed generation).
type Markers struct {
	Client client.Client
}

// Reconcile adds the finalizer, writes the status, or, for a marker being deleted, removes the
// finalizer once the NodePodProbes are clear of it.
func (r *Markers) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &v1alpha1.PodProbeMarker{}
	if err := r.Client.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	has := slices.Contains(m.Finalizers, proberules.Finalizer)
	if m.DeletionTimestamp != nil {
		if !has {
			return ctrl.Result{}, nil
		}
		list := &v1alpha1.NodePodProbeList{}
		if err := r.Client.List(ctx, list); err != nil {
			return ctrl.Result{}, err
		}
		for i := range list.Items {
			if proberules.References(list.Items[i].Spec, m.Namespace, m.Name) {
				return ctrl.Result{RequeueAfter: time.Second}, nil // the node reconciler removes them
			}
		}
		m.Finalizers = slices.DeleteFunc(m.Finalizers, func(f string) bool { return f == proberules.Finalizer })
		if err := r.Client.Update(ctx, m); err != nil {
			return ctrl.Result{}, fmt.Errorf("remove the finalizer of PodProbeMarker %s/%s: %w", m.Namespace, m.Name, err)
		}
		return ctrl.Result{}, nil
	}
	if !has {
		m.Finalizers = append(m.Finalizers, proberules.Finalizer)
		if err := r.Client.Update(ctx, m); err != nil {
			return ctrl.Result{}, fmt.Errorf("add the finalizer of PodProbeMarker %s/%s: %w", m.Namespace, m.Name, err)
		}
	}
	pods, err := matchedPods(ctx, r.Client, m)
	if err != nil {
		return ctrl.Result{}, err
	}
	st := proberules.MarkerStatus(m, pods)
	if equality.Semantic.DeepEqual(m.Status, st) {
		return ctrl.Result{}, nil
	}
	m.Status = st
	if err := r.Client.Status().Update(ctx, m); err != nil {
		return ctrl.Result{}, fmt.Errorf("update the status of PodProbeMarker %s/%s: %w", m.Namespace, m.Name, err)
	}
	return ctrl.Result{}, nil
}

// ofPod maps a pod event to the markers of its namespace that match it.
func (r *Markers) ofPod(ctx context.Context, o client.Object) []reconcile.Request {
	pod := o.(*corev1.Pod)
	all, err := markersIn(ctx, r.Client, pod.Namespace)
	if err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, m := range all {
		if proberules.Matches(m, pod) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: m.Name}})
		}
	}
	return out
}

// ofNodePodProbe maps a NodePodProbe event to the markers being deleted whose probes it lists.
func (r *Markers) ofNodePodProbe(ctx context.Context, o client.Object) []reconcile.Request {
	npp := o.(*v1alpha1.NodePodProbe)
	seen := map[types.NamespacedName]bool{}
	var out []reconcile.Request
	for _, pp := range npp.Spec.PodProbes {
		for _, p := range pp.Probes {
			name, _, ok := proberules.SplitProbeName(p.Name)
			key := types.NamespacedName{Namespace: pp.Namespace, Name: name}
			if ok && !seen[key] {
				seen[key] = true
				out = append(out, reconcile.Request{NamespacedName: key})
			}
		}
	}
	return out
}
