package workloadspread

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	if err != nil || w == nil {
		return snap, err
	}
	if snap.replicas, err = workloadfinder.SpreadReplicas(ctx, r.Client, spread, w); err != nil {
		return nil, fmt.Errorf("read the workload's replicas: %w", err)
	}
	pods, err := r.Finder.Pods(ctx, spread.Namespace, w)
	if err != nil {
		return nil, fmt.Errorf("list the workload's pods: %w", err)
	}
	for _, pod := range pods {
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
	snap.latest, err = r.latestVersion(ctx, spread, w)
	return snap, err
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
