// Package engine carries out the in-place update protocol on live pods, for every workload
// controller (CloneSet today; Advanced StatefulSet and Advanced DaemonSet next). pkg/inplace is its
// pure planner; this package adds the writes and the completion check:
//
//  1. CanUpdateInPlace: can a pod of one revision move to another in place, and with what changes.
//  2. Update: InPlaceUpdateReady (and Ready) False through pods/status when containers restart,
//     then one JSON patch of the spec that tests the revision label and the images it relies on, sets
//     the new images, labels, annotations, the revision label and apps.kruise.io/inplace-update-state.
//  3. Refresh: once every restarted container runs an image whose ID differs from the one recorded
//     before the update, InPlaceUpdateReady goes back to True.
//
// Conditions are written with strategic-merge patches of pods/status (merged by type, so the
// kubelet's concurrent status writes never conflict with them); nothing here uses a
// resourceVersion precondition.
package engine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/inplace"
)

// Engine is the in-place update protocol for one pod at a time. Implementations are safe for
// concurrent use; a workload controller calls them for many pods in parallel.
type Engine interface {
	// CanUpdateInPlace decides whether a pod of oldTemplate's revision can move to newTemplate
	// (revision newRevision) in place, and if so with which changes.
	CanUpdateInPlace(oldTemplate, newTemplate *corev1.PodTemplateSpec, newRevision string) inplace.Decision
	// Update starts the in-place update of pod to spec; reason goes with the condition.
	Update(ctx context.Context, pod *corev1.Pod, spec *inplace.UpdateSpec, reason string) error
	// Refresh finishes the update of a pod whose containers all run again, and reports where the
	// pod stands.
	Refresh(ctx context.Context, pod *corev1.Pod) (Progress, error)
}

// New returns the Engine that writes through c.
func New(c client.Client, clk clock.PassiveClock, opts inplace.Options) Engine {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &engine{client: c, clock: clk, opts: opts}
}

type engine struct {
	client client.Client
	clock  clock.PassiveClock
	opts   inplace.Options
}

func (e *engine) CanUpdateInPlace(oldTemplate, newTemplate *corev1.PodTemplateSpec, newRevision string) inplace.Decision {
	return inplace.Plan(oldTemplate, newTemplate, newRevision, e.opts)
}

func (e *engine) Update(ctx context.Context, pod *corev1.Pod, spec *inplace.UpdateSpec, reason string) error {
	if spec == nil {
		return fmt.Errorf("update pod %s in place: no update spec", pod.Name)
	}
	state := &appspub.InPlaceUpdateState{Revision: spec.Revision, UpdateTimestamp: metav1.NewTime(e.clock.Now()),
		UpdateImages: len(spec.ContainerImages) > 0, LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{}}
	for _, c := range pod.Status.ContainerStatuses {
		if _, ok := spec.ContainerImages[c.Name]; ok {
			state.LastContainerStatuses[c.Name] = appspub.InPlaceUpdateContainerStatus{ImageID: c.ImageID}
		}
	}
	if state.UpdateImages {
		if err := e.setGate(ctx, pod, corev1.ConditionFalse, "StartInPlaceUpdate", reason); err != nil {
			return err
		}
	}
	patch, err := inplace.SpecPatch(pod, spec, state)
	if err != nil {
		return err
	}
	if err := e.client.Patch(ctx, Ref(pod), client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return fmt.Errorf("update pod %s in place: %w", pod.Name, err)
	}
	return nil
}

func (e *engine) Refresh(ctx context.Context, pod *corev1.Pod) (Progress, error) {
	p := Observe(pod)
	if p != Completed {
		return p, nil
	}
	return Completed, e.setGate(ctx, pod, corev1.ConditionTrue, "InPlaceUpdateCompleted", "")
}

// setGate writes the pod's InPlaceUpdateReady condition (with Ready when False) through
// pods/status; a pod that is gone is not an error.
func (e *engine) setGate(ctx context.Context, pod *corev1.Pod, status corev1.ConditionStatus, reason, msg string) error {
	patch, err := inplace.ConditionPatch(appspub.InPlaceUpdateReady, status, reason, msg, e.clock.Now())
	if err != nil {
		return err
	}
	if err := e.client.Status().Patch(ctx, Ref(pod), client.RawPatch(types.StrategicMergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("set %s=%s on pod %s: %w", appspub.InPlaceUpdateReady, status, pod.Name, err)
	}
	return nil
}

// Ref is a pod's identity alone, for a write: a client call decodes the API server's answer into
// the object it is given, and the pods a controller observes may be its informer cache's own.
func Ref(pod *corev1.Pod) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID}}
}
