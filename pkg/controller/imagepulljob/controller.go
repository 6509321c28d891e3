package imagepulljob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=imagepulljobs,verbs=list;watch;delete
// +kubebuilder:rbac:groups=apps.kruise.io,resources=imagepulljobs/status,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=nodeimages,verbs=list;watch;update
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups="",namespace=kruise-daemon-config,resources=secrets,verbs=get;list;create;update;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler runs ImagePullJobs. It writes the jobs' status, their tags in NodeImage specs and the
// copies of their pull secrets.
type Reconciler struct {
	Client client.Client
	// Reader reads the jobs' pull secrets, uncached (the manager does not watch every secret).
	Reader   client.Reader
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
}

// SetupWithManager registers the controller: jobs, the NodeImages that report on them (and new
// nodes) and, for jobs that pick nodes by pods, pods that land on a node.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Reader == nil {
		r.Reader = mgr.GetAPIReader()
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("imagepulljob-controller").
		For(&v1beta1.ImagePullJob{}).
		Watches(&v1beta1.NodeImage{}, handler.Funcs{
			CreateFunc: func(ctx context.Context, _ event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.enqueueAll(ctx, q, func(*v1beta1.ImagePullJob) bool { return true })
			},
			UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				enqueueOwners(e.ObjectNew.(*v1beta1.NodeImage), q)
			},
		}).
		Watches(&corev1.Pod{}, handler.Funcs{
			CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				if pod := e.Object.(*corev1.Pod); pod.Spec.NodeName != "" {
					r.enqueuePodJobs(ctx, pod, q)
				}
			},
			UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				if old, pod := e.ObjectOld.(*corev1.Pod), e.ObjectNew.(*corev1.Pod); old.Spec.NodeName != pod.Spec.NodeName {
					r.enqueuePodJobs(ctx, pod, q)
				}
			},
		}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

func (r *Reconciler) enqueueAll(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], match func(*v1beta1.ImagePullJob) bool, opts ...client.ListOption) {
	jobs := &v1beta1.ImagePullJobList{}
	if err := r.Client.List(ctx, jobs, opts...); err != nil {
		return
	}
	for i := range jobs.Items {
		if j := &jobs.Items[i]; j.Status.CompletionTime == nil && match(j) {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: j.Namespace, Name: j.Name}})
		}
	}
}

// enqueuePodJobs enqueues the unfinished jobs of pod's namespace whose pod selector matches it.
func (r *Reconciler) enqueuePodJobs(ctx context.Context, pod *corev1.Pod, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	r.enqueueAll(ctx, q, func(j *v1beta1.ImagePullJob) bool {
		if j.Spec.PodSelector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(&j.Spec.PodSelector.LabelSelector)
		return err == nil && sel.Matches(labels.Set(pod.Labels))
	}, client.InNamespace(pod.Namespace))
}

// enqueueOwners enqueues the jobs among ni's tag owners.
func enqueueOwners(ni *v1beta1.NodeImage, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	for _, img := range ni.Spec.Images {
		for _, t := range img.Tags {
			for _, o := range t.OwnerReferences {
				if o.Kind == "ImagePullJob" {
					q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: o.Name}})
				}
			}
		}
	}
}

// Reconcile moves one job a step: pick nodes, start pulls, report, end, delete.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &v1beta1.ImagePullJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, job); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		// Deleted: release its tags (any UID under this name) and its unused secret copies.
		gone := func(o corev1.ObjectReference) bool {
			return o.Kind == "ImagePullJob" && o.Namespace == req.Namespace && o.Name == req.Name
		}
		if err := r.releaseAll(ctx, gone); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.collectSecrets(ctx, req.Namespace)
	}
	if job.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	nodeImages, missing, err := r.selectNodes(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	name, tag := SplitImage(job.Spec.Image)
	owner := OwnerRef(job)
	tasks := make([]NodeTask, 0, len(nodeImages))
	byNode := map[string]*v1beta1.NodeImage{}
	for _, ni := range nodeImages {
		byNode[ni.Name] = ni
		t := NodeTask{Node: ni.Name}
		img, listed := ni.Spec.Images[name]
		t.Full = !listed && len(ni.Spec.Images) >= v1beta1.MaxNodeImageImages
		if i := findTag(img, tag); i >= 0 {
			t.Owned = slices.ContainsFunc(img.Tags[i].OwnerReferences, func(o corev1.ObjectReference) bool { return ownedBy(o, owner) })
			t.Status = TagStatus(ni, name, img.Tags[i])
		}
		tasks = append(tasks, t)
	}
	for _, n := range missing {
		tasks = append(tasks, NodeTask{Node: n, Missing: true})
	}
	now := r.Clock.Now()
	plan := PlanJob(job, tasks, now)
	plan, err = r.startPulls(ctx, job, plan, byNode, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	known := map[v1beta1.NodeImageReferenceObject]bool{}
	for _, node := range plan.Release {
		ni := byNode[node].DeepCopy()
		if RemoveOwners(ni, func(o corev1.ObjectReference) bool { return ownedBy(o, owner) }) {
			if _, err := r.pruneLegacySecrets(ctx, ni, known); err != nil {
				return ctrl.Result{}, err
			}
			if err := r.Client.Update(ctx, ni); err != nil {
				return ctrl.Result{}, fmt.Errorf("release node %s: %w", node, err)
			}
		}
	}
	if !equality.Semantic.DeepEqual(plan.Status, job.Status) {
		if plan.Status.CompletionTime != nil && job.Status.CompletionTime == nil {
			typ := corev1.EventTypeNormal
			if plan.Status.Failed > 0 || plan.Status.Active > 0 {
				typ = corev1.EventTypeWarning
			}
			r.event(job, typ, "Completed", plan.Status.Message)
		}
		job.Status = plan.Status
		if err := r.Client.Status().Update(ctx, job); err != nil {
			return ctrl.Result{}, err
		}
	}
	if plan.Delete {
		if err := r.Client.Delete(ctx, job, client.Preconditions{UID: &job.UID}); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: plan.RequeueAfter}, nil
}

func (r *Reconciler) event(job *v1beta1.ImagePullJob, typ, reason, msg string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(job, nil, typ, reason, reason, "%s", msg)
	}
}

// RefusedRecheck is how often a job whose pulls were blocked (a refused pull secret, an image
// with an empty tag) is looked at again: what blocks it can change without an event the
// controller watches (Secrets are not watched).
const RefusedRecheck = 5 * time.Minute

// startPulls asks plan's Start nodes (by name in byNode) to pull job's image, after copying its
// pull secrets. When the job may not start pulls (see BlockStart) it returns the blocked plan,
// with a Warning event, and asks for a recheck after RefusedRecheck.
func (r *Reconciler) startPulls(ctx context.Context, job *v1beta1.ImagePullJob, plan Plan, byNode map[string]*v1beta1.NodeImage, now time.Time) (Plan, error) {
	if len(plan.Start) == 0 {
		return plan, nil
	}
	block := func(reason, msg string) (Plan, error) {
		r.event(job, corev1.EventTypeWarning, reason, msg)
		plan = BlockStart(plan, msg)
		if plan.RequeueAfter == 0 || plan.RequeueAfter > RefusedRecheck {
			plan.RequeueAfter = RefusedRecheck
		}
		return plan, nil
	}
	if _, tag := SplitImage(job.Spec.Image); tag == "" {
		return block("InvalidImage", fmt.Sprintf("spec.image %q has an empty tag", job.Spec.Image))
	}
	secrets, err := r.syncSecrets(ctx, job)
	var refused *SecretRefusedError
	switch {
	case errors.As(err, &refused):
		return block("PullSecretRefused", refused.Reason)
	case err != nil:
		r.event(job, corev1.EventTypeWarning, "PullSecretFailed", err.Error())
		return plan, err
	}
	for _, node := range plan.Start {
		ni := byNode[node].DeepCopy()
		if AddJob(ni, job, secrets, now) {
			if err := r.Client.Update(ctx, ni); err != nil {
				return plan, fmt.Errorf("ask node %s to pull %s: %w", node, job.Spec.Image, err)
			}
		}
	}
	return plan, nil
}

// pruneLegacySecrets drops from ni, which is being released anyway, the pull secret references
// without mode "batch" (OpenKruise's per-job secrets, see LegacyPullSecrets) whose secret no longer
// exists, as OpenKruise drops them when their job lets them go; known memoizes the lookups of one
// reconcile. It reports whether ni changed.
func (r *Reconciler) pruneLegacySecrets(ctx context.Context, ni *v1beta1.NodeImage, known map[v1beta1.NodeImageReferenceObject]bool) (bool, error) {
	var gone []v1beta1.NodeImageReferenceObject
	for _, ref := range LegacyPullSecrets(ni) {
		if ref.Namespace == "" || ref.Name == "" {
			continue // names nothing that could be looked up; left as written
		}
		exists, seen := known[ref]
		if !seen {
			err := r.Reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &corev1.Secret{})
			if err != nil && !apierrors.IsNotFound(err) {
				return false, fmt.Errorf("look up pull secret %s/%s of NodeImage %s: %w", ref.Namespace, ref.Name, ni.Name, err)
			}
			exists = err == nil
			known[ref] = exists
		}
		if !exists {
			gone = append(gone, ref)
		}
	}
	return DropPullSecrets(ni, gone), nil
}

// releaseAll removes the owners that match from every NodeImage (and the legacy pull secret
// references whose secrets are gone from those it changes).
func (r *Reconciler) releaseAll(ctx context.Context, match func(corev1.ObjectReference) bool) error {
	list := &v1beta1.NodeImageList{}
	if err := r.Client.List(ctx, list); err != nil {
		return err
	}
	known := map[v1beta1.NodeImageReferenceObject]bool{}
	for i := range list.Items {
		ni := list.Items[i].DeepCopy()
		if RemoveOwners(ni, match) {
			if _, err := r.pruneLegacySecrets(ctx, ni, known); err != nil {
				return err
			}
			if err := r.Client.Update(ctx, ni); err != nil {
				return fmt.Errorf("release NodeImage %s: %w", ni.Name, err)
			}
		}
	}
	return nil
}
