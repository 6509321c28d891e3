package workloadfinder

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/platform/liveread"
)

// SpreadTarget is a spread's targetRef workload as the finder reads it; nil when it does not exist.
func SpreadTarget(ctx context.Context, finder *Finder, ws *appsv1alpha1.WorkloadSpread) (*Workload, error) {
	ref := ws.Spec.TargetReference
	if ref == nil {
		return nil, nil
	}
	return finder.Find(ctx, ws.Namespace, Ref{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name})
}

// SpreadReplicas is the replica count the spread's percentages refer to: the sum of the integers
// at spec.targetFilter.replicasPathList in the workload object when set, else the workload's
// desired replicas; 0 when the workload does not exist.
func SpreadReplicas(ctx context.Context, reader client.Reader, ws *appsv1alpha1.WorkloadSpread, w *Workload) (int32, error) {
	if w == nil {
		return 0, nil
	}
	if f := ws.Spec.TargetFilter; f == nil || len(f.ReplicasPathList) == 0 {
		return w.Replicas, nil
	}
	obj, err := spreadWorkloadObject(ctx, reader, ws)
	if err != nil {
		return 0, err
	}
	var total int32
	for _, path := range ws.Spec.TargetFilter.ReplicasPathList {
		if path == "" {
			continue
		}
		v, found, err := unstructured.NestedFieldNoCopy(obj, strings.Split(path, ".")...)
		if err != nil || !found {
			continue
		}
		switch n := v.(type) {
		case int64:
			total += int32(n)
		case float64:
			total += int32(n)
		default:
			return 0, fmt.Errorf("spec.targetFilter.replicasPathList: %s is not an integer", path)
		}
	}
	return total, nil
}

// spreadWorkloadObject reads the spread's workload as a plain object (typed through the cache for the
// kinds Kruise watches, as unstructured otherwise).
func spreadWorkloadObject(ctx context.Context, reader client.Reader, ws *appsv1alpha1.WorkloadSpread) (map[string]any, error) {
	ref := ws.Spec.TargetReference
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	var obj client.Object
	switch gk := (schema.GroupKind{Group: gv.Group, Kind: ref.Kind}); gk {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		obj = &appsv1.Deployment{}
	case schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		obj = &appsv1.ReplicaSet{}
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		obj = &appsv1.StatefulSet{}
	case schema.GroupKind{Group: "apps.kruise.io", Kind: "CloneSet"}:
		obj = &appsv1alpha1.CloneSet{}
	case schema.GroupKind{Group: "apps.kruise.io", Kind: "StatefulSet"}:
		obj = &v1beta1.StatefulSet{}
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		obj = &batchv1.Job{}
	default:
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gv.WithKind(ref.Kind))
		obj = u
	}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: ws.Namespace, Name: ref.Name}, obj); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

// SpreadControlledBy tells whether the spread's targetRef is the pod's controller, or the controller of
// the pod's ReplicaSet (a Deployment's pods), compared by group, kind and name. The ReplicaSet is
// read through reader, or through live when reader does not know it yet (a Deployment's new
// revision creates its first pods moments after its ReplicaSet); live may be nil.
func SpreadControlledBy(ctx context.Context, reader, live client.Reader, ws *appsv1alpha1.WorkloadSpread, pod *corev1.Pod) (bool, error) {
	ref := ws.Spec.TargetReference
	owner := metav1.GetControllerOf(pod)
	if ref == nil || owner == nil {
		return false, nil
	}
	if sameSpreadWorkload(ref, owner) {
		return true, nil
	}
	if owner.Kind != "ReplicaSet" || groupOf(owner.APIVersion) != "apps" {
		return false, nil
	}
	rs := &appsv1.ReplicaSet{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: owner.Name}, rs)
	if client.IgnoreNotFound(err) != nil {
		return false, err
	}
	if err != nil {
		if live == nil {
			return false, nil
		}
		found, ok, err := liveread.ByName[*appsv1.ReplicaSet](ctx, live, &appsv1.ReplicaSetList{}, pod.Namespace, owner.Name)
		if err != nil || !ok {
			return false, err
		}
		rs = found
	}
	if rs.UID != owner.UID {
		return false, nil
	}
	up := metav1.GetControllerOf(rs)
	return up != nil && sameSpreadWorkload(ref, up), nil
}

func sameSpreadWorkload(ref *appsv1alpha1.WorkloadSpreadTargetReference, owner *metav1.OwnerReference) bool {
	return groupOf(ref.APIVersion) == groupOf(owner.APIVersion) && ref.Kind == owner.Kind && ref.Name == owner.Name
}

func groupOf(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return apiVersion
	}
	return gv.Group
}
