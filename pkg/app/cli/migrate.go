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
	return MigrationStepsUpTo(total, total, step, cloneSet)
}

// MigrationStepsUpTo is MigrationSteps stopping once the CloneSet runs upTo of the total pods
// (a partial move, --replicas): the Deployment keeps the others.
func MigrationStepsUpTo(total, upTo, step, cloneSet int32) []MigrationStep {
	step, upTo = max(step, 1), min(upTo, total)
	var steps []MigrationStep
	for c := cloneSet; c < upTo; {
		c = min(c+step, upTo)
		steps = append(steps, MigrationStep{CloneSet: c, Deployment: total - c})
	}
	return steps
}

func newMigrateCommand(env *Env) *cobra.Command {
	var f migrateFlags
	cmd := &cobra.Command{
		Use:   "migrate --from deployment/NAME --to cloneset/NAME  |  migrate CloneSet --from Deployment --src-name NAME --dst-name NAME",
		Short: "Move a Deployment's pods to a new CloneSet step by step, without downtime",
		Long: "Creates a CloneSet with the Deployment's selector and pod template (updated in place from then on), " +
			"then raises the CloneSet and lowers the Deployment --step pods at a time: each step waits until the " +
			"CloneSet's new pods are available before it removes as many of the Deployment's. The Deployment is " +
			"left with 0 replicas (delete it once you are satisfied). Run it again to resume a stopped migration.\n\n" +
			"OpenKruise's kubectl-kruise form works too: migrate CloneSet --from Deployment --src-name D --dst-name C, " +
			"with --create (only create the CloneSet, with 0 replicas; run again without it to move the pods), " +
			"--max-surge N (the same as --step N; 1 by default in this form, as there), --replicas N (a partial move: " +
			"stop once the CloneSet runs N of the Deployment's pods, the Deployment keeping the rest; run again with a " +
			"larger N, or -1 for all, to go on) and --timeout-seconds (a deadline for the whole migration). " +
			"--copy is refused (see --step 100%).",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := f.plan(args, func(name string) bool { return cmd.Flags().Changed(name) }, env.parseWorkload)
			if err != nil {
				return err
			}
			c, ns, err := env.Client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if p.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, p.timeout)
				defer cancel()
			}
			m := &migration{c: c, ns: ns, out: env, deployment: p.deployment, cloneSet: p.cloneSet, stepTimeout: f.stepTimeout,
				timeout: p.timeout, replicas: p.replicas}
			if p.createOnly {
				return m.create(ctx, p.step)
			}
			return m.run(ctx, p.step)
		},
	}
	f.add(cmd.Flags())
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
	// stepTimeout bounds each step (0: no bound), timeout the whole migration (0: none).
	stepTimeout, timeout time.Duration
	// replicas is the pods to move, when given (--replicas): -1 for all of them.
	replicas int32
}

func (m *migration) logf(format string, args ...any) {
	fmt.Fprintf(m.out.Streams.Out, format+"\n", args...)
}

// prepare reads the Deployment and the CloneSet a stopped migration of it made (nil when there
// is none), and checks the flags against the pods to move before anything is made.
func (m *migration) prepare(ctx context.Context, stepFlag string) (*appsv1.Deployment, *appsv1alpha1.CloneSet, int32, error) {
	d := &appsv1.Deployment{}
	if err := m.c.Get(ctx, client.ObjectKey{Namespace: m.ns, Name: m.deployment}, d); err != nil {
		return nil, nil, 0, fmt.Errorf("read deployment %q: %w", m.deployment, err)
	}
	cs, err := m.madeCloneSet(ctx, d)
	if err != nil {
		return nil, nil, 0, err
	}
	total := ptr.Deref(d.Spec.Replicas, 1)
	if cs != nil {
		total64, err := strconv.ParseInt(cs.Annotations[MigrationReplicasAnnotation], 10, 32)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("cloneset %q: annotation %s: %w", cs.Name, MigrationReplicasAnnotation, err)
		}
		total = int32(total64)
	}
	if m.replicas > total {
		return nil, nil, 0, fmt.Errorf("--replicas %d: deployment %q has %d pods to move: give at most %d (or -1 for all)",
			m.replicas, d.Name, total, total)
	}
	step, err := stepSize(stepFlag, total)
	return d, cs, step, err
}

// create makes the CloneSet only (OpenKruise's --create): 0 replicas, the Deployment untouched.
func (m *migration) create(ctx context.Context, stepFlag string) error {
	d, cs, _, err := m.prepare(ctx, stepFlag)
	if err != nil {
		return err
	}
	if cs == nil {
		if cs, err = m.createCloneSet(ctx, d); err != nil {
			return err
		}
	}
	m.logf("run kubectl kruise migrate --from deployment/%s --to cloneset/%s to move the pods (%s of them)", d.Name, cs.Name,
		cs.Annotations[MigrationReplicasAnnotation])
	return nil
}

func (m *migration) run(ctx context.Context, stepFlag string) error {
	d, cs, step, err := m.prepare(ctx, stepFlag)
	if err != nil {
		return err
	}
	if cs == nil {
		if cs, err = m.createCloneSet(ctx, d); err != nil {
			return err
		}
	} else {
		m.logf("resuming")
	}
	total, _ := strconv.Atoi(cs.Annotations[MigrationReplicasAnnotation])
	goal := int32(total)
	if m.replicas >= 0 {
		goal = m.replicas
	}
	moved := ptr.Deref(cs.Spec.Replicas, 0)
	steps := MigrationStepsUpTo(int32(total), goal, step, moved)
	if goal < int32(total) {
		m.logf("a partial move: %d of the %d pod(s)", goal, total)
	}
	m.logf("migrating %d pod(s) from deployment/%s to cloneset/%s in %d step(s) of up to %d", max(goal-moved, 0), d.Name, cs.Name, len(steps), step)
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
	if goal < int32(total) {
		m.logf("moved: cloneset/%s runs %d of the %d pod(s), deployment/%s %d; run migrate again with a larger --replicas, "+
			"or without it, to move the rest", cs.Name, max(goal, moved), total, d.Name, int32(total)-max(goal, moved))
		return nil
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

// madeCloneSet is the CloneSet a stopped migration of d made, nil when there is no CloneSet of
// that name; one it did not make is an error.
func (m *migration) madeCloneSet(ctx context.Context, d *appsv1.Deployment) (*appsv1alpha1.CloneSet, error) {
	source := "deployment/" + d.Name
	cs := &appsv1alpha1.CloneSet{}
	err := m.c.Get(ctx, client.ObjectKey{Namespace: m.ns, Name: m.cloneSet}, cs)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case cs.Annotations[MigratedFromAnnotation] != source:
		return nil, fmt.Errorf("cloneset %q already exists and was not made by migrating %s: pick another --to", m.cloneSet, source)
	}
	m.logf("cloneset/%s exists (made by a migration from %s)", cs.Name, source)
	return cs, nil
}

// createCloneSet creates the CloneSet from the Deployment, with 0 replicas.
func (m *migration) createCloneSet(ctx context.Context, d *appsv1.Deployment) (*appsv1alpha1.CloneSet, error) {
	cs := CloneSetFromDeployment(d, m.cloneSet)
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
