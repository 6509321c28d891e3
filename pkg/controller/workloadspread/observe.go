package workloadspread

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
)

// revisionAnnotation is the revision number a Deployment and its ReplicaSets carry.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// observe reads the spread's workload, its pods and the nodes of its unplaced pods from the cache.
func (r *Reconciler) observe(ctx context.Context, spread *appsv1alpha1.WorkloadSpread) (*snapshot, error) {
	snap := &snapshot{spread: spread, nodes: map[string]*corev1.Node{}}
	if spread.Spec.TargetReference == nil {
		return snap, nil
	}
	snap.kind = spread.Spec.TargetReference.Kind
	w, err := workloadfinder.SpreadTarget(ctx, r.Finder, spread)
	if err != nil {
		return snap, err
	}
	var pods []*corev1.Pod
	if w != nil {
		if snap.replicas, err = workloadfinder.SpreadReplicas(ctx, r.Client, spread, w); err != nil {
			return nil, fmt.Errorf("read the workload's replicas: %w", err)
		}
		if pods, err = r.Finder.Pods(ctx, spread.Namespace, w); err != nil {
			return nil, fmt.Errorf("list the workload's pods: %w", err)
		}
	}
	left, err := r.leftPods(ctx, spread, w, pods)
	if err != nil {
		return nil, fmt.Errorf("list the spread's pods: %w", err)
	}
	for _, pod := range append(pods, left...) {
		ok, err := spreadrules.Filtered(spread, pod)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		snap.pods = append(snap.pods, pod)
		if placed(spread, pod) != nil || pod.Spec.NodeName == "" || snap.nodes[pod.Spec.NodeName] != nil {
			continue
		}
		node := &corev1.Node{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); err == nil {
			snap.nodes[node.Name] = node
		} else if client.IgnoreNotFound(err) != nil {
			return nil, err
		}
	}
	if w == nil {
		return snap, nil
	}
	snap.latest, err = r.latestVersion(ctx, spread, w)
	return snap, err
}

// leftPods are the live pods the spread placed that are not among its workload's pods (owned)
// but count towards it: those a workload of the targetRef's kind and name controls (a
// Deployment's: a ReplicaSet), which are a workload's deleted, or deleted and created again under a
// new UID, still there; and those with no controller its selector matches, which it adopts (a
// workload deleted with propagation Orphan and created again; while it is gone, w nil, every one:
// nothing is placed then, and a workload made again may adopt them before it is recounted). The
// webhook records the deletion of each placed pod with a controller, raising its subset's
// missingReplicas by one, and places new pods by the count: so they count until they are gone or
// adopted, or a subset would take more new pods than its maxReplicas.
func (r *Reconciler) leftPods(ctx context.Context, spread *appsv1alpha1.WorkloadSpread, w *workloadfinder.Workload, owned []*corev1.Pod) ([]*corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := r.Client.List(ctx, list, client.InNamespace(spread.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	seen := make(map[types.UID]bool, len(owned))
	for _, pod := range owned {
		seen[pod.UID] = true
	}
	var out []*corev1.Pod
	for i := range list.Items {
		pod := &list.Items[i]
		if seen[pod.UID] || !workloadfinder.Active(pod) || placed(spread, pod) == nil {
			continue
		}
		owner := metav1.GetControllerOf(pod)
		orphan := owner == nil && (w == nil || (w.Selector != nil && !w.Selector.Empty() && w.Selector.Matches(labels.Set(pod.Labels))))
		if !orphan && !targetKindAndName(spread, owner) {
			continue
		}
		out = append(out, pod.DeepCopy())
	}
	return out, nil
}

// targetKindAndName tells whether owner, a pod's controller, is of the spread's targetRef group,
// kind and name, whatever its UID; for a Deployment, whether it is a ReplicaSet (the webhook placed
// the pod as the Deployment's, and its ReplicaSet may be gone before it).
func targetKindAndName(spread *appsv1alpha1.WorkloadSpread, owner *metav1.OwnerReference) bool {
	ref := spread.Spec.TargetReference
	if ref == nil || owner == nil {
		return false
	}
	refGV, err1 := schema.ParseGroupVersion(ref.APIVersion)
	ownerGV, err2 := schema.ParseGroupVersion(owner.APIVersion)
	if err1 != nil || err2 != nil || refGV.Group != ownerGV.Group {
		return false
	}
	if refGV.Group == appsv1.GroupName && ref.Kind == "Deployment" {
		return owner.Kind == "ReplicaSet"
	}
	return owner.Kind == ref.Kind && owner.Name == ref.Name
}

// latestVersion is the revision the workload creates pods of now: a Deployment's newest
// ReplicaSet's pod-template-hash, a ReplicaSet's own; VersionIgnored for other kinds; empty when
// a Deployment's newest ReplicaSet is not known yet.
func (r *Reconciler) latestVersion(ctx context.Context, spread *appsv1alpha1.WorkloadSpread, w *workloadfinder.Workload) (string, error) {
	switch w.Kind {
	case "ReplicaSet":
		rs := &appsv1.ReplicaSet{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: spread.Namespace, Name: w.Name}, rs); err != nil {
			return "", client.IgnoreNotFound(err)
		}
		return rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey], nil
	case "Deployment":
		d := &appsv1.Deployment{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: spread.Namespace, Name: w.Name}, d); err != nil {
			return "", client.IgnoreNotFound(err)
		}
		list := &appsv1.ReplicaSetList{}
		if err := r.Client.List(ctx, list, client.InNamespace(spread.Namespace), client.MatchingLabelsSelector{Selector: w.Selector}); err != nil {
			return "", err
		}
		for i := range list.Items {
			rs := &list.Items[i]
			if ref := metav1.GetControllerOf(rs); ref == nil || ref.UID != d.UID || rs.DeletionTimestamp != nil {
				continue
			}
			if rev := d.Annotations[revisionAnnotation]; rev != "" && rs.Annotations[revisionAnnotation] == rev {
				return rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey], nil
			}
		}
		return "", nil
	}
	return spreadrules.VersionIgnored, nil
}
