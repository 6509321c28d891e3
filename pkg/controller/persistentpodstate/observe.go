package persistentpodstate

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
)

// observe reads pps's workload, its alive pods and their nodes from the cache (a custom workload
// through its scale subresource). It writes nothing.
func (r *Reconciler) observe(ctx context.Context, pps *v1alpha1.PersistentPodState, custom bool) (Snapshot, error) {
	snap := Snapshot{State: pps}
	ref := pps.Spec.TargetReference
	w, err := r.Finder.Find(ctx, pps.Namespace, workloadfinder.Ref{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name})
	if err != nil || w == nil {
		return snap, err
	}
	var target *Target
	if custom {
		target = customTarget(ref.Name, w.Replicas)
	} else if target, err = r.target(ctx, pps.Namespace, ref, w.Replicas); err != nil || target == nil {
		return snap, err
	}
	snap.Target = target
	pods, err := r.Finder.Pods(ctx, pps.Namespace, w)
	if err != nil {
		return snap, fmt.Errorf("list the pods of %s %s: %w", ref.Kind, ref.Name, err)
	}
	snap.Pods = make(map[string]*corev1.Pod, len(pods))
	snap.NodeLabels = map[string]map[string]string{}
	for _, p := range pods {
		snap.Pods[p.Name] = p
		name := p.Spec.NodeName
		if name == "" || !podReady(p) {
			continue
		}
		if _, done := snap.NodeLabels[name]; done {
			continue
		}
		node := &corev1.Node{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			if apierrors.IsNotFound(err) {
				continue // PlanStates waits for it
			}
			return snap, fmt.Errorf("read node %s: %w", name, err)
		}
		snap.NodeLabels[name] = node.Labels
	}
	return snap, nil
}

// customTarget is a custom workload of replicas: as OpenKruise counts them, its pods are named
// <anything>-<ordinal> and its replicas are the ordinals 0 to replicas-1. The scale subresource
// does not tell whether it is being deleted: its states go once it is gone.
func customTarget(name string, replicas int32) *Target {
	return &Target{Name: name, SuffixOrdinals: true, Replicas: ordinal.NewReplicas(0, replicas, ordinal.Reserved{})}
}

// target reads what the finder does not give of a StatefulSet: its ordinals and whether it is
// being deleted; nil when it is gone.
func (r *Reconciler) target(ctx context.Context, namespace string, ref v1alpha1.PersistentPodStateTargetReference, replicas int32) (*Target, error) {
	key := client.ObjectKey{Namespace: namespace, Name: ref.Name}
	var start int32
	var reserve []intstr.IntOrString
	var obj client.Object
	switch gk, _ := workloadfinder.PodStateTarget(ref); gk {
	case workloadfinder.StatefulSetKind:
		s := &appsv1.StatefulSet{}
		obj = s
		if err := r.Client.Get(ctx, key, s); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		if s.Spec.Ordinals != nil {
			start = s.Spec.Ordinals.Start
		}
	default:
		s := &v1beta1.StatefulSet{}
		obj = s
		if err := r.Client.Get(ctx, key, s); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		if s.Spec.Ordinals != nil {
			start = s.Spec.Ordinals.Start
		}
		reserve = s.Spec.ReserveOrdinals
	}
	reserved, err := ordinal.ParseReserved(reserve)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", ref.Kind, ref.Name, err)
	}
	return &Target{Name: ref.Name, Deleting: obj.GetDeletionTimestamp() != nil, Replicas: ordinal.NewReplicas(start, replicas, reserved)}, nil
}
