package podcontrol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/holders"
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
	"github.com/kruise-ng/kruise/pkg/core/podgate"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/rolloutmetrics"
)

// Control writes the pods of workloads. It is safe for concurrent use.
type Control struct {
	Client client.Client
	Clock  clock.PassiveClock
	// Engine carries out in-place updates.
	Engine engine.Engine
	// Expectations record every write before it is sent.
	Expectations *Expectations
	// Recorder receives the events; nil drops them.
	Recorder events.EventRecorder
	// APIReader reads around the cache (nil: the cache's view only), e.g. whether an owner about
	// to adopt is being deleted (CanAdopt).
	APIReader client.Reader
	// Updates, if set, receive the in-place updates UpdateInPlaceAll leaves to finish in the
	// background (the workloads of pkg/machinery/workloadloop); nil: they finish before it
	// returns (the SidecarSet's upgrades).
	Updates *Updates
}

// Owner is the workload a write is made for.
type Owner struct {
	// Object is the workload; its namespace/name keys the expectations.
	Object client.Object
	// GVK is the workload's kind, for the controller reference of the pods it creates.
	GVK schema.GroupVersionKind
	// Lifecycle is the workload's spec.lifecycle (nil: no hooks).
	Lifecycle *appspub.Lifecycle
	// PreparingNormal starts every new pod in PreparingNormal whatever the hooks, as OpenKruise's
	// CloneSet does (its planner moves them to Normal); without it a pod starts Normal unless a
	// preNormal hook holds it.
	PreparingNormal bool
	// Updating moves every in-place update through Updating whatever the hooks, as OpenKruise's
	// CloneSet and Advanced StatefulSet do (back to Normal, or Updated, in the write that ends the
	// update); without it only a workload with hooks writes Updating.
	Updating bool
	// GraceSeconds is inPlaceUpdateStrategy.gracePeriodSeconds.
	GraceSeconds int32
	// Metrics is the workload's rollout metrics.
	Metrics rolloutmetrics.Workload
}

// Key is the owner's namespace/name, the key of its expectations.
func (o Owner) Key() string { return o.Object.GetNamespace() + "/" + o.Object.GetName() }

// Event records an event on the owner.
func (c *Control) Event(o Owner, typ, reason, format string, args ...any) {
	if c.Recorder != nil {
		c.Recorder.Eventf(o.Object, nil, typ, reason, reason, format, args...)
	}
}

// Create creates pod (built by the workload from the revision's template: name, namespace,
// labels and volumes of its own) as a pod of revision rev: with the revision labels, the lifecycle
// state (PreparingNormal while a preNormal hook holds it, or always with o.PreparingNormal), the
// controller reference, the readiness gates, and then opens the gates.
func (c *Control) Create(ctx context.Context, o Owner, pod *corev1.Pod, rev, reason string, done *Batch) error {
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	maps.Copy(pod.Labels, c.Engine.RevisionLabels(rev))
	hooks := lifecycle.Hooks(o.Lifecycle)
	state, holdNotReady := appspub.LifecycleStateNormal, false
	if !lifecycle.Released(hooks.PreNormal, pod) {
		state, holdNotReady = appspub.LifecycleStatePreparingNormal, hooks.PreNormal.MarkPodNotReady
	} else if o.PreparingNormal {
		state = appspub.LifecycleStatePreparingNormal
	}
	stateLabels, stateAnnotations := lifecycle.Metadata(state, c.Clock.Now())
	maps.Copy(pod.Labels, stateLabels)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	maps.Copy(pod.Annotations, stateAnnotations)
	pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(o.Object, o.GVK)}
	if !podgate.Has(pod, appspub.InPlaceUpdateReady) {
		pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: appspub.InPlaceUpdateReady})
	}
	podgate.AddKruisePodReady(pod) // as the pod webhook would: the pod does not depend on it
	key := o.Key()
	c.Expectations.ExpectCreate(key, pod.Name, c.Clock.Now())
	if err := c.Client.Create(ctx, pod); err != nil {
		c.Expectations.Drop(key, pod.Name)
		c.Event(o, corev1.EventTypeWarning, "FailedCreate", "create pod %s: %v", pod.Name, err)
		return fmt.Errorf("create pod %s: %w", pod.Name, err)
	}
	done.Add("SuccessfulCreate", "created", pod.Name, fmt.Sprintf("revision %s: %s", rev, reason))
	return c.openGates(ctx, pod, state, holdNotReady)
}

// openGates opens a new pod's gates in one status write: InPlaceUpdateReady, and KruisePodReady
// when the pod has it (pod is the API server's answer) -- or holds it False, listing the hook as
// its holder, when a preNormal hook with markPodNotReady holds the pod. No reasons, as OpenKruise
// writes them.
func (c *Control) openGates(ctx context.Context, pod *corev1.Pod, state appspub.LifecycleStateType, holdNotReady bool) error {
	now := metav1.NewTime(c.Clock.Now())
	conds := []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	if podgate.HasKruisePodReady(pod) {
		ready := corev1.PodCondition{Type: appspub.KruisePodReadyConditionType, Status: corev1.ConditionTrue, LastTransitionTime: now}
		if h, ok := holders.LifecycleHook(state); ok && holdNotReady {
			ready.Status, ready.Message = corev1.ConditionFalse, holders.Format([]holders.Holder{h})
		}
		conds = append(conds, ready)
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
	if err != nil {
		return err
	}
	if err := c.Client.Status().Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("open the readiness gates of pod %s: %w", pod.Name, err)
	}
	return nil
}

// Deletion is the event a workload records for the pods it deletes: OpenKruise's reason and the
// verb of Kruise's grouped message.
type Deletion struct{ Reason, Verb string }

// The deletions workloads record, with OpenKruise v1.9.0's reason: a pod deleted (scale-in, a
// failed pod, an Advanced StatefulSet's or DaemonSet's recreating update) is SuccessfulDelete.
var (
	Deleted           = Deletion{Reason: "SuccessfulDelete", Verb: "deleted"}
	DeletedToRecreate = Deletion{Reason: "SuccessfulDelete", Verb: "recreated"}
)

// Delete deletes pod, only if it is still the pod that was planned on (UID precondition); ev is
// the event it is reported with, why the first pod's explanation.
func (c *Control) Delete(ctx context.Context, o Owner, pod *corev1.Pod, ev Deletion, why string, done *Batch) error {
	if pod == nil || pod.DeletionTimestamp != nil {
		return nil
	}
	key := o.Key()
	c.Expectations.ExpectDelete(key, pod.Name, c.Clock.Now())
	err := c.Client.Delete(ctx, engine.Ref(pod), client.Preconditions{UID: &pod.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		c.Expectations.Drop(key, pod.Name)
		c.Event(o, corev1.EventTypeWarning, "FailedDelete", "delete pod %s: %v", pod.Name, err)
		return fmt.Errorf("delete pod %s: %w", pod.Name, err)
	}
	done.Add(ev.Reason, ev.Verb, pod.Name, why)
	return nil
}

// UpdateInPlaceAll starts the engine's in-place updates of changes (those with a pod and a Spec)
// together (engine.UpdateAll): gate False, one wait for all their kubelets, then each pod's spec
// patch that checks the pod still has the revision and images it was planned against -- with the
// lifecycle state Updating when the workload has hooks or o.Updating. With Updates set, it
// returns once they are started: the wait and the writes run on in the background (Updates), and
// their failures reach the workload's next reconcile (Updates.Failed) as well as an event; without,
// it returns when every write is made, with their errors.
func (c *Control) UpdateInPlaceAll(ctx context.Context, o Owner, changes []Change, done *Batch) error {
	key, now := o.Key(), c.Clock.Now()
	background := c.Updates != nil
	var ups []engine.BatchUpdate
	var planned []Change
	for _, ch := range changes {
		if ch.Pod == nil || ch.Spec == nil {
			continue
		}
		opts := engine.UpdateOptions{Reason: ch.Reason, GraceSeconds: o.GraceSeconds}
		if o.Lifecycle != nil || o.Updating {
			opts.Labels, opts.Annotations = lifecycle.Metadata(appspub.LifecycleStateUpdating, now)
		}
		if background {
			c.Updates.start(key, ch.Pod, ch.Spec.Revision, opts, c.Engine.RevisionLabels(ch.Spec.Revision), ch.Spec.RestartsContainers())
		} else {
			c.Expectations.ExpectUpdate(key, ch.Pod.Name, ch.Spec.Revision, now)
		}
		ups = append(ups, engine.BatchUpdate{Pod: ch.Pod, Spec: ch.Spec, Opts: opts, Held: ch.Held})
		planned = append(planned, ch)
	}
	var mu sync.Mutex
	var errs []error
	update := func(done *Batch) {
		c.Engine.UpdateAll(ctx, ups, WriteParallelism, func(i int, err error) {
			ch := planned[i]
			if apierrors.IsNotFound(err) { // the pod is gone meanwhile (a scale-in, an eviction): nothing to update
				if background {
					c.Updates.drop(key, ch.Pod.Name)
				} else {
					c.Expectations.Drop(key, ch.Pod.Name)
				}
				return
			}
			if err != nil {
				if background {
					c.Updates.fail(key, ch.Pod.Name, err)
				} else {
					c.Expectations.Drop(key, ch.Pod.Name)
				}
				c.Event(o, corev1.EventTypeWarning, "FailedUpdatePodInPlace", "update pod %s in place: %v", ch.Pod.Name, err)
				o.Metrics.InPlaceFailed()
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			if background {
				c.Updates.wrote(key, ch.Pod.Name, c.Clock.Now())
			}
			o.Metrics.PodUpdated(rolloutmetrics.InPlace)
			done.Add("SuccessfulUpdatePodInPlace", "updated in place", ch.Pod.Name, fmt.Sprintf("to revision %s: %s", ch.Spec.Revision, ch.Reason))
		})
	}
	if len(ups) == 0 {
		return nil
	}
	if !background {
		update(done)
		return errors.Join(errs...)
	}
	// ctx is the controller's, which outlives the reconcile (no controller sets controller-runtime's
	// ReconciliationTimeout, which would end these updates with their reconcile): a manager
	// stopping ends the wait, and pods left out of service are updated by the next leader
	// (engine.Unready returns them as held).
	c.Updates.wg.Go(func() {
		later := &Batch{}
		update(later)
		later.Flush(c.Recorder, o.Object)
	})
	return nil
}
