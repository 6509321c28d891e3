package workloadfinder

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// The finder needs list and watch on Deployments, ReplicaSets and StatefulSets (apps) and get on
// */scale; its users declare them (kubebuilder markers in pkg/controller/podunavailablebudget).

// Ref names a workload in a namespace: apiVersion (the group counts, not the version), kind, name.
type Ref struct {
	APIVersion, Kind, Name string
}

// Workload is what the finder knows of one workload.
type Workload struct {
	Ref
	UID types.UID
	// Selector selects its pods; LabelSelector is the same as an API selector.
	Selector      labels.Selector
	LabelSelector *metav1.LabelSelector
	// Replicas is its desired number of pods.
	Replicas int32
}

// Finder reads workloads through Reader (normally the manager's cache) and, for kinds it does not
// know, their scale subresource through Scales.
type Finder struct {
	Reader client.Reader
	Scales client.SubResourceClientConstructor
}

// Known kinds, by group and kind; the StatefulSet kinds are also the ones a PersistentPodState
// always serves.
var (
	deployment            = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	replicaSet            = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	StatefulSetKind       = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	cloneSet              = schema.GroupKind{Group: "apps.kruise.io", Kind: "CloneSet"}
	KruiseStatefulSetKind = schema.GroupKind{Group: "apps.kruise.io", Kind: "StatefulSet"}
	job                   = schema.GroupKind{Group: "batch", Kind: "Job"}
)

// Find returns the workload ref names in namespace, or nil when it does not exist.
func (f *Finder) Find(ctx context.Context, namespace string, ref Ref) (*Workload, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("targetRef.apiVersion %q: %w", ref.APIVersion, err)
	}
	key := client.ObjectKey{Namespace: namespace, Name: ref.Name}
	w := &Workload{Ref: ref}
	var sel *metav1.LabelSelector
	var obj client.Object
	switch gk := gv.WithKind(ref.Kind).GroupKind(); gk {
	case deployment:
		o := &appsv1.Deployment{}
		obj = o
		if err := f.Reader.Get(ctx, key, o); err != nil {
			return notFound(err)
		}
		sel, w.Replicas = o.Spec.Selector, ptr.Deref(o.Spec.Replicas, 1)
	case replicaSet:
		o := &appsv1.ReplicaSet{}
		obj = o
		if err := f.Reader.Get(ctx, key, o); err != nil {
			return notFound(err)
		}
		sel, w.Replicas = o.Spec.Selector, ptr.Deref(o.Spec.Replicas, 1)
	case StatefulSetKind:
		o := &appsv1.StatefulSet{}
		obj = o
		if err := f.Reader.Get(ctx, key, o); err != nil {
			return notFound(err)
		}
		sel, w.Replicas = o.Spec.Selector, ptr.Deref(o.Spec.Replicas, 1)
	case cloneSet:
		o := &v1alpha1.CloneSet{}
		obj = o
		if err := f.Reader.Get(ctx, key, o); err != nil {
			return notFound(err)
		}
		sel, w.Replicas = o.Spec.Selector, ptr.Deref(o.Spec.Replicas, 1)
	case KruiseStatefulSetKind:
		o := &v1beta1.StatefulSet{}
		obj = o
		if err := f.Reader.Get(ctx, key, o); err != nil {
			return notFound(err)
		}
		sel, w.Replicas = o.Spec.Selector, ptr.Deref(o.Spec.Replicas, 1)
	case job:
		// A Job wants as many pods at a time as its parallelism (OpenKruise reads it so).
		o := &batchv1.Job{}
		obj = o
		if err := f.Reader.Get(ctx, key, o); err != nil {
			return notFound(err)
		}
		sel, w.Replicas = o.Spec.Selector, ptr.Deref(o.Spec.Parallelism, 1)
	default:
		return f.findScale(ctx, namespace, gv.WithKind(ref.Kind), w)
	}
	w.UID, w.LabelSelector = obj.GetUID(), sel
	if w.Selector, err = metav1.LabelSelectorAsSelector(sel); err != nil {
		return nil, fmt.Errorf("%s %s/%s: selector: %w", ref.Kind, namespace, ref.Name, err)
	}
	return w, nil
}

// findScale reads a workload of a kind the finder does not know through its scale subresource.
func (f *Finder) findScale(ctx context.Context, namespace string, gvk schema.GroupVersionKind, w *Workload) (*Workload, error) {
	if f.Scales == nil {
		return nil, fmt.Errorf("%s %s/%s: no scale client", gvk.Kind, namespace, w.Name)
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace(namespace)
	obj.SetName(w.Name)
	raw := &unstructured.Unstructured{}
	raw.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	if err := f.Scales.SubResource("scale").Get(ctx, obj, raw); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s %s/%s: read its scale subresource (the kind must have one): %w", gvk.Kind, namespace, w.Name, err)
	}
	scale := &autoscalingv1.Scale{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw.Object, scale); err != nil {
		return nil, fmt.Errorf("%s %s/%s: decode its scale: %w", gvk.Kind, namespace, w.Name, err)
	}
	sel, err := labels.Parse(scale.Status.Selector)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: scale selector %q: %w", gvk.Kind, namespace, w.Name, scale.Status.Selector, err)
	}
	if w.LabelSelector, err = metav1.ParseToLabelSelector(scale.Status.Selector); err != nil {
		return nil, fmt.Errorf("%s %s/%s: scale selector %q: %w", gvk.Kind, namespace, w.Name, scale.Status.Selector, err)
	}
	w.UID, w.Selector, w.Replicas = scale.UID, sel, scale.Spec.Replicas
	return w, nil
}

func notFound(err error) (*Workload, error) {
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return nil, err
}

// Pods returns the alive pods of w in namespace: those its selector selects whose controller is w,
// or, for a Deployment, one of its ReplicaSets.
func (f *Finder) Pods(ctx context.Context, namespace string, w *Workload) ([]*corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := f.Reader.List(ctx, list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: w.Selector}); err != nil {
		return nil, err
	}
	owners := map[types.UID]bool{w.UID: true}
	gv, _ := schema.ParseGroupVersion(w.APIVersion)
	if gv.WithKind(w.Kind).GroupKind() == deployment {
		rss := &appsv1.ReplicaSetList{}
		if err := f.Reader.List(ctx, rss, client.InNamespace(namespace)); err != nil {
			return nil, err
		}
		for i := range rss.Items {
			if ref := metav1.GetControllerOf(&rss.Items[i]); ref != nil && ref.UID == w.UID {
				owners[rss.Items[i].UID] = true
			}
		}
	}
	var out []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		ref := metav1.GetControllerOf(p)
		if Active(p) && ref != nil && owners[ref.UID] {
			out = append(out, p)
		}
	}
	return out, nil
}

// Active reports whether a pod counts: not terminating, not finished (Kubernetes' IsPodActive).
func Active(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// ReplicasOf returns the replicas the workloads of pods want together, as OpenKruise counts them:
// each distinct controller (a ReplicaSet counted as its Deployment when it has one) once, at its
// desired replicas. Pods without a controller, or whose controller does not exist, count nothing:
// a budget over such pods counts on pub.kruise.io/protect-total-replicas.
func (f *Finder) ReplicasOf(ctx context.Context, pods []*corev1.Pod) (int32, error) {
	seen := map[types.UID]bool{}
	var total int32
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil || seen[ref.UID] {
			continue
		}
		seen[ref.UID] = true
		w, err := f.Find(ctx, p.Namespace, Ref{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name})
		if err != nil {
			return 0, err
		}
		if w == nil {
			continue
		}
		if gv, _ := schema.ParseGroupVersion(ref.APIVersion); gv.WithKind(ref.Kind).GroupKind() == replicaSet {
			if d, err := f.deploymentOf(ctx, p.Namespace, ref.Name); err != nil {
				return 0, err
			} else if d != nil {
				if !seen[d.UID] {
					seen[d.UID] = true
					total += ptr.Deref(d.Spec.Replicas, 1)
				}
				continue
			}
		}
		total += w.Replicas
	}
	return total, nil
}

// deploymentOf returns the Deployment that controls ReplicaSet name, or nil.
func (f *Finder) deploymentOf(ctx context.Context, namespace, name string) (*appsv1.Deployment, error) {
	rs := &appsv1.ReplicaSet{}
	if err := f.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, rs); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	ref := metav1.GetControllerOf(rs)
	if ref == nil || ref.Kind != deployment.Kind {
		return nil, nil
	}
	d := &appsv1.Deployment{}
	if err := f.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, d); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return d, nil
}

// ReplicaWorkloads are empty objects of the known kinds whose replicas a budget or a spread counts
// on (CloneSet, both StatefulSets, Deployment, ReplicaSet): the kinds their controllers watch.
func ReplicaWorkloads() []client.Object {
	return []client.Object{&v1alpha1.CloneSet{}, &v1beta1.StatefulSet{}, &appsv1.Deployment{}, &appsv1.ReplicaSet{}, &appsv1.StatefulSet{}}
}
