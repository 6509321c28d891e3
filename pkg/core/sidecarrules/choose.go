package sidecarrules

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// chooseRevision returns the SidecarSet to inject into a new pod, as OpenKruise picks it: the
// latest set unless injectionStrategy.revision pins a revision. A pinned revision (looked up in
// opts.Revisions) is injected when the update is paused, under policy Always, and under Partial
// when updateStrategy.selector is set and does not select the pod; otherwise Partial injects it
// with the probability of a percentage partition (opts.Draw() <= partition) and the latest set
// else. The result never shares memory with set.
func chooseRevision(pod *corev1.Pod, set *v1beta1.SidecarSet, opts *Options) (*v1beta1.SidecarSet, error) {
	ref := set.Spec.InjectionStrategy.Revision
	if ref == nil || (ref.RevisionName == nil && ref.CustomVersion == nil) {
		return set.DeepCopy(), nil
	}
	rev, err := FindRevision(set, ref, opts.Revisions[set.Name])
	if err != nil {
		return nil, err
	}
	pinned, err := RestoreRevision(set, rev)
	if err != nil {
		return nil, err
	}
	us := &set.Spec.UpdateStrategy
	if us.Paused || ref.Policy != v1beta1.SidecarSetPartialRevisionPolicy {
		return pinned, nil
	}
	if us.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(us.Selector)
		if err != nil {
			return nil, fmt.Errorf("SidecarSet %s: updateStrategy.selector: %w", set.Name, err)
		}
		if !sel.Matches(labels.Set(pod.Labels)) {
			return pinned, nil
		}
	}
	p := us.Partition
	if p == nil || p.Type == intstr.Int {
		return set.DeepCopy(), nil
	}
	share, err := parsePercentage(p.StrVal)
	if err != nil {
		return nil, fmt.Errorf("SidecarSet %s: updateStrategy.partition: %w", set.Name, err)
	}
	if opts.Draw != nil && opts.Draw() <= share {
		return pinned, nil
	}
	return set.DeepCopy(), nil
}

// parsePercentage parses "N%" (N a decimal number) as N/100.
func parsePercentage(s string) (float64, error) {
	v, ok := strings.CutSuffix(s, "%")
	if !ok {
		return 0, fmt.Errorf("%q is not a percentage", s)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a percentage: %w", s, err)
	}
	return f / 100, nil
}
