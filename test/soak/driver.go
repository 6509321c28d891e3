package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// driver keeps changing the world as its users would: image rollouts and rollbacks, partitions,
// replicas, pauses, node cordons and drains through the eviction API, pod evictions (web's two at
// a time, against its budget), pods taken out of their workload's selector, workloads deleted
// (orphaning their pods or with them) and created again (driver_ops.go). Each operation is chosen
// from its own random stream (the seed's), at 1–4 s intervals.
type driver struct {
	c   client.Client
	cs  kubernetes.Interface
	rng *rand.Rand
	// versions are the workloads' current image versions.
	versions map[string]int
	nodes    []string
	cordoned string
	ops      int
	// evicted are the pods the driver asked to go (by UID), for the checker.
	evicted  *sync.Map
	asks     *asks
	replicas *replicaHistory
	log      *eventLog
	// released are the pods the driver released and keeps (oldest first).
	released []releasedPod
	// gone are the workloads the driver deleted and has not created again yet, by name.
	gone map[string]*goneWorkload
	// restartGC restarts kube-controller-manager (its garbage collector) when an orphaning is
	// stuck; set for the settling after the campaign (nil while the injector restarts processes).
	restartGC func(context.Context) error
}

func newDriver(c client.Client, cs kubernetes.Interface, seed uint64, nodes []string, evicted *sync.Map, asks *asks, replicas *replicaHistory,
	log *eventLog) *driver {
	v := map[string]int{}
	for _, w := range world {
		v[w.Name] = 1
	}
	return &driver{c: c, cs: cs, rng: rand.New(rand.NewPCG(seed, 1)), versions: v, nodes: nodes, evicted: evicted, asks: asks, replicas: replicas,
		log: log, gone: map[string]*goneWorkload{}}
}

// run operates until ctx ends.
func (d *driver) run(ctx context.Context) {
	for {
		wait := time.Duration(1000+d.rng.IntN(3000)) * time.Millisecond
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		what, err := d.step(ctx)
		if err != nil {
			d.log.add("op failed: %s: %v", what, err)
			continue
		}
		d.ops++
		d.log.add("op: %s", what)
	}
}

// step does one operation and says what it did.
func (d *driver) step(ctx context.Context) (string, error) {
	w := world[d.rng.IntN(len(world))]
	switch r := d.rng.IntN(100); {
	case r < 26:
		d.versions[w.Name]++
		return fmt.Sprintf("%s %s image v%d", w.Kind, w.Name, d.versions[w.Name]), d.setImage(ctx, w)
	case r < 34 && d.versions[w.Name] > 1:
		d.versions[w.Name]--
		return fmt.Sprintf("%s %s rolled back to v%d", w.Kind, w.Name, d.versions[w.Name]), d.setImage(ctx, w)
	case r < 44:
		p := d.rng.IntN(4)
		if w.Kind == "UnitedDeployment" {
			pb := d.rng.IntN(4)
			return fmt.Sprintf("%s %s partitions a %d, b %d", w.Kind, w.Name, p, pb), d.patch(ctx, w, udPartitionPatch(p, pb))
		}
		return fmt.Sprintf("%s %s partition %d", w.Kind, w.Name, p), d.patch(ctx, w, partitionPatch(w, p))
	case r < 58 && w.Scalable:
		n := w.MinReplicas + int32(d.rng.IntN(int(w.MaxReplicas-w.MinReplicas)+1))
		d.replicas.record(w.Name, n, time.Now()) // before: the pods it makes may be seen before the answer
		err := d.patch(ctx, w, fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))
		if err != nil {
			// Refused (a webhook dropped) or its answer lost: the replicas are what the API
			// server holds, not what was asked.
			d.recordReplicasHeld(ctx, w)
		}
		return fmt.Sprintf("%s %s replicas %d", w.Kind, w.Name, n), err
	case r < 64 && w.Kind != "UnitedDeployment":
		paused := d.rng.IntN(2) == 0
		return fmt.Sprintf("%s %s paused %v", w.Kind, w.Name, paused), d.patch(ctx, w, pausePatch(w, paused))
	case r < 72:
		return d.nodeOp(ctx)
	case r < 79:
		return d.evictOne(ctx)
	case r < 85:
		return d.evictWeb(ctx)
	case r < 90:
		return d.release(ctx)
	case r < 95 && w.Kind != "UnitedDeployment":
		return d.recreate(ctx, w, metav1.DeletePropagationOrphan)
	case w.Name == "api" || w.Name == "db" || w.Name == "agent":
		return d.recreate(ctx, w, metav1.DeletePropagationBackground)
	default:
		return d.evictOne(ctx)
	}
}

func (d *driver) setImage(ctx context.Context, w workload) error {
	return d.patch(ctx, w, imagePatch(w, d.versions[w.Name]))
}

func imagePatch(w workload, version int) string {
	spec := fmt.Sprintf(`{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}`, fmt.Sprintf(image, version))
	if w.Kind == "UnitedDeployment" {
		spec = fmt.Sprintf(`{"template":{"cloneSetTemplate":{"spec":%s}}}`, spec)
	}
	return fmt.Sprintf(`{"spec":%s}`, spec)
}

func partitionPatch(w workload, p int) string {
	switch w.Kind {
	case "UnitedDeployment":
		return udPartitionPatch(p, p)
	case "CloneSet":
		return fmt.Sprintf(`{"spec":{"updateStrategy":{"partition":%d}}}`, p)
	}
	return fmt.Sprintf(`{"spec":{"updateStrategy":{"rollingUpdate":{"partition":%d}}}}`, p)
}

// pausePatch pauses or resumes w's updates; "" for a UnitedDeployment, which has no pause.
func pausePatch(w workload, paused bool) string {
	switch w.Kind {
	case "UnitedDeployment":
		return ""
	case "CloneSet":
		return fmt.Sprintf(`{"spec":{"updateStrategy":{"paused":%v}}}`, paused)
	}
	return fmt.Sprintf(`{"spec":{"updateStrategy":{"rollingUpdate":{"paused":%v}}}}`, paused)
}

func objectOf(w workload) client.Object {
	meta := metav1.ObjectMeta{Namespace: ns, Name: w.Name}
	switch w.Kind {
	case "CloneSet":
		return &appsv1alpha1.CloneSet{ObjectMeta: meta}
	case "StatefulSet":
		return &appsv1beta1.StatefulSet{ObjectMeta: meta}
	case "UnitedDeployment":
		return &appsv1alpha1.UnitedDeployment{ObjectMeta: meta}
	default:
		return &appsv1beta1.DaemonSet{ObjectMeta: meta}
	}
}

// recordReplicasHeld records w's replicas as the API server holds them (tried for up to 10 s).
func (d *driver) recordReplicasHeld(ctx context.Context, w workload) {
	_ = waitFor(ctx, 10*time.Second, func() (bool, error) {
		obj := objectOf(w)
		if err := d.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, nil
		}
		var replicas *int32
		switch o := obj.(type) {
		case *appsv1alpha1.CloneSet:
			replicas = o.Spec.Replicas
		case *appsv1beta1.StatefulSet:
			replicas = o.Spec.Replicas
		case *appsv1alpha1.UnitedDeployment:
			replicas = o.Spec.Replicas
		}
		if replicas != nil {
			d.replicas.record(w.Name, *replicas, time.Now())
		}
		return true, nil
	})
}

func (d *driver) patch(ctx context.Context, w workload, patch string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return d.c.Patch(ctx, objectOf(w), client.RawPatch(types.MergePatchType, []byte(patch)))
}

// nodeOp uncordons the cordoned node, or cordons one and drains it (evicts the workloads' pods
// on it but the DaemonSet's, as kubectl drain does); one node at most is cordoned at a time.
func (d *driver) nodeOp(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if d.cordoned != "" {
		node := d.cordoned
		if err := d.cordon(ctx, node, false); err != nil {
			return "uncordon " + node, err
		}
		d.cordoned = ""
		return "uncordon " + node, nil
	}
	node := d.nodes[d.rng.IntN(len(d.nodes))]
	if err := d.cordon(ctx, node, true); err != nil {
		return "cordon " + node, err
	}
	d.cordoned = node
	pods, err := d.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return "drain " + node, err
	}
	evicted := 0
	for i := range pods.Items {
		// As kubectl drain: not a DaemonSet's pod, nor one no workload controls (a released one).
		if pods.Items[i].Labels["app"] != "agent" && pods.Items[i].Labels[releasedLabel] == "" && d.evict(ctx, &pods.Items[i]) == nil {
			evicted++
		}
	}
	return fmt.Sprintf("drain %s (%d of %d pods evicted)", node, evicted, len(pods.Items)), nil
}

func (d *driver) cordon(ctx context.Context, node string, on bool) error {
	_, err := d.cs.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, fmt.Appendf(nil, `{"spec":{"unschedulable":%v}}`, on), metav1.PatchOptions{})
	return err
}

// evictOne evicts a random pod of the workloads (not the DaemonSet's).
func (d *driver) evictOne(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pods, err := d.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app in (web,api,db)"})
	if err != nil || len(pods.Items) == 0 {
		return "evict a pod", err
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	pod := &pods.Items[d.rng.IntN(len(pods.Items))]
	if err := d.evict(ctx, pod); err != nil {
		return "evict " + pod.Name + " (refused)", nil // a budget may refuse it: that is its job
	}
	return "evict " + pod.Name, nil
}

// evict asks the eviction API to evict pod, noting it first for the checker. The note stays
// unless the eviction was refused (a budget's 429, a webhook's 403, a gone pod): an eviction
// whose answer was lost (a timeout, the API server restarting) may have been carried out.
func (d *driver) evict(ctx context.Context, pod *corev1.Pod) error {
	d.evicted.Store(pod.UID, true)
	err := d.cs.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod.Name},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}})
	if apierrors.IsTooManyRequests(err) || apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		d.evicted.Delete(pod.UID)
	}
	return err
}

// settle gives every workload its final spec: there again if the driver deleted it, its image
// version, no partition, not paused, every node schedulable. Each change is retried for up to a
// minute (the webhooks answer again once a fault has passed).
func (d *driver) settle(ctx context.Context) error {
	retry := func(what string, do func() error) error {
		var last error
		if err := waitFor(ctx, time.Minute, func() (bool, error) { last = do(); return last == nil, nil }); err != nil {
			return fmt.Errorf("settle: %s: %w", what, last)
		}
		return nil
	}
	for _, w := range world {
		if err := d.restore(ctx, w.Name); err != nil {
			return fmt.Errorf("settle: %w", err)
		}
		// The image again: a change whose answer was lost may not have been made.
		for _, p := range []string{imagePatch(w, d.versions[w.Name]), partitionPatch(w, 0), pausePatch(w, false)} {
			if p == "" {
				continue
			}
			if err := retry(w.Kind+" "+w.Name+" "+p, func() error { return d.patch(ctx, w, p) }); err != nil {
				return err
			}
		}
	}
	if d.cordoned != "" {
		if err := retry("uncordon "+d.cordoned, func() error { return d.cordon(ctx, d.cordoned, false) }); err != nil {
			return err
		}
		d.cordoned = ""
	}
	return nil
}
