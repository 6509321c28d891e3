package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The driver's operations on pods and whole workloads (driver.go has those on specs and nodes).
const (
	// releasedLabel marks a pod the driver took out of its workload's selector: its app label
	// then names no workload (app-released), and Kruise must release it, never delete it.
	releasedLabel = "soak.kruise.io/released"
	// keptReleased is how many released pods the driver keeps; it deletes the oldest beyond.
	keptReleased = 2
)

// releasedPod is a pod the driver released, as it was named when released.
type releasedPod struct {
	Name string
	UID  types.UID
}

// goneWorkload is a workload the driver deleted and has not created again yet.
type goneWorkload struct {
	obj client.Object
	uid types.UID
	// cascade: its pods were deleted with it (they must be gone before it comes back).
	cascade bool
}

// evictWeb evicts two of web's pods back to back through the eviction API: web's
// PodUnavailableBudget (maxUnavailable budgetMaxUnavailable) must refuse what goes beyond it.
func (d *driver) evictWeb(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pods, err := d.livePods(ctx, "app=web")
	if err != nil || len(pods) < 2 {
		return "evict two pods of web", err
	}
	i := d.rng.IntN(len(pods))
	j := (i + 1 + d.rng.IntN(len(pods)-1)) % len(pods)
	var out []string
	for _, k := range []int{i, j} {
		switch err := d.evict(ctx, &pods[k]); {
		case err == nil:
			out = append(out, pods[k].Name+" evicted")
		case apierrors.IsTooManyRequests(err):
			out = append(out, pods[k].Name+" refused by the budget")
		default:
			out = append(out, fmt.Sprintf("%s not evicted (%v)", pods[k].Name, err))
		}
	}
	return "evict two pods of web: " + strings.Join(out, ", "), nil
}

// release takes a random pod of a CloneSet (web, api, or one of ud's) out of its workload's
// selector: its controller releases it and makes another. Beyond keptReleased released pods, the
// driver deletes the oldest itself (noted as asked first).
func (d *driver) release(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pods, err := d.livePods(ctx, "app in (web,api,ud)")
	if err != nil || len(pods) == 0 {
		return "release a pod", err
	}
	pod := &pods[d.rng.IntN(len(pods))]
	what := fmt.Sprintf("release %s (app %s)", pod.Name, pod.Labels["app"])
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{"app":%q,%q:"true"}}}`, pod.Labels["app"]+"-released", releasedLabel)
	d.asks.podReleased(pod.Labels["app"], time.Now())
	if _, err := d.cs.CoreV1().Pods(ns).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return what, err
	}
	d.released = append(d.released, releasedPod{Name: pod.Name, UID: pod.UID})
	if len(d.released) <= keptReleased {
		return what, nil
	}
	old := d.released[0]
	d.evicted.Store(old.UID, true)
	err = d.cs.CoreV1().Pods(ns).Delete(ctx, old.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &old.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		return what + ", delete released " + old.Name, err
	}
	d.released = d.released[1:]
	return what + ", delete released " + old.Name, nil
}

// livePods are the pods of selector not being deleted, by name.
func (d *driver) livePods(ctx context.Context, selector string) ([]corev1.Pod, error) {
	list, err := d.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	pods := slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods, nil
}

// recreate deletes w with the propagation policy given and creates it again with the same spec:
// orphaned, its pods must be adopted (none deleted, none made anew); deleted with it (background),
// its pods go, as asked, and are made anew once they are all gone.
func (d *driver) recreate(ctx context.Context, w workload, policy metav1.DeletionPropagation) (string, error) {
	what := fmt.Sprintf("%s %s deleted (propagation %s) and created again", w.Kind, w.Name, policy)
	obj := objectOf(w)
	getCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := d.c.Get(getCtx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return what, err
	}
	g := &goneWorkload{obj: fresh(obj), uid: obj.GetUID(), cascade: policy != metav1.DeletePropagationOrphan}
	if g.cascade {
		d.asks.ownerDeleted(g.uid)
	}
	d.asks.touched(w.Name, time.Now())
	d.gone[w.Name] = g
	if err := d.c.Delete(getCtx, obj, client.PropagationPolicy(policy), client.Preconditions{UID: &g.uid}); err != nil && !apierrors.IsNotFound(err) {
		// Not deleted after all (refused): nothing to bring back.
		if gerr := d.c.Get(getCtx, client.ObjectKeyFromObject(obj), obj); gerr == nil && obj.GetUID() == g.uid && obj.GetDeletionTimestamp() == nil {
			delete(d.gone, w.Name)
			return what, err
		}
	}
	took := time.Now()
	if err := d.restore(ctx, w.Name); err != nil {
		return what, err
	}
	return fmt.Sprintf("%s (in %.1f s)", what, time.Since(took).Seconds()), nil
}

// restore creates the workload the driver deleted under name again, once the old one is gone
// (and, deleted with its pods, once none of them is live); each wait is up to a minute.
func (d *driver) restore(ctx context.Context, name string) error {
	g, ok := d.gone[name]
	if !ok {
		return nil
	}
	cur := g.obj.DeepCopyObject().(client.Object)
	gone := func() (bool, error) {
		err := d.c.Get(ctx, client.ObjectKeyFromObject(cur), cur)
		return apierrors.IsNotFound(err) || (err == nil && cur.GetUID() != g.uid), nil
	}
	err := waitFor(ctx, time.Minute, gone)
	if err != nil && d.restartGC != nil && slices.Equal(cur.GetFinalizers(), []string{metav1.FinalizerOrphanDependents}) {
		// Only the garbage collector's orphaning holds it: its graph went stale (a dependent
		// deleted and made again under its name while its watch was away, docs/reliability.md
		// finding 15): kube-controller-manager is restarted, as an operator would.
		d.log.add("kube-controller-manager restarted: the old %s's orphaning did not end within a minute (the garbage collector's graph is stale)", name)
		if rerr := d.restartGC(ctx); rerr != nil {
			return fmt.Errorf("restart kube-controller-manager: %w", rerr)
		}
		err = waitFor(ctx, time.Minute, gone)
	}
	if err != nil {
		return fmt.Errorf("the old %s is not gone: %w", name, err)
	}
	if err := waitFor(ctx, time.Minute, func() (bool, error) {
		if !g.cascade {
			return true, nil
		}
		pods, err := d.livePods(ctx, "app="+name)
		if err != nil {
			return false, nil
		}
		return !slices.ContainsFunc(pods, func(p corev1.Pod) bool {
			ref := metav1.GetControllerOf(&p)
			return ref != nil && ref.UID == g.uid
		}), nil
	}); err != nil {
		return fmt.Errorf("the old %s's pods are not gone: %w", name, err)
	}
	d.asks.touched(name, time.Now())
	var last error
	if err := waitFor(ctx, time.Minute, func() (bool, error) {
		last = d.c.Create(ctx, g.obj.DeepCopyObject().(client.Object))
		return last == nil || apierrors.IsAlreadyExists(last), nil
	}); err != nil {
		return fmt.Errorf("create %s again: %w", name, last)
	}
	d.asks.touched(name, time.Now())
	delete(d.gone, name)
	return nil
}
