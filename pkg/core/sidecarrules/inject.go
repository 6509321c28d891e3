package sidecarrules

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// Options are the inputs of Inject besides the pod and the SidecarSets.
type Options struct {
	// NamespaceLabels are the labels of the pod's namespace, matched by spec.namespaceSelector.
	NamespaceLabels map[string]string
	// Now is the updateTimestamp written into the pod's hash annotations.
	Now metav1.Time
	// Revisions are, by SidecarSet name, the ControllerRevisions of that SidecarSet; only those
	// pinning a revision (injectionStrategy.revision) need an entry.
	Revisions map[string][]*appsv1.ControllerRevision
	// Draw returns a number in [0, 1) for each choice between a pinned revision and the latest
	// one under policy Partial with a percentage partition. Nil always picks the latest.
	Draw func() float64
	// PatchPolicy, when set, refuses SidecarSets whose patchPodMetadata sets keys it does not
	// allow (CheckPatchMetadata). Nil checks nothing: the SidecarSet webhook vetted them.
	PatchPolicy *PatchPolicy
}

// Result is the outcome of Inject.
type Result struct {
	// Pod is the pod with the sidecars injected; a copy, even when nothing changed.
	Pod *corev1.Pod
	// Injected are the names of the SidecarSets that matched the pod, in injection order.
	Injected []string
}

// Inject returns pod as OpenKruise's pod webhook admits it at creation: with the sidecars of
// every SidecarSet in sets that selects it (Matches) and is not paused, at the revision
// chooseRevision picks. SidecarSets are applied in name order. pod and sets are not modified.
// It fails, and the pod should be refused, when two of them (or one twice) would inject
// containers of the same name, when a SidecarSet's selector or pinned revision is invalid, when
// a metadata patch fails or is not allowed, or when the pod's hash annotations are unreadable.
func Inject(pod *corev1.Pod, sets []*v1beta1.SidecarSet, opts Options) (*Result, error) {
	if pod == nil {
		return nil, fmt.Errorf("no pod")
	}
	out := &Result{Pod: pod.DeepCopy()}
	if !podActive(pod) {
		return out, nil
	}
	matched, err := matchedSets(pod, sets, &opts)
	if err != nil || len(matched) == 0 {
		return out, err
	}
	if err := checkConflicts(matched); err != nil {
		return nil, err
	}
	p := out.Pod
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	for _, m := range matched {
		out.Injected = append(out.Injected, m.Name)
		if opts.PatchPolicy != nil {
			if err := CheckPatchMetadata(m, *opts.PatchPolicy); err != nil {
				return nil, err
			}
		}
		if err := patchMetadata(p.Annotations, m.Spec.PatchPodMetadata); err != nil {
			return nil, fmt.Errorf("SidecarSet %s: %w", m.Name, err)
		}
	}
	if err := apply(p, matched, opts.Now); err != nil {
		return nil, err
	}
	return out, nil
}

// matchedSets returns, in name order, the SidecarSets to inject into pod, each at the revision
// to inject.
func matchedSets(pod *corev1.Pod, sets []*v1beta1.SidecarSet, opts *Options) ([]*v1beta1.SidecarSet, error) {
	var candidates []*v1beta1.SidecarSet
	for _, s := range sets {
		if s != nil && !s.Spec.InjectionStrategy.Paused {
			candidates = append(candidates, s)
		}
	}
	sort.SliceStable(candidates, func(i, j int) bool { return candidates[i].Name < candidates[j].Name })
	var matched []*v1beta1.SidecarSet
	for _, s := range candidates {
		ok, err := Matches(pod, s, opts.NamespaceLabels)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		chosen, err := chooseRevision(pod, s, opts)
		if err != nil {
			return nil, err
		}
		matched = append(matched, chosen)
	}
	return matched, nil
}

// checkConflicts refuses two injected containers of the same name, init or not, hot-upgrade
// copies by their copies' names.
func checkConflicts(sets []*v1beta1.SidecarSet) error {
	owner := map[string]string{}
	for _, s := range sets {
		for l, list := range [][]v1beta1.SidecarSetContainer{s.Spec.InitContainers, s.Spec.Containers} {
			for i := range list {
				for _, name := range injectedNames(&list[i], l == 0) {
					if other, ok := owner[name]; ok {
						return fmt.Errorf("SidecarSets %s and %s both inject a container named %s", other, s.Name, name)
					}
					owner[name] = s.Name
				}
			}
		}
	}
	return nil
}

// injectedNames are the pod container names a SidecarSet container (init or not) becomes.
func injectedNames(c *v1beta1.SidecarSetContainer, init bool) []string {
	if c.UpgradeStrategy.UpgradeType == v1beta1.SidecarSetHotUpgrade && (!init || isNativeSidecar(&c.Container)) {
		n1, n2 := hotUpgradeNames(c.Name)
		return []string{n1, n2}
	}
	return []string{c.Name}
}
