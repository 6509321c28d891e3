package cli

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func (m *migration) scaleCloneSet(ctx context.Context, replicas int32) error {
	cs := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: m.ns, Name: m.cloneSet}}
	return m.scale(ctx, cs, "cloneset/"+m.cloneSet, replicas, fmt.Sprintf("%d pods available", replicas), func() (bool, string) {
		st := cs.Status
		return st.ObservedGeneration >= cs.Generation && st.AvailableReplicas >= replicas && st.Replicas >= replicas,
			fmt.Sprintf("%d of %d available", st.AvailableReplicas, replicas)
	})
}

func (m *migration) scaleDeployment(ctx context.Context, replicas int32) error {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: m.ns, Name: m.deployment}}
	return m.scale(ctx, d, "deployment/"+m.deployment, replicas, fmt.Sprintf("down to %d pods", replicas), func() (bool, string) {
		st := d.Status
		return st.ObservedGeneration >= d.Generation && st.Replicas <= replicas, fmt.Sprintf("%d pods", st.Replicas)
	})
}

// scale sets obj's spec.replicas and waits until reached, which reads obj as last got, holds.
func (m *migration) scale(ctx context.Context, obj client.Object, name string, replicas int32, goal string, reached func() (bool, string)) error {
	if err := m.c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas))); err != nil {
		return fmt.Errorf("scale %s to %d: %w", name, replicas, err)
	}
	return m.wait(ctx, name+": "+goal, func() (bool, string, error) {
		if err := m.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, "", err
		}
		ok, state := reached()
		return ok, state, nil
	})
}

// wait polls cond every 500 ms for up to the step timeout, and the migration's.
func (m *migration) wait(ctx context.Context, what string, cond func() (bool, string, error)) error {
	whole := ctx
	if m.stepTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.stepTimeout)
		defer cancel()
	}
	last := ""
	for {
		ok, state, err := cond()
		switch {
		case whole.Err() != nil:
			return fmt.Errorf("waiting for %s: %s when the migration's --timeout-seconds (%s) ran out (the migration stops here; "+
				"run it again to resume)", what, last, m.timeout)
		case err != nil:
			return err
		case ok:
			return nil
		}
		last = state
		select {
		case <-ctx.Done():
			if whole.Err() == nil {
				return fmt.Errorf("waiting for %s: %s after %s (the migration stops here; run it again to resume)", what, last, m.stepTimeout)
			}
		case <-time.After(500 * time.Millisecond):
		}
	}
}
