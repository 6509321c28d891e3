package imagepulljob

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// selectNodes returns the NodeImages of the job's nodes, and the named nodes that have none yet: those of spec.selector (names and labels
// both, when both are given; NodeImages carry their node's labels), of the nodes that run pods
// matching spec.podSelector in the job's namespace, or every node.
func (r *Reconciler) selectNodes(ctx context.Context, job *v1beta1.ImagePullJob) ([]*v1beta1.NodeImage, []string, error) {
	list := &v1beta1.NodeImageList{}
	var opts []client.ListOption
	var names []string
	switch {
	case job.Spec.Selector != nil:
		sel, err := metav1.LabelSelectorAsSelector(&job.Spec.Selector.LabelSelector)
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
		names = job.Spec.Selector.Names
	case job.Spec.PodSelector != nil:
		sel, err := metav1.LabelSelectorAsSelector(&job.Spec.PodSelector.LabelSelector)
		if err != nil {
			return nil, nil, err
		}
		pods := &corev1.PodList{}
		if err := r.Client.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return nil, nil, err
		}
		names = []string{}
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" && p.DeletionTimestamp == nil && !slices.Contains(names, p.Spec.NodeName) {
				names = append(names, p.Spec.NodeName)
			}
		}
		if len(names) == 0 {
			return nil, nil, nil
		}
	}
	if err := r.Client.List(ctx, list, opts...); err != nil {
		return nil, nil, err
	}
	var out []*v1beta1.NodeImage
	found := map[string]bool{}
	for i := range list.Items {
		ni := &list.Items[i]
		if ni.DeletionTimestamp != nil || (names != nil && !slices.Contains(names, ni.Name)) {
			continue
		}
		out = append(out, ni)
		found[ni.Name] = true
	}
	// Nodes named by spec.selector.names that have no NodeImage yet are waited for; a name that
	// fails the label selector is not (the labels are known only from the NodeImage).
	var missing []string
	if job.Spec.Selector != nil {
		for _, n := range job.Spec.Selector.Names {
			if !found[n] && len(job.Spec.Selector.MatchLabels) == 0 && len(job.Spec.Selector.MatchExpressions) == 0 {
				missing = append(missing, n)
			}
		}
	}
	return out, missing, nil
}
