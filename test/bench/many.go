package main

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

// manyMaxRatio is issue 22's bar: many small CloneSets rolled together finish within this factor
// of one CloneSet of as many pods.
const manyMaxRatio = 1.3

// runMany measures many workloads at once against one: a CloneSet of count×size pods scaled up and
// rolled in place (maxUnavailable 20%), then, once its namespace is gone, count CloneSets of size
// pods each, created together and rolled in place together. The rollouts' wall times compare the
// controller's fairness across objects (workers, queue) with its throughput on one object.
func runMany(ctx context.Context, sb *sandbox.Sandbox, count, size int, prof *profiler) ([]result, error) {
	c, mgrPID, err := managerBench(sb)
	if err != nil {
		return nil, err
	}
	mgr := isUser(sandbox.KruiseManagerUser)
	n := count * size
	labels := map[string]string{"app": "bench"}

	ns, err := namespace(ctx, c, "bench-one")
	if err != nil {
		return nil, err
	}
	one := benchCloneSet(ns, n, labels)
	up, err := measureScaleUp(ctx, sb, c, "one-scaleup", one, n, mgrPID, mgr)
	if err != nil {
		return nil, err
	}
	stop := prof.start("one-inplace-maxu20")
	roll, err := measure(sb, "one-inplace-maxu20", "kruise-manager", n, mgrPID, mgr, func() error {
		return rollCloneSets(ctx, c, []*appsv1alpha1.CloneSet{one}, image("v2"))
	})
	if perr := stop(); err == nil {
		err = perr
	}
	if err != nil {
		return nil, err
	}
	out := []result{up, roll} // manyRatio reads the rollouts at 1 and 3
	if err := deleteNamespace(ctx, c, ns); err != nil {
		return nil, err
	}

	if ns, err = namespace(ctx, c, "bench-many"); err != nil {
		return nil, err
	}
	sets := make([]*appsv1alpha1.CloneSet, count)
	for i := range sets {
		sets[i] = benchCloneSet(ns, size, map[string]string{"app": fmt.Sprintf("bench-%d", i)})
		sets[i].Name = fmt.Sprintf("bench-%d", i)
	}
	scenario := fmt.Sprintf("many-%dx%d-scaleup", count, size)
	up, err = measure(sb, scenario, "kruise-manager", n, mgrPID, mgr, func() error {
		if err := parallel(count, func(i int) error { return c.Create(ctx, sets[i]) }); err != nil {
			return err
		}
		return waitCloneSets(ctx, c, sets, func(s *appsv1alpha1.CloneSetStatus) bool { return s.ReadyReplicas == int32(size) })
	})
	if err != nil {
		return nil, err
	}
	scenario = fmt.Sprintf("many-%dx%d-inplace-maxu20", count, size)
	stop = prof.start(scenario)
	roll, err = measure(sb, scenario, "kruise-manager", n, mgrPID, mgr, func() error {
		return rollCloneSets(ctx, c, sets, image("v2"))
	})
	if perr := stop(); err == nil {
		err = perr
	}
	if err != nil {
		return nil, err
	}
	out = append(out, up, roll)
	return out, deleteNamespace(ctx, c, ns)
}

// rollCloneSets sets the image of every CloneSet of sets at once and waits until all of their
// pods are updated and ready.
func rollCloneSets(ctx context.Context, c client.Client, sets []*appsv1alpha1.CloneSet, img string) error {
	if err := parallel(len(sets), func(i int) error {
		return patch(ctx, c, sets[i], fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, img))
	}); err != nil {
		return err
	}
	return waitCloneSets(ctx, c, sets, func(s *appsv1alpha1.CloneSetStatus) bool {
		return s.UpdatedReadyReplicas == s.Replicas && s.ReadyReplicas == s.Replicas && s.CurrentRevision == s.UpdateRevision
	})
}

// waitCloneSets waits until every CloneSet of sets (all in one namespace) observed its generation
// and satisfies cond, reading them with one list every 250 ms (a list of hundreds of CloneSets
// every 50 ms would load the API server the controller shares).
func waitCloneSets(ctx context.Context, c client.Client, sets []*appsv1alpha1.CloneSet, cond func(*appsv1alpha1.CloneSetStatus) bool) error {
	want := map[string]bool{}
	for _, cs := range sets {
		want[cs.Name] = true
	}
	return pollEvery(ctx, fmt.Sprintf("%d CloneSets", len(sets)), 250*time.Millisecond, func() (bool, error) {
		var list appsv1alpha1.CloneSetList
		if err := c.List(ctx, &list, client.InNamespace(sets[0].Namespace)); err != nil {
			return false, err
		}
		done := 0
		for i := range list.Items {
			cs := &list.Items[i]
			if want[cs.Name] && cs.Status.ObservedGeneration == cs.Generation && cond(&cs.Status) {
				done++
			}
		}
		return done == len(want), nil
	})
}

// manyRatio is the many CloneSets' rollout time against the one's (results as runMany returns them).
func manyRatio(results []result) float64 { return results[3].WallSeconds / results[1].WallSeconds }
