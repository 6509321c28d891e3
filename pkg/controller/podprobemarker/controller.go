package podprobemarker

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/proberules"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=podprobemarkers,verbs=list;watch;update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=podprobemarkers/status,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=nodepodprobes,verbs=list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;patch
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// nodeIndex indexes pods by spec.nodeName.
const nodeIndex = "podprobemarker.spec.nodeName"

// Setup runs the three reconcilers on the leader, workers each.
func Setup(ctx context.Context, mgr ctrl.Manager, recorder events.EventRecorder, workers int) error {
	c := mgr.GetClient()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, nodeIndex, func(o client.Object) []string {
		if n := o.(*corev1.Pod).Spec.NodeName; n != "" {
			return []string{n}
		}
		return nil
	}); err != nil {
		return err
	}
	opts := controller.Options{MaxConcurrentReconciles: workers}
	nodes := &Nodes{Client: c, Recorder: recorder}
	if err := ctrl.NewControllerManagedBy(mgr).Named("NodePodProbe-controller").WithOptions(opts).
		For(&corev1.Node{}, builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return (e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
		}})).
		Watches(&v1alpha1.NodePodProbe{}, &handler.EnqueueRequestForObject{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(nodes.ofPod)).
		Watches(&v1alpha1.PodProbeMarker{}, handler.EnqueueRequestsFromMapFunc(nodes.ofMarker)).
		Complete(nodes); err != nil {
		return err
	}
	pods := &Pods{Client: c, Recorder: recorder}
	if err := ctrl.NewControllerManagedBy(mgr).Named("podprobemarker-pods").WithOptions(opts).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(pods.ofPod)).
		Watches(&v1alpha1.NodePodProbe{}, handler.Funcs{
			CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				changedStates(nil, e.Object.(*v1alpha1.NodePodProbe), q)
			},
			UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				changedStates(e.ObjectOld.(*v1alpha1.NodePodProbe), e.ObjectNew.(*v1alpha1.NodePodProbe), q)
			}}).
		Watches(&v1alpha1.PodProbeMarker{}, handler.EnqueueRequestsFromMapFunc(pods.ofMarker)).
		Complete(pods); err != nil {
		return err
	}
	markers := &Markers{Client: c}
	return ctrl.NewControllerManagedBy(mgr).Named("PodProbeMarker-controller").WithOptions(opts).
		For(&v1alpha1.PodProbeMarker{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(markers.ofPod)).
		Watches(&v1alpha1.NodePodProbe{}, handler.EnqueueRequestsFromMapFunc(markers.ofNodePodProbe)).
		Complete(markers)
}

// changedStates enqueues the pods whose probe states differ between old and cur.
func changedStates(old, cur *v1alpha1.NodePodProbe, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	before := map[string]string{}
	if old != nil {
		for _, s := range old.Status.PodProbeStatuses {
			before[s.UID] = statesKey(s.ProbeStates)
		}
	}
	for _, s := range cur.Status.PodProbeStatuses {
		if k, ok := before[s.UID]; !ok || k != statesKey(s.ProbeStates) {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}})
		}
	}
}

func statesKey(states []v1alpha1.NodePodProbeContainerProbeState) string {
	k := ""
	for _, s := range states {
		k += s.Name + "=" + string(s.State) + ":" + s.Message + ";"
	}
	return k
}

// markersIn lists the PodProbeMarkers of namespace from the cache, without deep copies (three
// pod event handlers call it for every pod event): callers only read them.
func markersIn(ctx context.Context, c client.Reader, namespace string) ([]*v1alpha1.PodProbeMarker, error) {
	list := &v1alpha1.PodProbeMarkerList{}
	if err := c.List(ctx, list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make([]*v1alpha1.PodProbeMarker, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// selecting are the markers of pod's namespace that select it (whatever its eligibility).
func selecting(ctx context.Context, c client.Reader, pod *corev1.Pod) []*v1alpha1.PodProbeMarker {
	all, err := markersIn(ctx, c, pod.Namespace)
	if err != nil {
		return nil
	}
	var out []*v1alpha1.PodProbeMarker
	for _, m := range all {
		if proberules.Selects(m, pod) {
			out = append(out, m)
		}
	}
	return out
}

// matchedPods lists the pods of marker's namespace its selector matches (being deleted or not),
// from the cache.
func matchedPods(ctx context.Context, c client.Reader, m *v1alpha1.PodProbeMarker) ([]*corev1.Pod, error) {
	sel, ok := proberules.Selector(m)
	if !ok {
		return nil, nil
	}
	list := &corev1.PodList{}
	if err := c.List(ctx, list, client.InNamespace(m.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}
