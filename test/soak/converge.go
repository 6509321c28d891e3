package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// target is what converge waits for: a workload reaching its spec, or what places its pods
// agreeing with them. Its check says why it has not ("" when it has).
type target struct {
	name  string
	check func(ctx context.Context) (string, error)
}

// targets are the world's workloads at their image versions (versions), the WorkloadSpread, the
// PersistentPodState, and the pods the driver released (released).
func targets(c client.Client, cs kubernetes.Interface, versions map[string]int, nodes []string, released []releasedPod) []target {
	var out []target
	for _, w := range world {
		out = append(out, target{name: w.Kind + " " + w.Name, check: func(ctx context.Context) (string, error) {
			return notConverged(ctx, c, cs, w, versions[w.Name], nodes)
		}})
	}
	return append(out,
		target{name: "WorkloadSpread " + spreadName, check: func(ctx context.Context) (string, error) { return spreadNotConverged(ctx, c, cs, nodes) }},
		target{name: "PersistentPodState " + ppsName, check: func(ctx context.Context) (string, error) { return statesNotConverged(ctx, c, cs, nodes) }},
		target{name: "released pods", check: func(ctx context.Context) (string, error) { return releasedNotKept(ctx, cs, released) }})
}

// converge waits, up to bound, for every target: a workload at its image version, every pod ready
// at the update revision (web's with its sidecar), as many as asked, its status equal to what the
// pods show; the spread, the recorded states and the released pods as they say. It returns how
// long each took.
func converge(ctx context.Context, ts []target, bound time.Duration) (map[string]time.Duration, error) {
	start := time.Now()
	took := map[string]time.Duration{}
	last := map[string]string{}
	for time.Since(start) < bound {
		for _, t := range ts {
			if _, ok := took[t.name]; ok {
				continue
			}
			tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			why, err := t.check(tctx)
			cancel()
			if err != nil {
				why = err.Error()
			}
			if why == "" {
				took[t.name] = time.Since(start)
			}
			last[t.name] = why
		}
		if len(took) == len(ts) {
			return took, nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	var out []string
	for _, t := range ts {
		if _, ok := took[t.name]; !ok {
			out = append(out, fmt.Sprintf("%s: %s", t.name, last[t.name]))
		}
	}
	return took, fmt.Errorf("not converged within %s: %s", bound, strings.Join(out, "; "))
}

// counts is what a workload's status says, to hold against its pods.
type counts struct {
	uid                            types.UID
	generation, observed           int64
	want, replicas, updated, ready int32
	updateRevision                 string
}

// notConverged says why w has not reached its spec ("" when it has).
func notConverged(ctx context.Context, c client.Client, cs kubernetes.Interface, w workload, version int, nodes []string) (string, error) {
	st, err := statusOf(ctx, c, w, len(nodes))
	if err != nil {
		return "", err
	}
	if st.observed != st.generation {
		return fmt.Sprintf("status of generation %d, spec %d", st.observed, st.generation), nil
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + w.Name})
	if err != nil {
		return "", err
	}
	var live, ready, updated int32
	var notReady []string // each described, with its in-place update state
	want := fmt.Sprintf(image, version)
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		live++
		if available(p) {
			ready++
		} else {
			notReady = append(notReady, describe(p)+" state "+p.Annotations[appspub.InPlaceUpdateStateKey])
		}
		if imageOf(p) != want {
			return fmt.Sprintf("pod %s runs %s, want %s", p.Name, imageOf(p), want), nil
		}
		if st.updateRevision != "" && p.Labels["controller-revision-hash"] != st.updateRevision &&
			!strings.HasSuffix(st.updateRevision, "-"+p.Labels["controller-revision-hash"]) {
			return fmt.Sprintf("pod %s at revision %s, want %s", p.Name, p.Labels["controller-revision-hash"], st.updateRevision), nil
		}
		if w.Name == "web" && !hasContainer(p, sidecarName) {
			return fmt.Sprintf("pod %s has no sidecar %s", p.Name, sidecarName), nil
		}
		if why := notOwned(p, w, st.uid); why != "" {
			return why, nil
		}
		updated++
	}
	switch {
	case live != st.want || ready != st.want:
		return fmt.Sprintf("%d live pods, %d ready, want %d; not ready: %s", live, ready, st.want, strings.Join(notReady, "; ")), nil
	case st.replicas != live || st.ready != ready || st.updated != updated:
		return fmt.Sprintf("status says %d replicas, %d ready, %d updated; the pods %d, %d, %d", st.replicas, st.ready, st.updated, live, ready, updated), nil
	case w.Kind == "UnitedDeployment":
		return udNotConverged(ctx, c, pods.Items, nodes)
	}
	return "", nil
}

func statusOf(ctx context.Context, c client.Client, w workload, nodes int) (counts, error) {
	obj := objectOf(w)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return counts{}, err
	}
	switch o := obj.(type) {
	case *appsv1alpha1.CloneSet:
		return counts{uid: o.UID, generation: o.Generation, observed: o.Status.ObservedGeneration, want: *o.Spec.Replicas, replicas: o.Status.Replicas,
			updated: o.Status.UpdatedReplicas, ready: o.Status.ReadyReplicas, updateRevision: o.Status.UpdateRevision}, nil
	case *appsv1beta1.StatefulSet:
		return counts{uid: o.UID, generation: o.Generation, observed: o.Status.ObservedGeneration, want: *o.Spec.Replicas, replicas: o.Status.Replicas,
			updated: o.Status.UpdatedReplicas, ready: o.Status.ReadyReplicas, updateRevision: o.Status.UpdateRevision}, nil
	case *appsv1beta1.DaemonSet:
		return counts{uid: o.UID, generation: o.Generation, observed: o.Status.ObservedGeneration, want: int32(nodes), replicas: o.Status.CurrentNumberScheduled,
			updated: o.Status.UpdatedNumberScheduled, ready: o.Status.NumberReady}, nil
	case *appsv1alpha1.UnitedDeployment:
		// Its pods carry their subset CloneSet's revisions: udNotConverged checks its own.
		return counts{uid: o.UID, generation: o.Generation, observed: o.Status.ObservedGeneration, want: *o.Spec.Replicas, replicas: o.Status.Replicas,
			updated: o.Status.UpdatedReplicas, ready: o.Status.ReadyReplicas}, nil
	}
	return counts{}, fmt.Errorf("unknown kind %T", obj)
}

func imageOf(pod *corev1.Pod) string {
	for _, c := range pod.Spec.Containers {
		if c.Name == "app" {
			return c.Image
		}
	}
	return ""
}
