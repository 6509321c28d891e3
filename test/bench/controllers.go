package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// image is the fake image of version v (kwok reports a fake imageID per image).
func image(v string) string { return "registry.example/bench:" + v }

func podSpec(img string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: img}}, TerminationGracePeriodSeconds: ptr.To[int64](1)}
}

// runControllers measures the scenarios of set's kinds in turn (writer: kruise-manager), each kind's
// after the floor scenarios its in-place rollouts compare with (floorOf), measured anew right
// before it so that a ratio compares like with like on a machine whose pace drifts over a long
// run; then, unless set is in-place only or narrowed to some kinds, the Deployment reference
// (writer: kube-controller-manager's deployment and replicaset controllers).
func runControllers(ctx context.Context, sb *sandbox.Sandbox, n int, set scenarioSet, prof *profiler) ([]result, error) {
	c, mgrPID, err := managerBench(sb)
	if err != nil {
		return nil, err
	}
	var out []result
	// Each kind's floors are those its in-place rollouts compare with (floorOf).
	inPlaceFloors := []string{floorOf("inplace-maxu20"), floorOf("inplace-maxu100")}
	kinds := []struct {
		name   string
		floors []string
		run    func() ([]result, error)
	}{
		{"cloneset", inPlaceFloors, func() ([]result, error) { return runCloneSets(ctx, sb, c, n, mgrPID, prof) }},
		{"statefulset", inPlaceFloors, func() ([]result, error) { return runStatefulSets(ctx, sb, c, n, mgrPID, prof) }},
		// The DaemonSet runs one pod per node of its own: at most maxDaemonNodes (a kwok node
		// costs the API server heartbeats; 10,000 of them would measure kwok, not Kruise). Its
		// floor, on those nodes, is part of its scenarios.
		{"daemonset", nil, func() ([]result, error) { return runDaemonSets(ctx, sb, c, min(n, maxDaemonNodes), mgrPID, prof) }},
		{"sidecarset", []string{floorOf("sidecarset-upgrade")}, func() ([]result, error) {
			return runSidecarSet(ctx, sb, c, n, mgrPID, prof)
		}},
	}
	for _, k := range kinds {
		if !set.runs(k.name) {
			continue
		}
		if len(k.floors) > 0 {
			floors, err := runFloor(ctx, sb, n, k.floors...)
			if err != nil {
				return nil, err
			}
			out = append(out, floors...)
		}
		rs, err := k.run()
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	if set.inPlaceOnly || set.kindsOnly() {
		return out, nil
	}
	r, err := runDeployment(ctx, sb, c, n)
	if err != nil {
		return nil, err
	}
	return append(out, r), nil
}

// runCloneSets measures a CloneSet of n pods: scale-up, then in-place rollouts at maxUnavailable
// 20% and 100%; its namespace is gone afterwards.
func runCloneSets(ctx context.Context, sb *sandbox.Sandbox, c client.Client, n, mgrPID int, prof *profiler) ([]result, error) {
	mgr := isUser(sandbox.KruiseManagerUser)
	var out []result
	ns, err := namespace(ctx, c, "bench-cloneset")
	if err != nil {
		return nil, err
	}
	cs := benchCloneSet(ns, n, map[string]string{"app": "bench"})
	r, err := measureScaleUp(ctx, sb, c, "scaleup", cs, n, mgrPID, mgr)
	if err != nil {
		return nil, err
	}
	out = append(out, r)

	rollout := func(scenario, maxUnavailable, img string) error {
		if err := patch(ctx, c, cs, fmt.Sprintf(`{"spec":{"updateStrategy":{"maxUnavailable":%q}}}`, maxUnavailable)); err != nil {
			return err
		}
		if err := waitCloneSet(ctx, c, cs, func(*appsv1alpha1.CloneSetStatus) bool { return true }); err != nil {
			return err
		}
		stopProfile := prof.start(scenario)
		r, err := measure(sb, scenario, "kruise-manager", n, mgrPID, mgr, func() error {
			if err := patch(ctx, c, cs, fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, img)); err != nil {
				return err
			}
			return waitCloneSet(ctx, c, cs, func(s *appsv1alpha1.CloneSetStatus) bool {
				return s.UpdatedReadyReplicas == int32(n) && s.ReadyReplicas == int32(n) && s.CurrentRevision == s.UpdateRevision
			})
		})
		if perr := stopProfile(); err == nil {
			err = perr
		}
		out = append(out, r)
		return err
	}
	if err := rollout("inplace-maxu20", "20%", image("v2")); err != nil {
		return nil, err
	}
	if err := rollout("inplace-maxu100", "100%", image("v3")); err != nil {
		return nil, err
	}
	return out, deleteNamespace(ctx, c, ns)
}

// runDeployment measures an apps/v1 Deployment of n pods rolled out, the reference.
func runDeployment(ctx context.Context, sb *sandbox.Sandbox, c client.Client, n int) (result, error) {
	kcmPID, err := processPID(sb, "kube-controller-manager")
	if err != nil {
		return result{}, err
	}
	labels := map[string]string{"app": "bench"}
	dns, err := namespace(ctx, c, "bench-deployment")
	if err != nil {
		return result{}, err
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: dns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(n)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec(image("v1"))}}}
	if err := c.Create(ctx, d); err != nil {
		return result{}, err
	}
	deploymentDone := func(d *appsv1.Deployment) bool {
		s := d.Status
		return s.ObservedGeneration == d.Generation && s.UpdatedReplicas == int32(n) && s.AvailableReplicas == int32(n) && s.Replicas == int32(n)
	}
	if err := waitDeployment(ctx, c, d, deploymentDone); err != nil {
		return result{}, err
	}
	return measure(sb, "deployment-rollout", "kube-controller-manager", n, kcmPID,
		isServiceAccountOf("deployment-controller", "replicaset-controller"), func() error {
			if err := patch(ctx, c, d, fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image("v2"))); err != nil {
				return err
			}
			return waitDeployment(ctx, c, d, deploymentDone)
		})
}

// benchConfig is the scenarios' configuration of the sandbox's API server (QPS 200).
func benchConfig(sb *sandbox.Sandbox) (*rest.Config, error) {
	cfg, err := sb.RESTConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	cfg.WarningHandler = warnings
	return cfg, nil
}

// benchClient is a client of benchConfig.
func benchClient(sb *sandbox.Sandbox) (client.Client, error) {
	cfg, err := benchConfig(sb)
	if err != nil {
		return nil, err
	}
	return harness.NewKruiseClient(cfg)
}

// managerBench is the bench's client and kruise-manager's PID (the measured writer).
func managerBench(sb *sandbox.Sandbox) (client.Client, int, error) {
	c, err := benchClient(sb)
	if err != nil {
		return nil, 0, err
	}
	pid, err := processPID(sb, "kruise-manager")
	return c, pid, err
}

func namespace(ctx context.Context, c client.Client, prefix string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(ctx, ns); err != nil {
		return "", err
	}
	return ns.Name, nil
}

func patch(ctx context.Context, c client.Client, obj client.Object, p string) error {
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(p)))
}

// rolloutTimeout bounds any one wait: a stuck scenario fails rather than hangs (scaleTimeout).
var rolloutTimeout = 10 * time.Minute

// scaleTimeout gives a scenario of n pods 120 ms per pod when that is more than ten minutes: a
// 10,000-pod rollout takes nine and a half on a machine of two cores, most of it the API server's.
func scaleTimeout(n int) {
	rolloutTimeout = max(rolloutTimeout, time.Duration(n)*120*time.Millisecond)
}

// poll calls done every 50 ms until it holds.
func poll(ctx context.Context, what string, done func() (bool, error)) error {
	return pollEvery(ctx, what, 50*time.Millisecond, done)
}

// pollEvery calls done every interval until it holds.
func pollEvery(ctx context.Context, what string, interval time.Duration, done func() (bool, error)) error {
	deadline := time.Now().Add(rolloutTimeout)
	for {
		ok, err := done()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for %s", what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// waitCloneSet waits until the CloneSet's status observed its generation and satisfies cond.
func waitCloneSet(ctx context.Context, c client.Client, cs *appsv1alpha1.CloneSet, cond func(*appsv1alpha1.CloneSetStatus) bool) error {
	return poll(ctx, "CloneSet "+cs.Name, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cs), cs); err != nil {
			return false, err
		}
		return cs.Status.ObservedGeneration == cs.Generation && cond(&cs.Status), nil
	})
}

func waitDeployment(ctx context.Context, c client.Client, d *appsv1.Deployment, cond func(*appsv1.Deployment) bool) error {
	return poll(ctx, "Deployment "+d.Name, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return false, err
		}
		return cond(d), nil
	})
}

// deleteNamespace deletes ns and waits until it is gone, so that the next scenario does not share
// the cluster with its pods' deletion.
func deleteNamespace(ctx context.Context, c client.Client, ns string) error {
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := c.Delete(ctx, obj); err != nil {
		return err
	}
	return poll(ctx, "namespace "+ns+" gone", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// benchCloneSet is the scenarios' CloneSet: n pods labelled labels at image v1, in place with
// maxUnavailable 20%.
func benchCloneSet(ns string, n int, labels map[string]string) *appsv1alpha1.CloneSet {
	return &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: ns},
		Spec: appsv1alpha1.CloneSetSpec{Replicas: ptr.To(int32(n)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec(image("v1"))},
			UpdateStrategy: appsv1alpha1.CloneSetUpdateStrategy{Type: appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType,
				MaxUnavailable: ptr.To(intstr.FromString("20%"))}}}
}

// measureScaleUp measures scenario: cs created and its n pods ready.
func measureScaleUp(ctx context.Context, sb *sandbox.Sandbox, c client.Client, scenario string, cs *appsv1alpha1.CloneSet,
	n, mgrPID int, mgr func(string) bool) (result, error) {
	return measure(sb, scenario, "kruise-manager", n, mgrPID, mgr, func() error {
		if err := c.Create(ctx, cs); err != nil {
			return err
		}
		return waitCloneSet(ctx, c, cs, func(s *appsv1alpha1.CloneSetStatus) bool { return s.ReadyReplicas == int32(n) })
	})
}
