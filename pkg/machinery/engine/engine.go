package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/podgate"
)

// Engine is the in-place update protocol, for one pod or a batch of them. Implementations are
// safe for concurrent use; a workload controller calls them for many pods in parallel.
type Engine interface {
	// CanUpdateInPlace decides whether a pod of oldTemplate's revision can move to newTemplate
	// (revision newRevision) in place, and if so with which changes.
	CanUpdateInPlace(oldTemplate, newTemplate *corev1.PodTemplateSpec, newRevision string) inplace.Decision
	// Update starts the in-place update of pod to spec: UpdateAll of one.
	Update(ctx context.Context, pod *corev1.Pod, spec *inplace.UpdateSpec, opts UpdateOptions) error
	// UpdateAll starts the in-place updates ups, at most parallelism writes at a time, and calls
	// done(i, err) for each once its spec write is made (or failed). Pods whose containers change
	// are taken out of service first (Unready; no write for a pod held already) and their kubelets
	// waited for together (each pod's spec is written the moment its own kubelet has reported it not
	// Ready, or its node's learned wait ran out, or its node is not waited for: Kubelets). done may be
	// called concurrently. It returns when every done has been called.
	UpdateAll(ctx context.Context, ups []BatchUpdate, parallelism int, done func(i int, err error))
	// RevisionLabels returns the labels that mark a pod as running revision rev (a created pod
	// carries them too).
	RevisionLabels(rev string) map[string]string
	// Refresh moves an update on: it applies a deferred update whose grace period is over, and
	// finishes the update of a pod whose containers all run again, setting done's labels and
	// annotations in the same write (the workload's lifecycle state after the update). It reports
	// where the pod stands.
	Refresh(ctx context.Context, pod *corev1.Pod, done Metadata) (inplace.Progress, error)
	// Unready sets pod's InPlaceUpdateReady False, as Update does first when containers change, and
	// Ready False too where no kubelet would report it (Kubelets.WritesReady, a pod without the
	// gate) or opts defers the update (GraceSeconds: the period runs with the pod out of service),
	// and returns the pod as it now stands, for Update: a workload updating many pods
	// unreadies them all before it updates any, so each kubelet sees its gate while the others are
	// written and Update's wait for it is short. A pod held already by an update still running is
	// returned as it is (one whose update completed is taken out again: the reconcile opened it
	// first). With a Budget (WithBudget), the budget is asked first; a refusal is a *BudgetError.
	// The pod returned shares everything but its conditions with pod: like pods read from the
	// cache, it is read-only.
	Unready(ctx context.Context, pod *corev1.Pod, opts UpdateOptions) (*corev1.Pod, error)
	// UpdateContainers sets the images of containers the pod's workload does not own (a
	// SidecarSet's sidecars) and the caller's annotations in one JSON patch that checks each
	// changed container's current image (inplace.ContainersPatch). Neither the pod's revision nor
	// its readiness gates are touched: the caller records and follows the update itself. With a
	// Budget and disrupts (the change can take the pod out of service), the budget is asked
	// first; a refusal is a *BudgetError.
	UpdateContainers(ctx context.Context, pod *corev1.Pod, images, annotations map[string]string, disrupts bool) error
}

// UpdateOptions tune one Update.
type UpdateOptions struct {
	// Reason goes with the InPlaceUpdateReady condition.
	Reason string
	// GraceSeconds (inPlaceUpdateStrategy.gracePeriodSeconds) > 0 keeps the pod NotReady that long
	// before its containers change: the update is recorded on the pod (inplace.Deferred) and applied
	// by a Refresh once the grace period is over.
	GraceSeconds int32
	// Labels and Annotations are set by the first spec write, even when the update is deferred
	// (the workload's own metadata, e.g. the lifecycle state Updating).
	Labels, Annotations map[string]string
}

// New returns the Engine that writes through c.
func New(c client.Client, clk clock.PassiveClock, opts inplace.Options, options ...Option) Engine {
	if clk == nil {
		clk = clock.RealClock{}
	}
	e := &engine{client: c, clock: clk, opts: opts}
	for _, o := range options {
		o(e)
	}
	if e.kubelets == nil {
		e.kubelets = NewKubelets(nil, nil, inplace.DefaultKubeletPolicy())
	}
	return e
}

type engine struct {
	client   client.Client
	clock    clock.PassiveClock
	opts     inplace.Options
	budget   Budget
	pods     rest.Interface // WithPodWriter; nil: client writes
	kubelets *Kubelets      // WithKubelets; by default the engine's own
}

func (e *engine) CanUpdateInPlace(oldTemplate, newTemplate *corev1.PodTemplateSpec, newRevision string) inplace.Decision {
	return inplace.Plan(oldTemplate, newTemplate, newRevision, e.opts)
}

func (e *engine) RevisionLabels(rev string) map[string]string { return e.opts.RevisionLabels(rev) }

func (e *engine) Update(ctx context.Context, pod *corev1.Pod, spec *inplace.UpdateSpec, opts UpdateOptions) error {
	var err error
	e.UpdateAll(ctx, []BatchUpdate{{Pod: pod, Spec: spec, Opts: opts}}, 1, func(_ int, werr error) { err = werr })
	return err
}

// BatchUpdate is one pod's in-place update in UpdateAll.
type BatchUpdate struct {
	Pod  *corev1.Pod
	Spec *inplace.UpdateSpec
	Opts UpdateOptions
	// Held: the caller took Pod out of service for this update already (Unready returned it);
	// it is not taken out again.
	Held bool
}

func (e *engine) UpdateAll(ctx context.Context, ups []BatchUpdate, parallelism int, done func(i int, err error)) {
	preps := make([]*prepared, len(ups))
	writes := make(chan int)
	var writers sync.WaitGroup
	for range max(parallelism, 1) {
		writers.Go(func() {
			for i := range writes {
				done(i, e.write(ctx, preps[i]))
			}
		})
	}
	// Each pod is prepared and, when its containers change, taken out of service (held already
	// when the caller did it first: no write); those that wait for their kubelet wait together.
	var mu sync.Mutex
	var waitIdx []int
	var waitPods []*corev1.Pod
	each(len(ups), max(parallelism, 1), func(i int) {
		p, err := e.prepare(ctx, ups[i])
		if err != nil {
			done(i, err)
			return
		}
		preps[i] = p
		if !p.changes || p.opts.GraceSeconds > 0 {
			writes <- i
			return
		}
		mu.Lock()
		waitIdx, waitPods = append(waitIdx, i), append(waitPods, p.pod)
		mu.Unlock()
	})
	e.awaitKubelets(ctx, waitPods, func(j int, err error) {
		if err != nil {
			done(waitIdx[j], err)
			return
		}
		writes <- waitIdx[j]
	})
	close(writes)
	writers.Wait()
}

// prepared is one in-place update ready to write: the pod as held, the spec (merged with a deferred
// one), the update state to record and the first launch-priority batch of images.
type prepared struct {
	pod     *corev1.Pod
	spec    *inplace.UpdateSpec
	opts    UpdateOptions
	state   *appspub.InPlaceUpdateState
	batch   map[string]string
	changes bool // containers change (the pod is taken out of service first)
}

// prepare decides what u writes and, when its containers change, takes its pod out of service.
func (e *engine) prepare(ctx context.Context, u BatchUpdate) (*prepared, error) {
	pod, spec, opts := u.Pod, u.Spec, u.Opts
	if spec == nil {
		return nil, fmt.Errorf("update pod %s in place: no update spec", pod.Name)
	}
	start := e.clock.Now()
	pending, err := inplace.DeferredOf(pod)
	if err != nil {
		return nil, fmt.Errorf("update pod %s in place: %w", pod.Name, err)
	}
	if pending != nil {
		// The pod still runs the containers of the update before: go there straight from them,
		// within the grace period already running.
		spec = pending.Then(spec, pod)
		if st, ok := inplace.StateOf(pod); ok {
			start = st.UpdateTimestamp.Time
		}
	}
	if pending == nil && opts.GraceSeconds > 0 {
		// The start is stored in whole seconds (the state's timestamp), and the grace period is
		// counted from it: rounded up, the period is never cut short, whoever reads it.
		if whole := start.Truncate(time.Second); whole.Before(start) {
			start = whole.Add(time.Second)
		}
	}
	state := &appspub.InPlaceUpdateState{Revision: spec.Revision, UpdateTimestamp: metav1.NewTime(start),
		UpdateImages: len(spec.ContainerImages) > 0, UpdateResources: len(spec.ContainerResources) > 0,
		LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{}}
	// Every container that restarts in this batch (the highest launch priority) is recorded, with
	// the image ID it reports now (none while it has no status): completion waits for each to run a
	// different one, and the next batch for them to be ready. A resize completes when the status
	// reports the spec's resources (Observe).
	batch, next := inplace.SplitByPriority(pod, spec.ContainerImages)
	inplace.StartBatch(pod, state, batch, next, e.clock.Now())
	// A container restarted only to read changed metadata into its env is recorded with its
	// container ID: kruise-daemon restarts it (a ContainerRecreateRequest, see Refresh).
	for _, name := range spec.EnvFromMetadataContainers {
		if _, restarts := spec.ContainerImages[name]; restarts {
			continue
		}
		state.UpdateEnvFromMetadata = true
		state.LastContainerStatuses[name] = appspub.InPlaceUpdateContainerStatus{ContainerID: inplace.ContainerID(pod, name)}
	}
	p := &prepared{pod: pod, spec: spec, opts: opts, state: state, batch: batch, changes: spec.RestartsContainers()}
	if p.changes && !u.Held {
		if p.pod, err = e.Unready(ctx, pod, opts); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// write makes p's spec write (after a resize when resources change and the update is not
// deferred): the pod's kubelet has been waited for.
func (e *engine) write(ctx context.Context, p *prepared) error {
	pod, spec, opts := p.pod, p.spec, p.opts
	if p.changes && opts.GraceSeconds <= 0 {
		// The resize first: the spec write that follows moves the revision, and a pod must not be
		// at the new revision with the old resources.
		if err := e.resize(ctx, pod, spec.ContainerResources); err != nil {
			return err
		}
	}
	var patch []byte
	var err error
	if p.changes && opts.GraceSeconds > 0 {
		labels := e.opts.RevisionLabels(spec.Revision)
		maps.Copy(labels, opts.Labels)
		patch, err = inplace.DeferPatch(pod, &inplace.Deferred{UpdateSpec: *spec, GraceSeconds: opts.GraceSeconds}, p.state,
			labels, opts.Annotations)
	} else {
		now := *spec.WithMetadata(opts.Labels, opts.Annotations)
		now.ContainerImages = p.batch
		patch, err = inplace.SpecPatch(pod, &now, p.state, e.opts.RevisionLabels(spec.Revision))
	}
	if err != nil {
		return err
	}
	if err := e.patch(ctx, pod, "", types.JSONPatchType, patch); err != nil {
		return fmt.Errorf("update pod %s in place: %w", pod.Name, err)
	}
	return nil
}

// each runs f(0..n-1), at most parallelism at a time.
func each(n, parallelism int, f func(i int)) {
	sem := make(chan struct{}, parallelism)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(i)
		})
	}
	wg.Wait()
}

func (e *engine) UpdateContainers(ctx context.Context, pod *corev1.Pod, images, annotations map[string]string, disrupts bool) error {
	if disrupts && len(images) > 0 {
		if err := e.admit(ctx, pod); err != nil {
			return err
		}
	}
	patch, err := inplace.ContainersPatch(pod, images, annotations)
	if err != nil {
		return err
	}
	if err := e.patch(ctx, pod, "", types.JSONPatchType, patch); err != nil {
		return fmt.Errorf("update the containers of pod %s in place: %w", pod.Name, err)
	}
	return nil
}

// Metadata are labels and annotations written with an engine's write.
type Metadata struct {
	Labels, Annotations map[string]string
}

func (e *engine) Refresh(ctx context.Context, pod *corev1.Pod, done Metadata) (inplace.Progress, error) {
	switch p, names := inplace.Inspect(pod); p {
	case inplace.Waiting:
		due, ok := inplace.GraceDue(pod)
		if !ok || e.clock.Now().Before(due) {
			return inplace.Waiting, nil
		}
		return inplace.Updating, e.resume(ctx, pod)
	case inplace.BatchDone:
		return inplace.Updating, e.nextBatch(ctx, pod)
	case inplace.Completed:
		return inplace.Completed, e.complete(ctx, pod, done)
	case inplace.Updating:
		if len(names) > 0 {
			return inplace.Updating, e.ensureRecreate(ctx, pod, names)
		}
		return inplace.Updating, nil
	default:
		return p, nil
	}
}

func (e *engine) Unready(ctx context.Context, pod *corev1.Pod, opts UpdateOptions) (*corev1.Pod, error) {
	// A gate False holds the pod only while the update that wrote it runs: one whose containers all
	// run again is opened by the reconcile's Progress before its updates (or was, and the cache is
	// behind), so a new update of it takes it out again.
	if heldByRunningUpdate(pod) {
		return pod, nil
	}
	if err := e.admit(ctx, pod); err != nil {
		return nil, err
	}
	// The kubelet is left to report the pod not Ready itself when it will: a Ready the engine wrote
	// is one the kubelet may overwrite with the Ready it computed before it saw the gate.
	writeReady := opts.GraceSeconds > 0 || !podgate.Has(pod, appspub.InPlaceUpdateReady) || pod.Spec.NodeName == "" ||
		e.kubelets.WritesReady(ctx, pod.Spec.NodeName, e.clock.Now())
	reason := opts.Reason
	if err := e.takeOut(ctx, pod, reason, writeReady); err != nil {
		return nil, err
	}
	// A shallow copy with its own conditions: a workload holding every pod of a rollout at once
	// (maxUnavailable 100% of 10,000) keeps a condition list each, not a copy of each pod.
	held := *pod
	held.Status.Conditions = slices.Clone(pod.Status.Conditions)
	now := metav1.NewTime(e.clock.Now())
	typs := []corev1.PodConditionType{appspub.InPlaceUpdateReady}
	if writeReady {
		typs = append(typs, corev1.PodReady)
	}
	for _, typ := range typs {
		c := corev1.PodCondition{Type: typ, Status: corev1.ConditionFalse, Reason: StartReason, Message: reason, LastTransitionTime: now}
		if i := slices.IndexFunc(held.Status.Conditions, func(x corev1.PodCondition) bool { return x.Type == typ }); i >= 0 {
			held.Status.Conditions[i] = c
		} else {
			held.Status.Conditions = append(held.Status.Conditions, c)
		}
	}
	return &held, nil
}

// heldByRunningUpdate reports whether the pod's gate is False for an update still running (not
// one whose containers all run again, which the reconcile opens).
func heldByRunningUpdate(pod *corev1.Pod) bool {
	return inplace.GateFalse(pod) && inplace.Observe(pod) != inplace.Completed
}

// resume applies the pod's deferred update (its grace period is over), keeping the pod NotReady.
func (e *engine) resume(ctx context.Context, pod *corev1.Pod) error {
	d, err := inplace.DeferredOf(pod)
	if err != nil || d == nil {
		return err
	}
	// The gate may have been opened by someone else meanwhile: the containers restart now, once
	// the pod is out again. Held all along, it needs no wait: the grace period was it, and its
	// kubelet has long seen the gate.
	held := heldByRunningUpdate(pod)
	if pod, err = e.Unready(ctx, pod, UpdateOptions{Reason: "grace period over"}); err != nil {
		return err
	}
	if !held {
		var waitErr error
		e.awaitKubelets(ctx, []*corev1.Pod{pod}, func(_ int, err error) { waitErr = err })
		if waitErr != nil {
			return waitErr
		}
	}
	if err := e.resize(ctx, pod, d.ContainerResources); err != nil {
		return err
	}
	now := *d
	now.ContainerImages, _ = inplace.SplitByPriority(pod, d.ContainerImages) // the rest: later batches (state)
	patch, err := inplace.ResumePatch(pod, &now)
	if err != nil {
		return err
	}
	if err := e.patch(ctx, pod, "", types.JSONPatchType, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("apply the deferred in-place update of pod %s: %w", pod.Name, err)
	}
	return nil
}

// nextBatch applies the next launch-priority batch of the pod's images.
func (e *engine) nextBatch(ctx context.Context, pod *corev1.Pod) error {
	state, ok := inplace.StateOf(pod)
	if !ok {
		return nil
	}
	patch, err := inplace.NextBatchPatch(pod, state, e.clock.Now())
	if err != nil {
		return err
	}
	if err := e.patch(ctx, pod, "", types.JSONPatchType, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("apply the next container batch of pod %s: %w", pod.Name, err)
	}
	return nil
}

// resize sets container resources through the pods/resize subresource (a strategic-merge patch of
// the containers, merged by name); nothing when there are none.
func (e *engine) resize(ctx context.Context, pod *corev1.Pod, resources map[string]corev1.ResourceRequirements) error {
	if len(resources) == 0 {
		return nil
	}
	var containers []map[string]any
	for _, name := range slices.Sorted(maps.Keys(resources)) {
		containers = append(containers, map[string]any{"name": name, "resources": resources[name]})
	}
	body, err := json.Marshal(map[string]any{"spec": map[string]any{"containers": containers}})
	if err != nil {
		return err
	}
	if err := e.patch(ctx, pod, "resize", types.StrategicMergePatchType, body); err != nil {
		return fmt.Errorf("resize pod %s: %w", pod.Name, err)
	}
	return nil
}

// StartReason is the reason of the InPlaceUpdateReady (and Ready) False the engine writes.
const StartReason = "StartInPlaceUpdate"

// takeOut writes the pod's InPlaceUpdateReady False through pods/status, with Ready False when
// writeReady; a pod that is gone is not an error.
func (e *engine) takeOut(ctx context.Context, pod *corev1.Pod, msg string, writeReady bool) error {
	if writeReady {
		return e.setGate(ctx, pod, corev1.ConditionFalse, StartReason, msg)
	}
	patch, err := inplace.GatePatch(appspub.InPlaceUpdateReady, StartReason, msg, e.clock.Now())
	return e.patchStatus(ctx, pod, patch, err, fmt.Sprintf("set %s=False", appspub.InPlaceUpdateReady))
}

// setReady writes the pod's Ready False through pods/status: a pod the engine left to its kubelet
// that did not report it not Ready in time; a pod that is gone is not an error.
func (e *engine) setReady(ctx context.Context, pod *corev1.Pod, msg string) error {
	patch, err := inplace.ReadyPatch(StartReason, msg, e.clock.Now())
	return e.patchStatus(ctx, pod, patch, err, "set Ready=False")
}

// setGate writes the pod's InPlaceUpdateReady condition (with Ready when False) through
// pods/status; a pod that is gone is not an error.
func (e *engine) setGate(ctx context.Context, pod *corev1.Pod, status corev1.ConditionStatus, reason, msg string) error {
	patch, err := inplace.ConditionPatch(appspub.InPlaceUpdateReady, status, reason, msg, e.clock.Now())
	return e.patchStatus(ctx, pod, patch, err, fmt.Sprintf("set %s=%s", appspub.InPlaceUpdateReady, status))
}

// patchStatus writes a strategic-merge patch (built with buildErr) to the pod's status; a pod
// that is gone is not an error, any other failure is reported as what failed on the pod.
func (e *engine) patchStatus(ctx context.Context, pod *corev1.Pod, patch []byte, buildErr error, what string) error {
	if buildErr != nil {
		return buildErr
	}
	if err := e.patch(ctx, pod, "status", types.StrategicMergePatchType, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s on pod %s: %w", what, pod.Name, err)
	}
	return nil
}

// complete turns the pod's InPlaceUpdateReady condition True through pods/status, with done's
// labels and annotations in the same patch (the status subresource of a pod writes its metadata
// too, all but the owner references); a pod that is gone is not an error.
func (e *engine) complete(ctx context.Context, pod *corev1.Pod, done Metadata) error {
	if len(done.Labels)+len(done.Annotations) == 0 {
		return e.setGate(ctx, pod, corev1.ConditionTrue, "InPlaceUpdateCompleted", "")
	}
	patch, err := inplace.ConditionPatchWithMetadata(appspub.InPlaceUpdateReady, corev1.ConditionTrue, "InPlaceUpdateCompleted", "",
		e.clock.Now(), done.Labels, done.Annotations)
	return e.patchStatus(ctx, pod, patch, err, "complete the in-place update")
}

// Ref is a pod's identity alone, for a write: a client call decodes the API server's answer into
// the object it is given, and the pods a controller observes may be its informer cache's own.
func Ref(pod *corev1.Pod) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID}}
}
