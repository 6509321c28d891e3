package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/controller/uniteddeployment"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

// namesUnitedDeployment reports whether the arguments name a UnitedDeployment (ud/NAME, ...),
// and its name.
func namesUnitedDeployment(args []string) (string, bool) {
	kind, name, ok := splitKindName(args)
	return name, ok && slices.Contains(unitedDeploymentNames, strings.ToLower(kind))
}

// subsetWorkload is one subset's workload of a UnitedDeployment and how it restarts.
type subsetWorkload struct {
	subset  string
	obj     client.Object
	restart func(ctx context.Context, c client.Client, out io.Writer, o restartOptions) error
}

// restartUnitedDeployment restarts each subset's workload, in the topology's order, the way
// rollout restart restarts that kind: a CloneSet's containers in place (or, with --recreate, by
// its rolling update), an Advanced StatefulSet by its template's restartedAt annotation, and a
// native StatefulSet or Deployment by that annotation too, as kubectl restarts them. The
// UnitedDeployment controller rewrites a subset's workload only when its own template,
// replicas or partition change, so the annotation stays.
func restartUnitedDeployment(ctx context.Context, c client.Client, key client.ObjectKey, out io.Writer, o restartOptions) error {
	ud := &appsv1alpha1.UnitedDeployment{}
	if err := c.Get(ctx, key, ud); err != nil {
		return err
	}
	subsets, err := subsetWorkloads(ctx, c, ud)
	if err != nil {
		return err
	}
	if len(subsets) == 0 {
		return fmt.Errorf("uniteddeployment %q has no subset workloads yet: nothing to restart", ud.Name)
	}
	for _, s := range subsets {
		fmt.Fprintf(out, "subset %s: %s %s\n", s.subset, strings.ToLower(s.obj.GetObjectKind().GroupVersionKind().Kind), s.obj.GetName())
		if err := s.restart(ctx, c, out, o); err != nil {
			return fmt.Errorf("subset %s: %w", s.subset, err)
		}
	}
	fmt.Fprintf(out, "uniteddeployment.apps.kruise.io/%s restarted: %d subsets\n", ud.Name, len(subsets))
	return nil
}

// subsetWorkloads are the workloads ud controls, of the kind its template names, in the order
// of its topology's subsets (those no subset names last, by name), each with how it restarts.
func subsetWorkloads(ctx context.Context, c client.Client, ud *appsv1alpha1.UnitedDeployment) ([]subsetWorkload, error) {
	objs, err := uniteddeployment.SubsetWorkloads(ctx, c, ud)
	if err != nil {
		return nil, err
	}
	order := map[string]int{}
	for i, s := range ud.Spec.Topology.Subsets {
		order[s.Name] = i
	}
	var out []subsetWorkload
	for _, o := range objs {
		if o.GetDeletionTimestamp() == nil {
			out = append(out, subsetWorkload{subset: o.GetLabels()[uniteddeployment.SubsetNameLabel], obj: o, restart: restartOf(o)})
		}
	}
	rank := func(s subsetWorkload) int {
		if i, ok := order[s.subset]; ok {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(out, func(a, b subsetWorkload) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a.obj.GetName(), b.obj.GetName())
	})
	return out, nil
}

// restartOf is how a subset workload restarts, as rollout restart restarts its kind.
func restartOf(o client.Object) func(context.Context, client.Client, io.Writer, restartOptions) error {
	switch w := o.(type) {
	case *appsv1alpha1.CloneSet:
		return cloneSetWorkload{w}.restart
	case *v1beta1.StatefulSet:
		return statefulSetWorkload{w}.restart
	case *appsv1.StatefulSet:
		return nativeRestart(w, &w.Spec.Template)
	case *appsv1.Deployment:
		return nativeRestart(w, &w.Spec.Template)
	}
	return func(context.Context, client.Client, io.Writer, restartOptions) error {
		return fmt.Errorf("%T cannot be restarted", o)
	}
}

// nativeRestart restarts a native StatefulSet or Deployment as kubectl rollout restart does: the
// template's restartedAt annotation, which has its controller recreate the pods.
func nativeRestart(obj client.Object, tpl *corev1.PodTemplateSpec) func(context.Context, client.Client, io.Writer, restartOptions) error {
	return func(ctx context.Context, c client.Client, out io.Writer, _ restartOptions) error {
		name := strings.ToLower(obj.GetObjectKind().GroupVersionKind().Kind) + "/" + obj.GetName()
		before := obj.DeepCopyObject().(client.Object)
		if tpl.Annotations == nil {
			tpl.Annotations = map[string]string{}
		}
		tpl.Annotations[inplace.RestartedAtAnnotation] = time.Now().Format(time.RFC3339)
		if err := c.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s restarted: its controller recreates the pods\n", name)
		return nil
	}
}
