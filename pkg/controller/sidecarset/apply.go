package sidecarset

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/inplace/engine"
	"github.com/kruise-ng/kruise/pkg/podcontrol"
	"github.com/kruise-ng/kruise/pkg/sidecarset"
)

// Events of the controller, on the SidecarSet.
const (
	ReasonNotUpgradable = "NotUpgradablePods"
	ReasonUpgraded      = "UpgradedPods"
	ReasonFailedUpgrade = "FailedUpgradePod"
)

// apply carries out plan: the SidecarSetUpgradable=False condition on the pods left behind, then
// the in-place upgrades, each followed by SidecarSetUpgradable=True.
func (r *Reconciler) apply(ctx context.Context, pc *podcontrol.Control, owner podcontrol.Owner, set *v1beta1.SidecarSet, plan Plan) error {
	now := metav1.NewTime(r.Clock.Now())
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
	var upgraded []string
	err := podcontrol.Parallel(plan.Upgrade, func(pod *corev1.Pod) error {
		if err := r.upgrade(ctx, pc, set, pod, now); err != nil {
			pc.Event(owner, corev1.EventTypeWarning, ReasonFailedUpgrade, "upgrade the sidecars of pod %s/%s: %v", pod.Namespace, pod.Name, err)
			return err
		}
		return nil
	})
	for _, pod := range plan.Upgrade {
		if _, ok := r.expectations.Expected(set.Name, podKey(pod)); ok {
			upgraded = append(upgraded, podKey(pod))
		}
	}
	if len(upgraded) > 0 {
		slices.Sort(upgraded)
		pc.Event(owner, corev1.EventTypeNormal, ReasonUpgraded, "upgrading the sidecars of %d pod(s) in place: %s",
			len(upgraded), podcontrol.ListNames(upgraded, 5))
	}
	return err
}

// upgrade moves pod's sidecars to set in place (sidecarset.PlanUpgrade, one patch through the
// engine) and marks it upgradable.
func (r *Reconciler) upgrade(ctx context.Context, pc *podcontrol.Control, set *v1beta1.SidecarSet, pod *corev1.Pod, now metav1.Time) error {
	up, err := sidecarset.PlanUpgrade(pod, set, now)
	if err != nil {
		return err
	}
	pc.Expectations.ExpectAnnotation(set.Name, podKey(pod), sidecarset.HashAnnotation, up.Annotations[sidecarset.HashAnnotation], now.Time)
	if err := pc.Engine.UpdateContainers(ctx, pod, up.Images, up.Annotations); err != nil {
		pc.Expectations.Drop(set.Name, podKey(pod))
		return err
	}
	return r.setUpgradable(ctx, pod, set.Name, true, now)
}

// setUpgradable writes set's entry of pod's SidecarSetUpgradable condition when it changes, with a
// strategic-merge patch of pods/status (merged by condition type, as the kubelet writes).
func (r *Reconciler) setUpgradable(ctx context.Context, pod *corev1.Pod, set string, upgradable bool, now metav1.Time) error {
	cond, changed := sidecarset.UpgradableConditionFor(pod, set, upgradable, now)
	if !changed {
		return nil
	}
	body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{cond}}})
	if err != nil {
		return err
	}
	if err := r.Client.Status().Patch(ctx, engine.Ref(pod), client.RawPatch(types.StrategicMergePatchType, body)); err != nil {
		return fmt.Errorf("set condition %s of pod %s/%s: %w", sidecarset.UpgradableCondition, pod.Namespace, pod.Name, err)
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
