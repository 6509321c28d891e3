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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// of its topology's subsets (those no subset names last, by name).
func subsetWorkloads(ctx context.Context, c client.Client, ud *appsv1alpha1.UnitedDeployment) ([]subsetWorkload, error) {
	list, items, err := subsetList(ud)
	if err != nil {
		return nil, err
	}
	if err := c.List(ctx, list, client.InNamespace(ud.Namespace)); err != nil {
		return nil, err
	}
	order := map[string]int{}
	for i, s := range ud.Spec.Topology.Subsets {
		order[s.Name] = i
	}
	var out []subsetWorkload
	for _, s := range items() {
		if !metav1.IsControlledBy(s.obj, ud) || s.obj.GetDeletionTimestamp() != nil {
			continue
		}
		s.subset = s.obj.GetLabels()[uniteddeployment.SubsetNameLabel]
		if gvks, _, err := c.Scheme().ObjectKinds(s.obj); err == nil {
			s.obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		}
		out = append(out, s)
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

// subsetList is the list to read ud's subset workloads into, by the kind its template names,
// and the function that gives them once read, each with how it restarts.
func subsetList(ud *appsv1alpha1.UnitedDeployment) (client.ObjectList, func() []subsetWorkload, error) {
	tpl := ud.Spec.Template
	switch {
	case tpl.CloneSetTemplate != nil:
		l := &appsv1alpha1.CloneSetList{}
		return l, func() (out []subsetWorkload) {
			for i := range l.Items {
				w := cloneSetWorkload{&l.Items[i]}
				out = append(out, subsetWorkload{obj: w.cs, restart: w.restart})
			}
			return out
		}, nil
	case tpl.AdvancedStatefulSetTemplate != nil:
		l := &v1beta1.StatefulSetList{}
		return l, func() (out []subsetWorkload) {
			for i := range l.Items {
				w := statefulSetWorkload{&l.Items[i]}
				out = append(out, subsetWorkload{obj: w.set, restart: w.restart})
			}
			return out
		}, nil
	case tpl.StatefulSetTemplate != nil:
		l := &appsv1.StatefulSetList{}
		return l, func() (out []subsetWorkload) {
			for i := range l.Items {
				s := &l.Items[i]
				out = append(out, subsetWorkload{obj: s, restart: nativeRestart(s, &s.Spec.Template)})
			}
			return out
		}, nil
	case tpl.DeploymentTemplate != nil:
		l := &appsv1.DeploymentList{}
		return l, func() (out []subsetWorkload) {
			for i := range l.Items {
				d := &l.Items[i]
				out = append(out, subsetWorkload{obj: d, restart: nativeRestart(d, &d.Spec.Template)})
			}
			return out
		}, nil
	}
	return nil, nil, fmt.Errorf("uniteddeployment %q has no workload template", ud.Name)
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
