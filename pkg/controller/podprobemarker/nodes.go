package podprobemarker

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/proberules"
)

// Nodes keeps one NodePodProbe per node, named after it: created with the node, deleted with it,
// its spec the probes of the pods on it (proberules.NodeSpec). It is the only writer of their specs;
// kruise-daemon writes their statuses.
type Nodes struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// Reconcile brings the NodePodProbe of node req.Name to what its node and pods want.
func (r *Nodes) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	node := &corev1.Node{}
	nodeErr := r.Client.Get(ctx, client.ObjectKey{Name: req.Name}, node)
	if nodeErr != nil && !apierrors.IsNotFound(nodeErr) {
		return ctrl.Result{}, nodeErr
	}
	npp := &v1alpha1.NodePodProbe{}
	nppErr := r.Client.Get(ctx, client.ObjectKey{Name: req.Name}, npp)
	if nppErr != nil && !apierrors.IsNotFound(nppErr) {
		return ctrl.Result{}, nppErr
	}
	if apierrors.IsNotFound(nodeErr) || node.DeletionTimestamp != nil {
		if nppErr != nil || npp.DeletionTimestamp != nil {
			return ctrl.Result{}, nil
		}
		err := r.Client.Delete(ctx, npp, client.Preconditions{UID: &npp.UID})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return ctrl.Result{}, fmt.Errorf("delete the NodePodProbe of gone node %s: %w", req.Name, err)
		}
		return ctrl.Result{}, nil
	}
	spec, problems, err := r.want(ctx, node.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case apierrors.IsNotFound(nppErr):
		npp = &v1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node.Name}, Spec: spec}
		if err := r.Client.Create(ctx, npp); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("create the NodePodProbe of node %s: %w", node.Name, err)
		}
	case npp.DeletionTimestamp != nil:
		return ctrl.Result{RequeueAfter: time.Second}, nil // recreated once gone
	case !equality.Semantic.DeepEqual(npp.Spec, spec):
		npp.Spec = spec
		if err := r.Client.Update(ctx, npp); err != nil {
			return ctrl.Result{}, fmt.Errorf("update the NodePodProbe of node %s: %w", node.Name, err)
		}
	default:
		return ctrl.Result{}, nil
	}
	r.report(ctx, problems)
	return ctrl.Result{}, nil
}

// want is the spec the NodePodProbe of node should have: its pods' probes.
func (r *Nodes) want(ctx context.Context, node string) (v1alpha1.NodePodProbeSpec, []proberules.Problem, error) {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.MatchingFields{nodeIndex: node}); err != nil {
		return v1alpha1.NodePodProbeSpec{}, nil, err
	}
	var on []*corev1.Pod
	var markers []*v1alpha1.PodProbeMarker
	seen := map[string]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		on = append(on, p)
		if seen[p.Namespace] {
			continue
		}
		seen[p.Namespace] = true
		in, err := markersIn(ctx, r.Client, p.Namespace)
		if err != nil {
			return v1alpha1.NodePodProbeSpec{}, nil, err
		}
		markers = append(markers, in...)
	}
	spec, problems := proberules.NodeSpec(on, markers)
	return spec, problems, nil
}

// report records a Warning event on each marker whose probe cannot run on a pod.
func (r *Nodes) report(ctx context.Context, problems []proberules.Problem) {
	if r.Recorder == nil {
		return
	}
	for _, p := range problems {
		m := &v1alpha1.PodProbeMarker{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: p.Marker}, m); err != nil {
			continue
		}
		r.Recorder.Eventf(m, nil, corev1.EventTypeWarning, "ProbeNotRunnable", "Probe",
			"probe %q cannot run on pod %s: %s", p.Probe, p.Pod, p.Reason)
	}
}

// ofPod maps a pod event to its node: a pod came, went, or changed what it is probed with.
func (r *Nodes) ofPod(ctx context.Context, o client.Object) []reconcile.Request {
	pod := o.(*corev1.Pod)
	if pod.Spec.NodeName == "" {
		return nil
	}
	if ms, _ := markersIn(ctx, r.Client, pod.Namespace); len(ms) == 0 && !r.lists(ctx, pod) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: pod.Spec.NodeName}}}
}

// lists reports whether pod is in its node's NodePodProbe (the cache's own, read without a copy:
// every pod event of a namespace without markers asks).
func (r *Nodes) lists(ctx context.Context, pod *corev1.Pod) bool {
	npp := &v1alpha1.NodePodProbe{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, npp, client.UnsafeDisableDeepCopy); err != nil {
		return false
	}
	for _, pp := range npp.Spec.PodProbes {
		if pp.UID == string(pod.UID) {
			return true
		}
	}
	return false
}

// ofMarker maps a marker event to the nodes of the pods it matches and of the NodePodProbes that
// list its probes.
func (r *Nodes) ofMarker(ctx context.Context, o client.Object) []reconcile.Request {
	m := o.(*v1alpha1.PodProbeMarker)
	nodes := map[string]bool{}
	if pods, err := matchedPods(ctx, r.Client, m); err == nil {
		for _, p := range pods {
			if p.Spec.NodeName != "" {
				nodes[p.Spec.NodeName] = true
			}
		}
	}
	list := &v1alpha1.NodePodProbeList{}
	if err := r.Client.List(ctx, list); err == nil {
		for i := range list.Items {
			if proberules.References(list.Items[i].Spec, m.Namespace, m.Name) {
				nodes[list.Items[i].Name] = true
			}
		}
	}
	out := make([]reconcile.Request, 0, len(nodes))
	for n := range nodes {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: n}})
	}
	return out
}
