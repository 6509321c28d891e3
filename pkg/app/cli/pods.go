package cli

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownPods are the pods owner controls among those selector matches in its namespace, terminating
// ones included (callers that act on pods leave those out).
func ownPods(ctx context.Context, c client.Client, owner client.Object, selector *metav1.LabelSelector) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return nil, err
	}
	list := &corev1.PodList{}
	if err := c.List(ctx, list, client.InNamespace(owner.GetNamespace()), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	var pods []*corev1.Pod
	for i := range list.Items {
		if p := &list.Items[i]; metav1.IsControlledBy(p, owner) {
			pods = append(pods, p)
		}
	}
	return pods, nil
}
