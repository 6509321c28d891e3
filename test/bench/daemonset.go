package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

// daemonNodeLabel marks the nodes the DaemonSet bench adds: one per pod, tainted so that no other
// scenario's pods land there, deleted afterwards.
const daemonNodeLabel = "bench.kruise.io/daemon"

// maxDaemonNodes bounds the DaemonSet bench's nodes (and so its pods) whatever N.
const maxDaemonNodes = 2000

// runDaemonSets measures an Advanced DaemonSet over n nodes of its own: scale-up (a pod on every
// node) and an in-place rollout at maxUnavailable 20%, as runStatefulSets measures its set.
func runDaemonSets(ctx context.Context, sb *sandbox.Sandbox, c client.Client, n, mgrPID int, prof *profiler) ([]result, error) {
	if err := daemonNodes(ctx, c, n); err != nil {
		return nil, err
	}
	defer func() {
		_ = c.DeleteAllOf(context.Background(), &corev1.Node{}, client.MatchingLabels{daemonNodeLabel: "true"})
	}()
	floor, err := runDaemonFloor(ctx, sb, c, n)
	if err != nil {
		return nil, err
	}
	out := []result{floor}
	ns, err := namespace(ctx, c, "bench-ads")
	if err != nil {
		return nil, err
	}
	labels := map[string]string{"app": "bench"}
	pod := podSpec(image("v1"))
	pod.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
	pod.NodeSelector = map[string]string{daemonNodeLabel: "true"}
	pod.Tolerations = []corev1.Toleration{{Key: daemonNodeLabel, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	ds := &appsv1beta1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: ns},
		Spec: appsv1beta1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
			// burstReplicas as large as the bench: the scale-up is not held to 250 creations a pass.
			BurstReplicas: ptr.To(intstr.FromInt(n)),
			UpdateStrategy: appsv1beta1.DaemonSetUpdateStrategy{Type: appsv1beta1.DaemonSetRollingUpdateStrategyType,
				RollingUpdate: &appsv1beta1.DaemonSetRollingUpdate{Type: appsv1beta1.DaemonSetInplaceRollingUpdateType,
					MaxUnavailable: ptr.To(intstr.FromString("20%"))}}}}
	mgr := isUser(sandbox.KruiseManagerUser)
	r, err := measure(sb, "ads-scaleup", "kruise-manager", n, mgrPID, mgr, func() error {
		if err := c.Create(ctx, ds); err != nil {
			return err
		}
		return waitDaemonSet(ctx, c, ds, func(s *appsv1beta1.DaemonSetStatus) bool {
			return s.DesiredNumberScheduled == int32(n) && s.NumberReady == int32(n)
		})
	})
	if err != nil {
		return nil, err
	}
	out = append(out, r)
	stopProfile := prof.start("ads-inplace-maxu20")
	r, err = measure(sb, "ads-inplace-maxu20", "kruise-manager", n, mgrPID, mgr, func() error {
		if err := patch(ctx, c, ds, fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image("v2"))); err != nil {
			return err
		}
		return waitDaemonSet(ctx, c, ds, func(s *appsv1beta1.DaemonSetStatus) bool {
			return s.UpdatedNumberScheduled == int32(n) && s.NumberAvailable == int32(n)
		})
	})
	if perr := stopProfile(); err == nil {
		err = perr
	}
	if err != nil {
		return nil, err
	}
	out = append(out, r)
	return out, deleteNamespace(ctx, c, ns)
}

// adsFloor is the floor of the DaemonSet's rollout (floorOf): the floor's protocol at
// maxUnavailable 20% on the DaemonSet's own nodes, one pod per node. Its n nodes' heartbeats load
// kwok and the API server on a 2-core machine, so the floor of the other scenarios (on the
// sandbox's few nodes) would charge that load to the controller.
const adsFloor = floorPrefix + "ads-maxu20"

// runDaemonFloor measures adsFloor on the daemon nodes (daemonNodes).
func runDaemonFloor(ctx context.Context, sb *sandbox.Sandbox, c client.Client, n int) (result, error) {
	cs, err := floorClientset(sb)
	if err != nil {
		return result{}, err
	}
	return runFloorScenario(ctx, sb, cs, c, adsFloor, n, intstr.FromString("20%"), func(i int, spec *corev1.PodSpec) {
		spec.NodeName = daemonNodeName(i)
		spec.Tolerations = []corev1.Toleration{{Key: daemonNodeLabel, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	})
}

func daemonNodeName(i int) string { return fmt.Sprintf("kwok-daemon-%d", i) }

// daemonNodes creates n kwok nodes for the DaemonSet bench and waits until kwok reports them all
// Ready, so that the scale-up measures the controller, not node registration.
func daemonNodes(ctx context.Context, c client.Client, n int) error {
	for i := range n {
		node := sandbox.FakeNode(daemonNodeName(i), fmt.Sprintf("10.252.%d.%d", i/250, 1+i%250))
		node.Labels[daemonNodeLabel] = "true"
		node.Spec.Taints = []corev1.Taint{{Key: daemonNodeLabel, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
		if err := c.Create(ctx, node); err != nil {
			return fmt.Errorf("create node %s: %w", node.Name, err)
		}
	}
	return poll(ctx, fmt.Sprintf("%d daemon nodes Ready", n), func() (bool, error) {
		var list corev1.NodeList
		if err := c.List(ctx, &list, client.MatchingLabels{daemonNodeLabel: "true"}); err != nil {
			return false, err
		}
		ready := 0
		for i := range list.Items {
			for _, cond := range list.Items[i].Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == n, nil
	})
}

// waitDaemonSet waits until the set's status observed its generation and satisfies cond.
func waitDaemonSet(ctx context.Context, c client.Client, ds *appsv1beta1.DaemonSet, cond func(*appsv1beta1.DaemonSetStatus) bool) error {
	return poll(ctx, "DaemonSet "+ds.Name, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(ds), ds); err != nil {
			return false, err
		}
		return ds.Status.ObservedGeneration == ds.Generation && cond(&ds.Status), nil
	})
}
