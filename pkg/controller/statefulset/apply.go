package statefulset

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/rolloutmetrics"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// ApplyErrors are the errors of one apply, by kind: Scale for creates and deletes (condition
// FailedCreate/FailedDelete in OpenKruise's words), Update for updates.
type ApplyErrors = workloadloop.Errors

// apply carries out the plan through podcontrol, the controller's only writer of pods, claims and
// revisions, in the workloads' one order (workloadloop.Apply).
func (r *Reconciler) apply(ctx context.Context, set *v1beta1.StatefulSet, obs *observation, plan Plan) ApplyErrors {
	inFlight := obs.inFlight
	inFlight.Resumes = plan.Resumes
	deletes := make([]workloadloop.Deletion, 0, len(plan.Deletes))
	for _, d := range plan.Deletes {
		deletes = append(deletes, workloadloop.Deletion(d))
	}
	changes := make([]podcontrol.Change, 0, len(plan.Updates))
	for _, u := range plan.Updates {
		changes = append(changes, podcontrol.Change{Pod: obs.pods[u.Pod], Spec: u.Spec, Reason: u.Reason})
	}
	return workloadloop.Apply(ctx, set, workloadloop.Writes{Control: r.Control(), Owner: r.owner(set),
		NewRevision: obs.newRevision, Revisions: obs.revisions, Adopt: obs.adopt, Release: obs.release,
		Pods: obs.pods, InFlight: inFlight, Lifecycle: plan.Lifecycle, Deletes: deletes, Updates: changes,
		Claims: func(done *podcontrol.Batch) error {
			return errors.Join(r.ensurePendingClaims(ctx, set, obs), r.syncClaimOwners(ctx, set, obs, done))
		},
		Expand: func(done *podcontrol.Batch) error {
			return podcontrol.Parallel(plan.Expands, func(pod string) error { return r.expandClaims(ctx, set, obs, pod, done) })
		},
		Create: func(done *podcontrol.Batch) error {
			return podcontrol.SlowStart(plan.Creates, func(c Creation) error { return r.createPod(ctx, set, obs, c, done) })
		},
		Prune: func() { r.pruneRevisions(ctx, set, obs) },
	})
}

// owner is set as the owner of podcontrol's writes.
func (r *Reconciler) owner(set *v1beta1.StatefulSet) podcontrol.Owner {
	o := podcontrol.Owner{Object: set, GVK: gvk, Lifecycle: set.Spec.Lifecycle, Updating: true, Metrics: workload(set.Namespace, set.Name)}
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.InPlaceUpdateStrategy != nil {
		o.GraceSeconds = ru.InPlaceUpdateStrategy.GracePeriodSeconds
	}
	return o
}

func workload(namespace, name string) rolloutmetrics.Workload {
	return rolloutmetrics.Workload{Kind: "StatefulSet", Namespace: namespace, Name: name}
}

// createPod creates the pod of an ordinal from its revision: named <set>-<ordinal>, with its
// identity (hostname, subdomain, the pod-name and pod-index labels) and its claims.
func (r *Reconciler) createPod(ctx context.Context, set *v1beta1.StatefulSet, obs *observation, c Creation, done *podcontrol.Batch) error {
	pod, err := workloadloop.NewPod(obs.revisions, c.Revision)
	if err != nil {
		return err
	}
	pod.Name, pod.GenerateName, pod.Namespace = ordinal.PodName(set.Name, c.Ordinal), set.Name+"-", set.Namespace
	pod.Labels = maps.Clone(pod.Labels)
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1.StatefulSetPodNameLabel] = pod.Name
	if r.PodIndexLabel {
		pod.Labels[appsv1.PodIndexLabel] = strconv.Itoa(c.Ordinal)
	}
	pod.Spec.Hostname, pod.Spec.Subdomain = pod.Name, set.Spec.ServiceName
	if err := r.ensureClaims(ctx, set, obs, c.Ordinal); err != nil {
		r.Control().Event(r.owner(set), corev1.EventTypeWarning, "FailedCreate", "create the PVCs of pod %s: %v", pod.Name, err)
		return err
	}
	for _, t := range set.Spec.VolumeClaimTemplates {
		pod.Spec.Volumes = slices.DeleteFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == t.Name })
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: t.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: ordinal.ClaimName(t.Name, set.Name, c.Ordinal)}}})
	}
	return r.Control().Create(ctx, r.owner(set), pod, c.Revision, c.Reason, done)
}

// ensureClaims creates the missing PVCs of ordinal ord from volumeClaimTemplates: named
// <template>-<set>-<ordinal>, labelled with the selector's labels, owned by the set when
// persistentVolumeClaimRetentionPolicy.whenDeleted is Delete (claimOwners). Existing claims are kept.
func (r *Reconciler) ensureClaims(ctx context.Context, set *v1beta1.StatefulSet, obs *observation, ord int) error {
	for _, t := range set.Spec.VolumeClaimTemplates {
		name := ordinal.ClaimName(t.Name, set.Name, ord)
		if pvc, ok := obs.claims[name]; ok && pvc.DeletionTimestamp == nil {
			continue
		}
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: *t.ObjectMeta.DeepCopy(), Spec: *t.Spec.DeepCopy()}
		pvc.Name, pvc.Namespace, pvc.ResourceVersion, pvc.UID = name, set.Namespace, "", ""
		pvc.Labels = maps.Clone(pvc.Labels)
		if pvc.Labels == nil {
			pvc.Labels = map[string]string{}
		}
		if set.Spec.Selector != nil {
			maps.Copy(pvc.Labels, set.Spec.Selector.MatchLabels)
		}
		if r.AutoDeletePVC {
			pvc.OwnerReferences = claimOwners(nil, set.Spec.PersistentVolumeClaimRetentionPolicy, set, nil, false)
		}
		// obs.claims is not written: pods are created in parallel, each with claims of its own.
		err := r.Client.Create(ctx, pvc)
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("create PVC %s: %w", pvc.Name, err)
		}
		// OpenKruise's (and the StatefulSet controller's) event of a claim made, one per claim.
		r.Control().Event(r.owner(set), corev1.EventTypeNormal, "SuccessfulCreate", "created PVC %s for pod %s",
			pvc.Name, ordinal.PodName(set.Name, ord))
	}
	return nil
}

// ensurePendingClaims recreates the missing PVCs of pods that wait for them (phase Pending): a
// claim deleted under a pod is made again so the pod can start.
func (r *Reconciler) ensurePendingClaims(ctx context.Context, set *v1beta1.StatefulSet, obs *observation) error {
	var errs []error
	for _, pod := range obs.snap.Pods {
		if pod.Phase == corev1.PodPending && !pod.Terminating {
			errs = append(errs, r.ensureClaims(ctx, set, obs, pod.Ordinal))
		}
	}
	return errors.Join(errs...)
}

// pruneRevisions deletes the oldest revisions no pod uses beyond revisionHistoryLimit.
func (r *Reconciler) pruneRevisions(ctx context.Context, set *v1beta1.StatefulSet, obs *observation) {
	inUse := map[string]bool{obs.snap.CurrentRevision: true, obs.snap.UpdateRevision: true}
	for _, p := range obs.snap.Pods {
		inUse[p.Revision] = true
	}
	r.Control().PruneRevisions(ctx, r.owner(set), obs.revisions, inUse, ptr.Deref(obs.snap.Spec.RevisionHistoryLimit, 10))
}
