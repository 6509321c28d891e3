package main

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

// runStatefulSets measures an Advanced StatefulSet (Parallel, in place) the way runControllers
// measures the CloneSet: scale-up from 0 and in-place rollouts at maxUnavailable 20% and 100%.
func runStatefulSets(ctx context.Context, sb *sandbox.Sandbox, c client.Client, n, mgrPID int, prof *profiler) ([]result, error) {
	ns, err := namespace(ctx, c, "bench-asts")
	if err != nil {
		return nil, err
	}
	labels := map[string]string{"app": "bench"}
	pod := podSpec(image("v1"))
	pod.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
	set := &appsv1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: ns},
		Spec: appsv1beta1.StatefulSetSpec{Replicas: ptr.To(int32(n)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Template:            corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
			UpdateStrategy: appsv1beta1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1beta1.StatefulSetRollingUpdateStrategy{PodUpdatePolicy: appsv1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy,
					MaxUnavailable: ptr.To(intstr.FromString("20%"))}}}}
	mgr := isUser(sandbox.KruiseManagerUser)
	var out []result
	r, err := measure(sb, "asts-scaleup", "kruise-manager", n, mgrPID, mgr, func() error {
		if err := c.Create(ctx, set); err != nil {
			return err
		}
		return waitStatefulSet(ctx, c, set, func(s *appsv1beta1.StatefulSetStatus) bool { return s.ReadyReplicas == int32(n) })
	})
	if err != nil {
		return nil, err
	}
	out = append(out, r)
	for _, step := range []struct{ scenario, maxUnavailable, img string }{
		{"asts-inplace-maxu20", "20%", image("v2")}, {"asts-inplace-maxu100", "100%", image("v3")},
	} {
		if err := patch(ctx, c, set, fmt.Sprintf(`{"spec":{"updateStrategy":{"rollingUpdate":{"maxUnavailable":%q}}}}`, step.maxUnavailable)); err != nil {
			return nil, err
		}
		if err := waitStatefulSet(ctx, c, set, func(*appsv1beta1.StatefulSetStatus) bool { return true }); err != nil {
			return nil, err
		}
		stopProfile := prof.start(step.scenario)
		r, err := measure(sb, step.scenario, "kruise-manager", n, mgrPID, mgr, func() error {
			if err := patch(ctx, c, set, fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, step.img)); err != nil {
				return err
			}
			return waitStatefulSet(ctx, c, set, func(s *appsv1beta1.StatefulSetStatus) bool {
				return s.UpdatedReadyReplicas == int32(n) && s.ReadyReplicas == int32(n) && s.CurrentRevision == s.UpdateRevision
			})
		})
		if perr := stopProfile(); err == nil {
			err = perr
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, deleteNamespace(ctx, c, ns)
}

// waitStatefulSet waits until the set's status observed its generation and satisfies cond.
func waitStatefulSet(ctx context.Context, c client.Client, set *appsv1beta1.StatefulSet, cond func(*appsv1beta1.StatefulSetStatus) bool) error {
	return poll(ctx, "StatefulSet "+set.Name, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(set), set); err != nil {
			return false, err
		}
		return set.Status.ObservedGeneration == set.Generation && cond(&set.Status), nil
	})
}
