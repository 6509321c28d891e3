package cli

import (
	"context"
	"io"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kind is a kind of workload kubectl-kruise drives.
type Kind struct {
	// Noun names one object of the kind in messages: `cloneset "web"`.
	Noun string
	// Resource is the kind's resource as kubectl prints it: cloneset.apps.kruise.io/web.
	Resource string
	// gk is the kind's API group and kind, as discovery resolves a TYPE to it.
	gk schema.GroupKind
	// names are what KIND may be in KIND/NAME, lower case, when discovery cannot be asked (the
	// names of Kruise's CRD) or does not know it (Kruise's own aliases).
	names []string
	new   func() workload
}

// The kinds kubectl-kruise drives. An apps/v1 StatefulSet is not one of them: "statefulset" and
// "sts" name it, as kubectl resolves them, and are refused naming the Advanced StatefulSet's form.
var (
	CloneSetKind = &Kind{Noun: "cloneset", Resource: "cloneset.apps.kruise.io", gk: schema.GroupKind{Group: kruiseGroup, Kind: "CloneSet"},
		names: []string{"clone", "clones", "cloneset", "clonesets", "cloneset.apps.kruise.io", "clonesets.apps.kruise.io"},
		new:   newCloneSetWorkload}
	StatefulSetKind = &Kind{Noun: "advanced statefulset", Resource: "statefulset.apps.kruise.io", gk: schema.GroupKind{Group: kruiseGroup, Kind: "StatefulSet"},
		names: []string{"asts", "advancedstatefulset", "advancedstatefulsets", "statefulset.apps.kruise.io", "statefulsets.apps.kruise.io"},
		new:   newStatefulSetWorkload}
	kinds = []*Kind{CloneSetKind, StatefulSetKind, DaemonSetKind}
)

// workloadUse is the argument every workload command takes, for its Use line.
const workloadUse = "(clone|asts|ads)/NAME"

// workload is one object of a kind kubectl-kruise drives, read from the API server. The rollout
// and set commands reach the kind's fields only through it.
type workload interface {
	// object is the API object, for Get and Patch.
	object() client.Object
	kind() *Kind
	// status describes the rollout in one line and reports whether it is done; an error when it
	// cannot be watched, ErrStuck when it is stuck.
	status() (msg string, done bool, err error)
	// pausePatch is the merge patch that pauses (or resumes) the rollout, or why it cannot be.
	pausePatch(pause bool) (string, error)
	// template is the pod template: set image and undo change it.
	template() *corev1.PodTemplateSpec
	// selector selects the workload's pods.
	selector() *metav1.LabelSelector
	// revisions are the status's current and update revisions.
	revisions() (current, update string)
	// restart restarts the workload's pods as o asks, reporting to out.
	restart(ctx context.Context, c client.Client, out io.Writer, o restartOptions) error
	// forecast is the rollout's next steps, from the controller's own planner.
	forecast(ctx context.Context, c client.Client, now time.Time, o planOptions) (*forecast, error)
}

// kruiseGroup is the API group of Kruise's workloads.
const kruiseGroup = "apps.kruise.io"

// ref names w as kubectl prints it: cloneset.apps.kruise.io/web.
func ref(w workload) string { return w.kind().Resource + "/" + w.object().GetName() }

// target reads the workload the arguments name and the namespace of the flags, or the workload a
// manifest file names (Env.named), and gives a client.
func (e *Env) target(args []string) (client.Client, *Kind, client.ObjectKey, error) {
	if n := e.named; n != nil {
		c, _, err := e.Client()
		return c, n.kind, n.key, err
	}
	k, name, err := e.parseWorkload(args)
	if err != nil {
		return nil, nil, client.ObjectKey{}, err
	}
	c, ns, err := e.Client()
	if err != nil {
		return nil, nil, client.ObjectKey{}, err
	}
	return c, k, client.ObjectKey{Namespace: ns, Name: name}, nil
}

// getWorkload reads the workload key of kind k.
func getWorkload(ctx context.Context, c client.Client, k *Kind, key client.ObjectKey) (workload, error) {
	w := k.new()
	if err := c.Get(ctx, key, w.object()); err != nil {
		return nil, err
	}
	return w, nil
}

// load reads the workload the arguments name.
func (e *Env) load(ctx context.Context, args []string) (client.Client, workload, error) {
	c, k, key, err := e.target(args)
	if err != nil {
		return nil, nil, err
	}
	w, err := getWorkload(ctx, c, k, key)
	return c, w, err
}

// history is the revisions the workload owns, oldest first.
func history(ctx context.Context, c client.Client, owner client.Object) ([]*appsv1.ControllerRevision, error) {
	list := &appsv1.ControllerRevisionList{}
	if err := c.List(ctx, list, client.InNamespace(owner.GetNamespace())); err != nil {
		return nil, err
	}
	var out []*appsv1.ControllerRevision
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], owner) {
			out = append(out, &list.Items[i])
		}
	}
	slices.SortFunc(out, func(a, b *appsv1.ControllerRevision) int { return int(a.Revision - b.Revision) })
	return out, nil
}
