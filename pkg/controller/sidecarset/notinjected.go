package sidecarset

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
)

// ReasonNotInjected is the event on a pod that a SidecarSet selects but that runs without its
// sidecars.
const ReasonNotInjected = "SidecarSetNotInjected"

// notInjectedEvery bounds how often a SidecarSet's selected pods are scanned for those without
// its sidecars: a scan reads every pod its selector matches.
const notInjectedEvery = 10 * time.Second

// notInjected keeps, per SidecarSet, the last scan for pods it selects that run without its
// sidecars, and the pods already told so by an event.
type notInjected struct {
	mu    sync.Mutex
	scans map[string]*scan
}

type scan struct {
	at         time.Time
	generation int64
	count      int32
	reported   map[types.UID]bool
}

// forget drops what was kept of a deleted SidecarSet.
func (n *notInjected) forget(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.scans, name)
}

// countNotInjected returns how many pods set selects run without its sidecars, scanning at most
// every notInjectedEvery (and on a new generation); wait, when not 0, is when the scan skipped
// now is due; report are the pods to tell so (newReports).
func (r *Reconciler) countNotInjected(ctx context.Context, set *v1beta1.SidecarSet, now time.Time) (count int32, report []*corev1.Pod, wait time.Duration, err error) {
	n := &r.notInjected
	n.mu.Lock()
	if n.scans == nil {
		n.scans = map[string]*scan{}
	}
	s := n.scans[set.Name]
	if s != nil && s.generation == set.Generation && now.Sub(s.at) < notInjectedEvery {
		count, wait = s.count, notInjectedEvery-now.Sub(s.at)
		n.mu.Unlock()
		return count, nil, wait, nil
	}
	n.mu.Unlock()
	pods, err := r.selectedWithout(ctx, set)
	if err != nil {
		return 0, nil, 0, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if s = n.scans[set.Name]; s == nil {
		s = &scan{reported: map[types.UID]bool{}}
		n.scans[set.Name] = s
	}
	s.at, s.generation, s.count = now, set.Generation, int32(len(pods))
	return s.count, newReports(s.reported, set, pods), 0, nil
}

// newReports are the pods of pods (those set selects that run without its sidecars) to tell so
// now: each once, created after the SidecarSet, while its injection is not paused (those created
// while it was are told once it resumes). reported, the pods told before, is brought up to date.
func newReports(reported map[types.UID]bool, set *v1beta1.SidecarSet, pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	still := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		still[p.UID] = true
		switch {
		case reported[p.UID] || set.Spec.InjectionStrategy.Paused:
		case p.CreationTimestamp.Before(&set.CreationTimestamp):
			reported[p.UID] = true // older than the SidecarSet: counted, never injected, no surprise
		default:
			reported[p.UID] = true
			out = append(out, p)
		}
	}
	for uid := range reported {
		if !still[uid] {
			delete(reported, uid)
		}
	}
	return out
}

// reportNotInjected puts a Warning event on each pod of pods, which set selects but which runs
// without its sidecars.
func (r *Reconciler) reportNotInjected(set *v1beta1.SidecarSet, pods []*corev1.Pod) {
	if r.Recorder == nil {
		return
	}
	for _, p := range pods {
		r.Recorder.Eventf(p, set, corev1.EventTypeWarning, ReasonNotInjected, ReasonNotInjected,
			"SidecarSet %s selects this pod, but it runs without its sidecars (it was not sent to Kruise at its creation); recreate it to inject them", set.Name)
	}
}

// selectedWithout lists, from the cache, the alive pods set selects (as its injection entry
// does: minus the excluded namespaces) that do not carry its sidecars.
func (r *Reconciler) selectedWithout(ctx context.Context, set *v1beta1.SidecarSet) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil || sel.Empty() {
		return nil, nil // selects no pod (refused at admission; reported by the registrar)
	}
	list := &corev1.PodList{}
	if err := r.Client.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list the pods SidecarSet %s selects: %w", set.Name, err)
	}
	nsLabels, err := r.namespaceLabels(ctx, set)
	if err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for i := range list.Items {
		pod := &list.Items[i]
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed ||
			slices.Contains(r.ExcludedNamespaces, pod.Namespace) || sidecarrules.Injected(pod, set) {
			continue
		}
		if ok, err := sidecarrules.Matches(pod, set, nsLabels[pod.Namespace]); err == nil && ok {
			out = append(out, pod)
		}
	}
	return out, nil
}

// enqueueNotInjected maps a pod created, relabelled or deleted without the sidecars of a
// SidecarSet that selects it to that SidecarSet, so that its count and the pod's event follow.
func (r *Reconciler) enqueueNotInjected() handler.TypedEventHandler[client.Object, reconcile.Request] {
	mapPod := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		pod, ok := o.(*corev1.Pod)
		if !ok || slices.Contains(r.ExcludedNamespaces, pod.Namespace) {
			return
		}
		sets := &v1beta1.SidecarSetList{}
		if err := r.Client.List(ctx, sets, client.UnsafeDisableDeepCopy); err != nil {
			return
		}
		ns := &corev1.Namespace{}
		_ = r.Client.Get(ctx, client.ObjectKey{Name: pod.Namespace}, ns)
		for i := range sets.Items {
			s := &sets.Items[i]
			if ok, err := sidecarrules.Matches(pod, s, ns.Labels); err == nil && ok && !sidecarrules.Injected(pod, s) {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: s.Name}})
			}
		}
	}
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			mapPod(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if !maps.Equal(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()) {
				mapPod(ctx, e.ObjectOld, q)
				mapPod(ctx, e.ObjectNew, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			mapPod(ctx, e.Object, q)
		},
	}
}
