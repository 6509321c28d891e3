package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// MigratedFromAnnotation marks a CloneSet made by `kubectl kruise migrate` with its source
// ("deployment/NAME") and MigrationReplicasAnnotation with the pods to move (the Deployment's
// replicas when it began); a migration that stopped halfway resumes from them.
const (
	MigratedFromAnnotation      = "kruise.io/migrated-from"
	MigrationReplicasAnnotation = "kruise.io/migration-replicas"
)

// MigrationStep is one step of a migration: the CloneSet is raised to CloneSet replicas (and
// waited for until they are available), then the Deployment lowered to Deployment.
type MigrationStep struct{ CloneSet, Deployment int32 }

// MigrationSteps plans moving total pods from a Deployment to a CloneSet, step pods at a time,
// from cloneSet pods already moved. Each step adds before it removes, so the pods available never
// drop below total.
func MigrationSteps(total, step, cloneSet int32) []MigrationStep {
	step = max(step, 1)
	var steps []MigrationStep
	for c := cloneSet; c < total; {
		c = min(c+step, total)
		steps = append(steps, MigrationStep{CloneSet: c, Deployment: total - c})
	}
	return steps
}

func newMigrateCommand(env *Env) *cobra.Command {
	var from, to, stepFlag string
	var stepTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "migrate --from deployment/NAME --to cloneset/NAME",
		Short: "Move a Deployment's pods to a new CloneSet step by step, without downtime",
		Long: "Creates a CloneSet with the Deployment's selector and pod template (updated in place from then on), " +
			"then raises the CloneSet and lowers the Deployment --step pods at a time: each step waits until the " +
			"CloneSet's new pods are available before it removes as many of the Deployment's. The Deployment is " +
			"left with 0 replicas (delete it once you are satisfied). Run it again to resume a stopped migration.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dName, err := parseKind(from, "--from", "deployment", "deployments", "deploy", "deployment.apps", "deployments.apps")
			if err != nil {
				return err
			}
			k, cName, err := ParseWorkload([]string{to})
			if err == nil && k != CloneSetKind {
				err = fmt.Errorf("migrate moves Deployments to CloneSets, not to %ss", k.Noun)
			}
			if err != nil {
				return fmt.Errorf("--to: %w", err)
			}
			c, ns, err := env.Client()
			if err != nil {
				return err
			}
			m := &migration{c: c, ns: ns, out: env, deployment: dName, cloneSet: cName, stepTimeout: stepTimeout}
			return m.run(cmd.Context(), stepFlag)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the Deployment to migrate: deployment/NAME")
	cmd.Flags().StringVar(&to, "to", "", "the CloneSet to create: cloneset/NAME")
	cmd.Flags().StringVar(&stepFlag, "step", "25%", "pods moved per step: a count or a percentage of the Deployment's replicas (rounded up)")
	cmd.Flags().DurationVar(&stepTimeout, "step-timeout", 5*time.Minute, "give up when a step's pods are not available after this long")
	return cmd
}

// parseKind reads KIND/NAME where KIND is one of kinds; flag names the flag in errors.
func parseKind(arg, flag string, kinds ...string) (string, error) {
	kind, name, ok := strings.Cut(arg, "/")
	if !ok || name == "" {
		return "", fmt.Errorf("%s names a workload as %s/NAME, got %q", flag, kinds[0], arg)
	}
	for _, k := range kinds {
		if strings.EqualFold(kind, k) {
			return name, nil
		}
	}
	return "", fmt.Errorf("%s: %q is not a %s (migrate moves Deployments to CloneSets)", flag, kind, kinds[0])
}

type migration struct {
	c                    client.Client
	ns                   string
	out                  *Env
	deployment, cloneSet string
	stepTimeout          time.Duration
}

func (m *migration) logf(format string, args ...any) {
	fmt.Fprintf(m.out.Streams.Out, format+"\n", args...)
}

func (m *migration) run(ctx context.Context, stepFlag string) error {
	d := &appsv1.Deployment{}
	if err := m.c.Get(ctx, client.ObjectKey{Namespace: m.ns, Name: m.deployment}, d); err != nil {
		return fmt.Errorf("read deployment %q: %w", m.deployment, err)
	}
	if _, err := stepSize(stepFlag, ptr.Deref(d.Spec.Replicas, 1)); err != nil { // before anything is made
		return err
	}
	cs, err := m.ensureCloneSet(ctx, d)
	if err != nil {
		return err
	}
	moved := ptr.Deref(cs.Spec.Replicas, 0)
	total64, err := strconv.ParseInt(cs.Annotations[MigrationReplicasAnnotation], 10, 32)
	if err != nil {
		return fmt.Errorf("cloneset %q: annotation %s: %w", cs.Name, MigrationReplicasAnnotation, err)
	}
	total := int32(total64)
	step, err := stepSize(stepFlag, total)
	if err != nil {
		return err
	}
	steps := MigrationSteps(total, step, moved)
	m.logf("migrating %d pod(s) from deployment/%s to cloneset/%s in %d step(s) of up to %d", total, d.Name, cs.Name, len(steps), step)
	for i, s := range steps {
		t0 := time.Now()
		if err := m.scaleCloneSet(ctx, s.CloneSet); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
		if err := m.scaleDeployment(ctx, s.Deployment); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
		m.logf("step %d/%d: cloneset/%s %d available, deployment/%s %d (%.1fs)", i+1, len(steps), cs.Name, s.CloneSet, d.Name, s.Deployment, time.Since(t0).Seconds())
	}
	if len(steps) == 0 { // resumed after the last step: make sure the Deployment is down
		if err := m.scaleDeployment(ctx, 0); err != nil {
			return err
		}
	}
	m.logf("migrated: cloneset/%s runs %d pod(s); deployment/%s has 0 replicas and can be deleted", cs.Name, total, d.Name)
	return nil
}

// stepSize reads --step (a count, or a percentage of total rounded up) as a pod count.
func stepSize(flag string, total int32) (int32, error) {
	v := intstr.Parse(flag)
	// Of 100 the value is itself: a count or percentage below 1 is refused, whatever total is.
	if n, err := intstr.GetScaledValueFromIntOrPercent(&v, 100, true); err != nil || n < 1 {
		return 0, fmt.Errorf("--step must be a positive count or percentage, got %q", flag)
	}
	step, _ := intstr.GetScaledValueFromIntOrPercent(&v, int(total), true)
	return int32(max(step, 1)), nil
}

// ensureCloneSet creates the CloneSet from the Deployment with 0 replicas, or finds the one a
// stopped migration of the same Deployment created.
func (m *migration) ensureCloneSet(ctx context.Context, d *appsv1.Deployment) (*appsv1alpha1.CloneSet, error) {
	source := "deployment/" + d.Name
	cs := &appsv1alpha1.CloneSet{}
	err := m.c.Get(ctx, client.ObjectKey{Namespace: m.ns, Name: m.cloneSet}, cs)
	switch {
	case err == nil && cs.Annotations[MigratedFromAnnotation] == source:
		m.logf("cloneset/%s exists (made by a migration from %s): resuming", cs.Name, source)
		return cs, nil
	case err == nil:
		return nil, fmt.Errorf("cloneset %q already exists and was not made by migrating %s: pick another --to", m.cloneSet, source)
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	cs = CloneSetFromDeployment(d, m.cloneSet)
	if err := m.c.Create(ctx, cs); err != nil {
		return nil, fmt.Errorf("create cloneset %q: %w", m.cloneSet, err)
	}
	m.logf("cloneset.apps.kruise.io/%s created (0 replicas, the deployment's selector and template)", cs.Name)
	return cs, nil
}

// CloneSetFromDeployment is the CloneSet that takes d's pods over: d's selector, pod template,
// minReadySeconds, history limit, progress deadline and maxUnavailable, in-place updates where
// possible, and 0 replicas to start from. It does not adopt d's pods (they have a controller).
func CloneSetFromDeployment(d *appsv1.Deployment, name string) *appsv1alpha1.CloneSet {
	cs := &appsv1alpha1.CloneSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.Namespace, Labels: d.Labels,
			Annotations: map[string]string{MigratedFromAnnotation: "deployment/" + d.Name,
				MigrationReplicasAnnotation: strconv.Itoa(int(ptr.Deref(d.Spec.Replicas, 1)))}},
		Spec: appsv1alpha1.CloneSetSpec{
			Replicas:                ptr.To[int32](0),
			Selector:                d.Spec.Selector.DeepCopy(),
			Template:                *d.Spec.Template.DeepCopy(),
			MinReadySeconds:         d.Spec.MinReadySeconds,
			RevisionHistoryLimit:    d.Spec.RevisionHistoryLimit,
			ProgressDeadlineSeconds: d.Spec.ProgressDeadlineSeconds,
			UpdateStrategy:          appsv1alpha1.CloneSetUpdateStrategy{Type: appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType},
		},
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		cs.Spec.UpdateStrategy.MaxUnavailable = ptr.To(*ru.MaxUnavailable)
	}
	return cs
}

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

// wait polls cond every 500 ms for up to the step timeout.
func (m *migration) wait(ctx context.Context, what string, cond func() (bool, string, error)) error {
	ctx, cancel := context.WithTimeout(ctx, m.stepTimeout)
	defer cancel()
	last := ""
	for {
		ok, state, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		last = state
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %s after %s (the migration stops here; run it again to resume)", what, last, m.stepTimeout)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
