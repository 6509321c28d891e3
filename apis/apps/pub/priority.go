package pub

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// UpdatePriorityStrategy orders the pods of a rolling update: either by weights of label selectors
// or by the value of ordered label keys. Set at most one of the two.
type UpdatePriorityStrategy struct {
	// OrderPriority updates first the pods with the highest integer value of the first listed label
	// key they carry; pods lacking every key go last.
	// +optional
	OrderPriority []UpdatePriorityOrderTerm `json:"orderPriority,omitempty"`
	// WeightPriority updates first the pods with the highest sum of weights of the terms they match.
	// +optional
	WeightPriority []UpdatePriorityWeightTerm `json:"weightPriority,omitempty"`
}

// UpdatePriorityOrderTerm names a pod label whose integer value orders updates.
type UpdatePriorityOrderTerm struct {
	// OrderedKey is the label key; higher values update first.
	OrderedKey string `json:"orderedKey"`
}

// UpdatePriorityWeightTerm gives pods matching a selector a weight.
type UpdatePriorityWeightTerm struct {
	// Weight is added to the priority of matching pods.
	Weight int32 `json:"weight"`
	// MatchSelector selects the pods that get Weight.
	MatchSelector metav1.LabelSelector `json:"matchSelector"`
}
