package cloneset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/controller/podreadiness"
	"github.com/kruise-ng/kruise/pkg/holders"
	"github.com/kruise-ng/kruise/pkg/inplace/engine"
	"github.com/kruise-ng/kruise/pkg/lifecycle"
	"github.com/kruise-ng/kruise/pkg/revision"
	"github.com/kruise-ng/kruise/pkg/rolloutmetrics"
)

// apply carries out the plan; it is the controller's only writer of pods and revisions. Errors are
// collected per step so that the status reports them; every write it makes is recorded in the
// expectations before the next plan.
func (r *Reconciler) apply(ctx context.Context, cs *v1alpha1.CloneSet, obs *observation, plan Plan) ApplyErrors {
	key := client.ObjectKeyFromObject(cs).String()
	var errs ApplyErrors
	if err := r.applyRevision(ctx, obs); err != nil {
		errs.Update = err
		return errs
	}
	var opens []string
	for _, name := range obs.completed {
		if !r.Expectations.Opening(key, name) { // opened already; the cache is behind
			opens = append(opens, name)
		}
	}
	errs.Update = errors.Join(errs.Update, parallel(opens, func(name string) error {
		r.Expectations.ExpectOpen(key, name, r.Clock.Now())
		if _, err := r.Engine.Refresh(ctx, obs.pods[name]); err != nil {
			r.Expectations.Drop(key, name)
			return err
		}
		return nil
	}))
	errs.Update = errors.Join(errs.Update, parallel(obs.batches, func(name string) error {
		pod := obs.pods[name]
		r.Expectations.ExpectBatch(key, name, pod.Annotations[appspub.InPlaceUpdateStateKey], r.Clock.Now())
		if _, err := r.Engine.Refresh(ctx, pod); err != nil {
			r.Expectations.Drop(key, name)
			return err
		}
		return nil
	}))
	errs.Update = errors.Join(errs.Update, parallel(obs.recreates, func(name string) error {
		_, err := r.Engine.Refresh(ctx, obs.pods[name]) // makes sure a ContainerRecreateRequest exists
		return err
	}))
	errs.Update = errors.Join(errs.Update, parallel(plan.Resumes, func(name string) error {
		r.Expectations.ExpectResume(key, name, r.Clock.Now())
		if _, err := r.Engine.Refresh(ctx, obs.pods[name]); err != nil {
			r.Expectations.Drop(key, name)
			r.event(cs, corev1.EventTypeWarning, "FailedUpdatePodInPlace", "apply the deferred in-place update of pod %s: %v", name, err)
			return err
		}
		return nil
	}))
	done := &batch{}
	defer done.flush(r, cs)
	errs.Update = errors.Join(errs.Update, parallel(plan.Lifecycle, func(m LifecycleMove) error {
		return r.moveLifecycle(ctx, key, cs, obs.pods[m.Pod], m, done)
	}))
	errs.Scale = errors.Join(errs.Scale, parallel(plan.Deletes, func(d Deletion) error {
		return r.deletePod(ctx, key, cs, obs, obs.pods[d.Pod], "Deleted", d.Reason, done)
	}))
	held, err := r.unready(ctx, cs, obs, plan.Updates)
	errs.Update = errors.Join(errs.Update, err)
	errs.Update = errors.Join(errs.Update, parallel(plan.Updates, func(u Update) error {
		if u.Mode == UpdateRecreate {
			err := r.deletePod(ctx, key, cs, obs, obs.pods[u.Pod], "Recreated", u.Reason, done)
			if err == nil {
				workload(cs.Namespace, cs.Name).PodUpdated(rolloutmetrics.Recreate)
			}
			return err
		}
		pod := obs.pods[u.Pod]
		if h := held[u.Pod]; h != nil {
			pod = h
		}
		return r.updateInPlace(ctx, key, cs, pod, u, done)
	}))
	errs.Scale = errors.Join(errs.Scale, slowStart(plan.Creates, func(c Creation) error {
		return r.createPod(ctx, key, cs, obs, c, done)
	}))
	errs.Scale = errors.Join(errs.Scale, parallel(plan.ReleaseInstanceIDs, func(id string) error {
		return r.deleteClaims(ctx, cs, obs.claims[id], "scaleStrategy.disablePVCReuse: no pod has instance "+id, done)
	}))
	errs.Scale = errors.Join(errs.Scale, r.applyOwnership(ctx, cs, obs, done))
	r.pruneRevisions(ctx, cs, obs)
	return errs
}

// unready takes the pods whose containers the updates change in place out of their Services, all
// of them before any is updated: the engine changes a pod's containers only once its kubelet has
// seen the gate, and by then most have. It returns the pods it held, as they now stand.
func (r *Reconciler) unready(ctx context.Context, cs *v1alpha1.CloneSet, obs *observation, updates []Update) (map[string]*corev1.Pod, error) {
	var mu sync.Mutex
	held := map[string]*corev1.Pod{}
	err := parallel(updates, func(u Update) error {
		pod := obs.pods[u.Pod]
		if u.Mode == UpdateRecreate || u.Spec == nil || !u.Spec.RestartsContainers() || pod == nil {
			return nil
		}
		h, err := r.Engine.Unready(ctx, pod, u.Reason)
		if err != nil {
			r.event(cs, corev1.EventTypeWarning, "FailedUpdatePodInPlace", "take pod %s out of service for its in-place update: %v", u.Pod, err)
			return err
		}
		mu.Lock()
		held[u.Pod] = h
		mu.Unlock()
		return nil
	})
	return held, err
}

// writeParallelism bounds the pod writes one reconcile issues at once: the actions of a plan are
// independent of each other, and a rollout step should take one API round trip, not one per pod.
const writeParallelism = 16

// parallel runs write for every item, at most writeParallelism at a time, and joins the errors.
func parallel[T any](items []T, write func(T) error) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, writeParallelism)
	)
	for _, it := range items {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := write(it); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// slowStart runs write for the items in batches of 1, 2, 4, … (each batch at most writeParallelism
// at a time), as the Kubernetes workload controllers create pods, and stops after the first batch
// with an error: when every create is refused (a ResourceQuota, an admission webhook) one reconcile
// sends one request and emits one event, not one per missing pod. The items not attempted are
// planned again on the next reconcile.
func slowStart[T any](items []T, write func(T) error) error {
	for size := 1; len(items) > 0; size *= 2 {
		n := min(size, len(items))
		if err := parallel(items[:n], write); err != nil {
			return err
		}
		items = items[n:]
	}
	return nil
}

// applyRevision creates the update revision, or renumbers it to be the newest.
func (r *Reconciler) applyRevision(ctx context.Context, obs *observation) error {
	if obs.newRevision == nil {
		return nil
	}
	rev := obs.newRevision.Update
	if obs.newRevision.Create {
		if err := r.Client.Create(ctx, rev); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create revision %s: %w", rev.Name, err)
		}
	} else if err := r.Client.Update(ctx, rev); err != nil {
		return fmt.Errorf("renumber revision %s: %w", rev.Name, err)
	}
	obs.revisions[rev.Name] = rev
	return nil
}

// createPod creates a pod of the given revision, named and labelled with a fresh instance ID, with
// the InPlaceUpdateReady readiness gate, and opens the gate.
func (r *Reconciler) createPod(ctx context.Context, key string, cs *v1alpha1.CloneSet, obs *observation, c Creation, done *batch) error {
	rev := obs.revisions[c.Revision]
	if rev == nil {
		return fmt.Errorf("revision %s of a new pod not found", c.Revision)
	}
	tmpl, err := revision.TemplateOf(rev)
	if err != nil {
		return err
	}
	id := c.InstanceID
	if id == "" {
		id = utilrand.String(5)
	}
	pod := &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
	pod.Name, pod.Namespace = cs.Name+"-"+id, cs.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	maps.Copy(pod.Labels, r.Engine.RevisionLabels(c.Revision))
	pod.Labels[v1alpha1.CloneSetInstanceIDLabelKey] = id
	hooks := lifecycle.Hooks(cs.Spec.Lifecycle)
	state, holdNotReady := appspub.LifecycleStateNormal, false
	if !lifecycle.Released(hooks.PreNormal, pod) {
		state, holdNotReady = appspub.LifecycleStatePreparingNormal, hooks.PreNormal.MarkPodNotReady
	}
	stateLabels, stateAnnotations := lifecycle.Metadata(state, r.Clock.Now())
	maps.Copy(pod.Labels, stateLabels)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	maps.Copy(pod.Annotations, stateAnnotations)
	pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cs, gvk)}
	hasGate := false
	for _, g := range pod.Spec.ReadinessGates {
		hasGate = hasGate || g.ConditionType == appspub.InPlaceUpdateReady
	}
	if !hasGate {
		pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: appspub.InPlaceUpdateReady})
	}
	if err := r.ensureClaims(ctx, cs, pod, id); err != nil {
		r.event(cs, corev1.EventTypeWarning, "FailedCreate", "create the PVCs of pod %s: %v", pod.Name, err)
		return err
	}
	r.Expectations.ExpectCreate(key, pod.Name, r.Clock.Now())
	if err := r.Client.Create(ctx, pod); err != nil {
		r.Expectations.Drop(key, pod.Name)
		r.event(cs, corev1.EventTypeWarning, "FailedCreate", "create pod: %v", err)
		return fmt.Errorf("create pod: %w", err)
	}
	done.add("SuccessfulCreate", "created", pod.Name, fmt.Sprintf("revision %s: %s", c.Revision, c.Reason))
	// One status write opens the gates: InPlaceUpdateReady, and KruisePodReady when the pod
	// webhook added it (pod is the API server's answer) -- or holds it False, listing the hook as
	// its holder, when a preNormal hook with markPodNotReady holds the pod. No reasons, as
	// OpenKruise writes them.
	now := r.Clock.Now()
	conds := []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)}}
	if podreadiness.HasGate(pod) {
		ready := corev1.PodCondition{Type: appspub.KruisePodReadyConditionType, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)}
		if h, ok := holders.LifecycleHook(state); ok && holdNotReady {
			ready.Status, ready.Message = corev1.ConditionFalse, holders.Format([]holders.Holder{h})
		}
		conds = append(conds, ready)
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
	if err != nil {
		return err
	}
	if err := r.Client.Status().Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("open the readiness gates of pod %s: %w", pod.Name, err)
	}
	return nil
}

// deletePod deletes pod, only if it is still the pod that was planned on (UID precondition).
// A pod the controller deletes takes its PVCs along (a pod deleted by anyone else leaves them for
// its replacement to reuse).
func (r *Reconciler) deletePod(ctx context.Context, key string, cs *v1alpha1.CloneSet, obs *observation, pod *corev1.Pod, reason, why string, done *batch) error {
	if pod == nil || pod.DeletionTimestamp != nil {
		return nil
	}
	r.Expectations.ExpectDelete(key, pod.Name, r.Clock.Now())
	err := r.Client.Delete(ctx, engine.Ref(pod), client.Preconditions{UID: &pod.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		r.Expectations.Drop(key, pod.Name)
		r.event(cs, corev1.EventTypeWarning, "FailedDelete", "delete pod %s: %v", pod.Name, err)
		return fmt.Errorf("delete pod %s: %w", pod.Name, err)
	}
	done.add(reason, strings.ToLower(reason), pod.Name, why)
	return r.deleteClaims(ctx, cs, obs.claims[pod.Labels[v1alpha1.CloneSetInstanceIDLabelKey]], "its pod "+pod.Name+" was deleted", done)
}

// updateInPlace starts the engine's in-place update of the pod (gate False, then the spec patch
// that checks the pod still has the revision and images it was planned against).
func (r *Reconciler) updateInPlace(ctx context.Context, key string, cs *v1alpha1.CloneSet, pod *corev1.Pod, u Update, done *batch) error {
	if pod == nil || u.Spec == nil {
		return nil
	}
	r.Expectations.ExpectUpdate(key, pod.Name, u.Spec.Revision, r.Clock.Now())
	opts := engine.UpdateOptions{Reason: u.Reason}
	if ips := cs.Spec.UpdateStrategy.InPlaceUpdateStrategy; ips != nil {
		opts.GraceSeconds = ips.GracePeriodSeconds
	}
	if cs.Spec.Lifecycle != nil {
		opts.Labels, opts.Annotations = lifecycle.Metadata(appspub.LifecycleStateUpdating, r.Clock.Now())
	}
	if err := r.Engine.Update(ctx, pod, u.Spec, opts); err != nil {
		r.Expectations.Drop(key, pod.Name)
		r.event(cs, corev1.EventTypeWarning, "FailedUpdatePodInPlace", "update pod %s in place: %v", pod.Name, err)
		workload(cs.Namespace, cs.Name).InPlaceFailed()
		return err
	}
	workload(cs.Namespace, cs.Name).PodUpdated(rolloutmetrics.InPlace)
	done.add("SuccessfulUpdatePodInPlace", "updated in place", pod.Name, fmt.Sprintf("to revision %s: %s", u.Spec.Revision, u.Reason))
	return nil
}

// pruneRevisions deletes the oldest revisions no pod uses beyond revisionHistoryLimit.
func (r *Reconciler) pruneRevisions(ctx context.Context, cs *v1alpha1.CloneSet, obs *observation) {
	inUse := map[string]bool{obs.snap.CurrentRevision: true, obs.snap.UpdateRevision: true}
	for _, p := range obs.snap.Pods {
		inUse[p.Revision] = true
	}
	var revs []*appsv1.ControllerRevision
	for _, rev := range obs.revisions {
		revs = append(revs, rev)
	}
	limit := int32(10)
	if obs.snap.Spec.RevisionHistoryLimit != nil {
		limit = *obs.snap.Spec.RevisionHistoryLimit
	}
	for _, rev := range revision.ToDelete(revs, inUse, limit) {
		if err := r.Client.Delete(ctx, rev); err != nil && !apierrors.IsNotFound(err) {
			r.event(cs, corev1.EventTypeWarning, "FailedDeleteRevision", "delete revision %s: %v", rev.Name, err)
		}
	}
}

// writeStatus writes status as the CloneSet's status (Reconcile calls it only for a change).
func (r *Reconciler) writeStatus(ctx context.Context, cs *v1alpha1.CloneSet, status v1alpha1.CloneSetStatus) error {
	// The whole status in one JSON patch ("add" replaces an existing member), without a
	// resourceVersion precondition: the controller is the status's only writer, so a CloneSet read
	// from a cache one write behind must not cost a conflict and a retried reconcile. (A merge patch
	// of the difference would be wrong here: computed against a stale status it would leave fields
	// of the last write in place.)
	body, err := json.Marshal([]map[string]any{{"op": "add", "path": "/status", "value": status}})
	if err != nil {
		return err
	}
	updated := cs.DeepCopy()
	if err := r.Client.Status().Patch(ctx, updated, client.RawPatch(types.JSONPatchType, body)); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	return nil
}

func (r *Reconciler) event(cs *v1alpha1.CloneSet, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(cs, nil, typ, reason, reason, format, args...)
	}
}
