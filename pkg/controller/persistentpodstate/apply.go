package persistentpodstate

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// maxEventChanges bounds the changes one event lists.
const maxEventChanges = 5

// applyStatus writes plan's status when it differs from pps's, and tells what changed.
func (r *Reconciler) applyStatus(ctx context.Context, pps *v1alpha1.PersistentPodState, plan Plan) error {
	if SameStatus(pps.Status, plan.Status) {
		return nil
	}
	next := pps.DeepCopy()
	next.Status = plan.Status
	if err := r.Client.Status().Update(ctx, next); err != nil {
		return err
	}
	if len(plan.Changes) == 0 {
		return nil
	}
	notes := make([]string, 0, maxEventChanges+1)
	for i, c := range plan.Changes {
		if i == maxEventChanges {
			notes = append(notes, fmt.Sprintf("and %d more", len(plan.Changes)-i))
			break
		}
		notes = append(notes, c.String())
	}
	log.FromContext(ctx).V(1).Info("pod states changed", "changes", plan.Changes)
	r.event(pps, corev1.EventTypeNormal, ReasonStatesChanged, "%s", strings.Join(notes, "; "))
	return nil
}

// applyGeneration carries out a generation decision for workload obj (the events' object).
func (g *Generator) applyGeneration(ctx context.Context, obj client.Object, dec Generation) error {
	switch dec.Action {
	case None:
		if dec.Warn {
			g.event(obj, corev1.EventTypeWarning, ReasonNotGenerated, "%s", dec.Reason)
		}
		return nil
	case Create:
		if err := g.Client.Create(ctx, dec.Object); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return nil // the cache shows it next
			}
			return fmt.Errorf("create PersistentPodState %s: %w", dec.Object.Name, err)
		}
	case Update:
		if err := g.Client.Update(ctx, dec.Object); err != nil {
			return fmt.Errorf("update PersistentPodState %s: %w", dec.Object.Name, err)
		}
	case Delete:
		if err := g.Client.Delete(ctx, dec.Object, client.Preconditions{UID: &dec.Object.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete PersistentPodState %s: %w", dec.Object.Name, err)
		}
	}
	g.event(obj, corev1.EventTypeNormal, ReasonGenerated, "%s PersistentPodState %s: %s", strings.ToLower(string(dec.Action)), dec.Object.Name, dec.Reason)
	return nil
}
