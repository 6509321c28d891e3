package ephemeraljob

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// Conflict is a pod that holds a container named like one of the job's that the job did not
// inject: the pod is never a target.
type Conflict struct {
	Pod, Container string
	// UID is the pod's.
	UID types.UID
	// Kind says what holds the name: "ephemeral container" (another job's or a user's) or
	// "container".
	Kind string
}

func (c Conflict) String() string {
	return fmt.Sprintf("pod %s already has a %s named %s that this job did not inject", c.Pod, c.Kind, c.Container)
}

// templateNames are the names of the job's ephemeral containers.
func templateNames(job *v1alpha1.EphemeralJob) sets.Set[string] {
	names := sets.New[string]()
	for _, c := range job.Spec.Template.EphemeralContainers {
		names.Insert(c.Name)
	}
	return names
}

// Owns reports whether c carries the job's mark: env KRUISE_EJOB_ID = uid.
func Owns(uid types.UID, c *corev1.EphemeralContainer) bool {
	for _, e := range c.Env {
		if e.Name == v1alpha1.EphemeralContainerEnvKey && e.Value == string(uid) {
			return true
		}
	}
	return false
}

// Injected reports whether the pod holds one of the job's containers marked as the job's.
func Injected(job *v1alpha1.EphemeralJob, pod *corev1.Pod) bool {
	names := templateNames(job)
	for i := range pod.Spec.EphemeralContainers {
		if c := &pod.Spec.EphemeralContainers[i]; names.Has(c.Name) && Owns(job.UID, c) {
			return true
		}
	}
	return false
}

// conflictOf returns the pod's first container holding a name of the job's template that the job
// did not inject, if any.
func conflictOf(job *v1alpha1.EphemeralJob, pod *corev1.Pod) (Conflict, bool) {
	names := templateNames(job)
	for i := range pod.Spec.EphemeralContainers {
		if c := &pod.Spec.EphemeralContainers[i]; names.Has(c.Name) && !Owns(job.UID, c) {
			return Conflict{Pod: pod.Name, UID: pod.UID, Container: c.Name, Kind: "ephemeral container"}, true
		}
	}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			if names.Has(c.Name) {
				return Conflict{Pod: pod.Name, UID: pod.UID, Container: c.Name, Kind: "container"}, true
			}
		}
	}
	return Conflict{}, false
}

// eligible reports whether a pod may be a target: Running and not being deleted.
func eligible(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning
}

// target is a chosen pod and whether the job's containers are in it (or were just put there,
// pending in the cache).
type target struct {
	pod      *corev1.Pod
	injected bool
}

// selectTargets picks the job's targets among pods (those of its namespace its selector matches):
// eligible pods without a conflict, the injected ones first, then oldest first, at most
// spec.replicas. pending are pods injected whose containers the cache does not show yet.
// Conflicts are reported for the eligible pods only.
func selectTargets(job *v1alpha1.EphemeralJob, pods []*corev1.Pod, pending sets.Set[types.UID]) ([]target, []Conflict) {
	var cands []target
	var conflicts []Conflict
	for _, pod := range pods {
		if !eligible(pod) {
			continue
		}
		injected := Injected(job, pod) || pending.Has(pod.UID)
		if !injected {
			if c, ok := conflictOf(job, pod); ok {
				conflicts = append(conflicts, c)
				continue
			}
		}
		cands = append(cands, target{pod: pod, injected: injected})
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.injected != b.injected {
			return a.injected
		}
		if !a.pod.CreationTimestamp.Equal(&b.pod.CreationTimestamp) {
			return a.pod.CreationTimestamp.Before(&b.pod.CreationTimestamp)
		}
		return a.pod.Name < b.pod.Name
	})
	if r := job.Spec.Replicas; r != nil && len(cands) > int(max(*r, 0)) {
		cands = cands[:max(*r, 0)]
	}
	sort.Slice(conflicts, func(i, j int) bool { return conflicts[i].Pod < conflicts[j].Pod })
	return cands, conflicts
}
