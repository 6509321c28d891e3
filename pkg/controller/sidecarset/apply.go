package sidecarset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// Events of the controller, on the SidecarSet.
const (
	ReasonNotUpgradable = "NotUpgradablePods"
	ReasonUpgraded      = "UpgradedPods"
	ReasonFailedUpgrade = "FailedUpgradePod"
	// ReasonFlipped and ReasonFailedFlip go on the pod whose old hot-upgrade copies are set to
	// their empty image (OpenKruise's reasons).
	ReasonFlipped    = "ResetContainerSucceed"
	ReasonFailedFlip = "ResetContainerFailed"
)

// apply carries out plan: first the flips of finished hot upgrades (any error ends the reconcile,
// as in OpenKruise), then the SidecarSetUpgradable=False condition on the pods left behind, then
// the in-place upgrades, each followed by SidecarSetUpgradable=True.
func (r *Reconciler) apply(ctx context.Context, pc *podcontrol.Control, owner podcontrol.Owner, set *v1beta1.SidecarSet, plan Plan) error {
	now := metav1.NewTime(r.Clock.Now())
	flips, err := r.flipAll(ctx, pc, set, plan.Flip, now)
	if err != nil {
		return err
	}
	for _, pod := range plan.NotUpgradable {
		if err := r.setUpgradable(ctx, pod, set.Name, false, now); err != nil {
			return err
		}
	}
	if n := len(plan.NotUpgradable); n > 0 {
		pc.Event(owner, corev1.EventTypeNormal, ReasonNotUpgradable,
			"%d pod(s) cannot be upgraded in place: their sidecars differ from the SidecarSet in more than images (%s); they keep their sidecars until they are recreated",
			n, podcontrol.ListNames(names(plan.NotUpgradable), 5))
	}
	if len(plan.Upgrade) == 0 {
		return nil
	}
	var (
		mu                sync.Mutex
		upgraded, waiting []string
	)
	err = podcontrol.Parallel(plan.Upgrade, func(pod *corev1.Pod) error {
		key := podKey(pod)
		f := flips[key]
		if f != nil {
			pod = f.pod // upgraded as the flip left it, as OpenKruise rereads the pod
		}
		written, err := r.upgrade(ctx, pc, set, pod, now)
		if written {
			mu.Lock()
			upgraded = append(upgraded, key)
			mu.Unlock()
		} else if f != nil {
			// The upgrade was not written, the flip was: the cache must still show that.
			pc.Expectations.ExpectAnnotation(set.Name, key, sidecarrules.InplaceUpdateStateAnnotation, f.state, now.Time)
		}
		var budget *engine.BudgetError
		switch {
		case errors.As(err, &budget):
			mu.Lock()
			waiting = append(waiting, key)
			mu.Unlock()
			return nil
		case err != nil:
			pc.Event(owner, corev1.EventTypeWarning, ReasonFailedUpgrade, "upgrade the sidecars of pod %s/%s: %v", pod.Namespace, pod.Name, err)
		}
		return err
	})
	if len(waiting) > 0 {
		slices.Sort(waiting)
		pc.Event(owner, corev1.EventTypeNormal, podcontrol.ReasonWaitingForBudget,
			"%d pod(s) wait for their PodUnavailableBudget before their sidecars are upgraded: %s", len(waiting), podcontrol.ListNames(waiting, 5))
		if err == nil {
			err = errWaitingForBudget
		}
	}
	if len(upgraded) > 0 {
		slices.Sort(upgraded)
		pc.Event(owner, corev1.EventTypeNormal, ReasonUpgraded, "upgrading the sidecars of %d pod(s) in place: %s",
			len(upgraded), podcontrol.ListNames(upgraded, 5))
	}
	return err
}

// errWaitingForBudget ends a reconcile whose upgrades a PodUnavailableBudget held back: it is
// tried again after podcontrol.BudgetRetry.
var errWaitingForBudget = errors.New("waiting for a PodUnavailableBudget")

// flipped is a pod whose old hot-upgrade copies were set to the empty image.
type flipped struct {
	pod   *corev1.Pod // as the flip left it
	state string      // its in-place update state annotation, which the expectation waits for
}

// flipAll flips the old hot-upgrade copies of pods (sidecarrules.PlanFlip, one patch each through the
// engine, the hash entry untouched), with an event on each pod, and returns the flipped pods by key.
func (r *Reconciler) flipAll(ctx context.Context, pc *podcontrol.Control, set *v1beta1.SidecarSet, pods []*corev1.Pod, now metav1.Time) (map[string]*flipped, error) {
	var mu sync.Mutex
	out := map[string]*flipped{}
	err := podcontrol.Parallel(pods, func(pod *corev1.Pod) error {
		f, err := sidecarrules.PlanFlip(pod, set, now)
		if err != nil || f == nil {
			return err
		}
		key := podKey(pod)
		state := f.Annotations[sidecarrules.InplaceUpdateStateAnnotation]
		pc.Expectations.ExpectAnnotation(set.Name, key, sidecarrules.InplaceUpdateStateAnnotation, state, now.Time)
		// The flip restarts only the old copy, which no longer works: it takes nothing out of
		// service, and a budget is not asked (pods waiting for their flip must not wait for it).
		if err := pc.Engine.UpdateContainers(ctx, pod, f.Images, f.Annotations, false); err != nil {
			pc.Expectations.Drop(set.Name, key)
			r.podEvent(pod, set, corev1.EventTypeWarning, ReasonFailedFlip, "set the old copies of hot-upgrade sidecars of SidecarSet %s to their empty image: %v", set.Name, err)
			return err
		}
		r.podEvent(pod, set, corev1.EventTypeNormal, ReasonFlipped, "set %s of SidecarSet %s to the empty image: the hot upgrade is done",
			strings.Join(slices.Sorted(maps.Keys(f.Images)), ", "), set.Name)
		mu.Lock()
		out[key] = &flipped{pod: sidecarrules.Patched(pod, f), state: state}
		mu.Unlock()
		return nil
	})
	return out, err
}

// podEvent records an event on pod, related to set.
func (r *Reconciler) podEvent(pod *corev1.Pod, set *v1beta1.SidecarSet, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(pod, set, typ, reason, reason, format, args...)
	}
}

// upgrade moves pod's sidecars to set in place (sidecarrules.PlanFullUpgrade: the cold sidecars and
// the first step of the hot ones, one patch through the engine) and marks it upgradable. written
// reports whether the patch was written (the condition may still have failed).
func (r *Reconciler) upgrade(ctx context.Context, pc *podcontrol.Control, set *v1beta1.SidecarSet, pod *corev1.Pod, now metav1.Time) (written bool, err error) {
	up, err := sidecarrules.PlanFullUpgrade(pod, set, now)
	if err != nil {
		return false, err
	}
	pc.Expectations.ExpectAnnotation(set.Name, podKey(pod), sidecarrules.HashAnnotation, up.Annotations[sidecarrules.HashAnnotation], now.Time)
	if err := pc.Engine.UpdateContainers(ctx, pod, up.Images, up.Annotations, true); err != nil {
		pc.Expectations.Drop(set.Name, podKey(pod))
		return false, err
	}
	return true, r.setUpgradable(ctx, pod, set.Name, true, now)
}

// setUpgradable writes set's entry of pod's SidecarSetUpgradable condition when it changes, with a
// strategic-merge patch of pods/status (merged by condition type, as the kubelet writes).
func (r *Reconciler) setUpgradable(ctx context.Context, pod *corev1.Pod, set string, upgradable bool, now metav1.Time) error {
	cond, changed := sidecarrules.UpgradableConditionFor(pod, set, upgradable, now)
	if !changed {
		return nil
	}
	body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{cond}}})
	if err != nil {
		return err
	}
	if err := r.Client.Status().Patch(ctx, engine.Ref(pod), client.RawPatch(types.StrategicMergePatchType, body)); err != nil {
		return fmt.Errorf("set condition %s of pod %s/%s: %w", sidecarrules.UpgradableCondition, pod.Namespace, pod.Name, err)
	}
	return nil
}

func names(pods []*corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, podKey(p))
	}
	return out
}
