package engine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Budget is asked before an in-place update takes a pod out of service (a PodUnavailableBudget:
// pkg/webhook/budgetguard): it records the pod as unavailable for its update, or refuses.
type Budget interface {
	// AdmitUpdate reports whether pod may become unavailable for an in-place update now; when it
	// may, the budget has recorded it. reason explains a refusal.
	AdmitUpdate(ctx context.Context, pod *corev1.Pod) (allowed bool, reason string, err error)
}

// BudgetError is an update a Budget holds back: the pod was left as it was, and the update may be
// tried again once the budget allows it.
type BudgetError struct {
	Pod, Reason string
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("pod %s waits for its PodUnavailableBudget: %s", e.Pod, e.Reason)
}

// Option configures an Engine.
type Option func(*engine)

// WithBudget makes the engine ask b before each in-place update takes a pod out of service.
func WithBudget(b Budget) Option {
	return func(e *engine) { e.budget = b }
}

// admit asks the budget, if any, whether pod may be taken out of service.
func (e *engine) admit(ctx context.Context, pod *corev1.Pod) error {
	if e.budget == nil {
		return nil
	}
	ok, reason, err := e.budget.AdmitUpdate(ctx, pod)
	if err != nil {
		return fmt.Errorf("ask the PodUnavailableBudget of pod %s: %w", pod.Name, err)
	}
	if !ok {
		return &BudgetError{Pod: pod.Name, Reason: reason}
	}
	return nil
}
