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
)

// Kind is a kind of workload kubectl-kruise drives.
type Kind struct {
	// Noun names one object of the kind in messages: `cloneset "web"`.
	Noun string
	// Resource is the kind's resource as kubectl prints it: cloneset.apps.kruise.io/web.
	Resource string
	// names are what KIND may be in KIND/NAME, lower case.
	names []string
	new   func() workload
}

// The kinds kubectl-kruise drives. An apps/v1 StatefulSet is not one of them, so the plain
// "statefulset" and "sts" are refused as ambiguous rather than read as the Advanced StatefulSet.
var (
	CloneSetKind = &Kind{Noun: "cloneset", Resource: "cloneset.apps.kruise.io",
		names: []string{"clone", "clones", "cloneset", "clonesets", "cloneset.apps.kruise.io", "clonesets.apps.kruise.io"},
		new:   newCloneSetWorkload}
	StatefulSetKind = &Kind{Noun: "advanced statefulset", Resource: "statefulset.apps.kruise.io",
		names: []string{"asts", "advancedstatefulset", "advancedstatefulsets", "statefulset.apps.kruise.io", "statefulsets.apps.kruise.io"},
		new:   newStatefulSetWorkload}
	kinds = []*Kind{CloneSetKind, StatefulSetKind, DaemonSetKind}
)

// workloadUse is the argument every workload command takes, for its Use line.
const workloadUse = "(clone|asts|ads)/NAME"

// ParseWorkload reads KIND/NAME or, with two arguments, KIND NAME, where KIND names a CloneSet
// (clone, cloneset, cloneset.apps.kruise.io, ...), an Advanced StatefulSet (asts,
// advancedstatefulset, statefulset.apps.kruise.io, ...) or an Advanced DaemonSet (ads, daemon,
// daemonset.apps.kruise.io, ...). Other kinds are refused with what is supported.
func ParseWorkload(args []string) (*Kind, string, error) {
	kind, name, ok := splitKindName(args)
	if !ok {
		return nil, "", fmt.Errorf("name a workload as KIND/NAME or KIND NAME, e.g. clone/web or asts/web")
	}
	k := kindNamed(kind)
	switch {
	case k == nil && slices.Contains([]string{"sts", "statefulset", "statefulsets"}, strings.ToLower(kind)):
		return nil, "", fmt.Errorf("kind %q is ambiguous: name an Advanced StatefulSet asts/NAME or statefulset.apps.kruise.io/NAME "+
			"(kubectl-kruise does not drive apps/v1 StatefulSets)", kind)
	case k == nil && appsDaemonSetName(kind):
		return nil, "", ambiguousDaemonSet(kind)
	case k == nil:
		return nil, "", fmt.Errorf("kind %q is not supported yet: kubectl-kruise drives CloneSets (clone/NAME), Advanced StatefulSets (asts/NAME) "+
			"and Advanced DaemonSets (ads/NAME)", kind)
	case name == "":
		return nil, "", fmt.Errorf("the workload's name is empty")
	}
	return k, name, nil
}

func kindNamed(name string) *Kind {
	for _, k := range kinds {
		if slices.Contains(k.names, strings.ToLower(name)) {
			return k
		}
	}
	return nil
}

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
	// revisions are the status's current and update revisions.
	revisions() (current, update string)
	// restart restarts the workload's pods, reporting to out.
	restart(ctx context.Context, c client.Client, out io.Writer) error
	// forecast is the rollout's next steps, from the controller's own planner.
	forecast(ctx context.Context, c client.Client, now time.Time, o planOptions) (*forecast, error)
}

// ref names w as kubectl prints it: cloneset.apps.kruise.io/web.
func ref(w workload) string { return w.kind().Resource + "/" + w.object().GetName() }

// target reads the workload the arguments name and the namespace of the flags, and gives a
// client.
func (e *Env) target(args []string) (client.Client, *Kind, client.ObjectKey, error) {
	k, name, err := ParseWorkload(args)
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

// patchTemplate reads the workload the arguments name, lets change modify its pod template and
// patches the difference.
func (e *Env) patchTemplate(ctx context.Context, args []string, change func(workload) error) (workload, error) {
	c, w, err := e.load(ctx, args)
	if err != nil {
		return nil, err
	}
	before := w.object().DeepCopyObject().(client.Object)
	if err := change(w); err != nil {
		return nil, err
	}
	return w, c.Patch(ctx, w.object(), client.MergeFrom(before))
}
