package imagelistpulljob

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=imagelistpulljobs,verbs=list;watch;delete
// +kubebuilder:rbac:groups=apps.kruise.io,resources=imagelistpulljobs/status,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=imagelistpulljobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=imagepulljobs,verbs=list;watch;create;update;delete

// Reconciler runs ImageListPullJobs; it is the only writer of their status and per-image jobs.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
}

// SetupWithManager registers the controller for lists and the jobs they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("imagelistpulljob-controller").
		For(&v1beta1.ImageListPullJob{}).
		Owns(&v1beta1.ImagePullJob{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// Reconcile moves one list a step.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	list := &v1beta1.ImageListPullJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, list); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err) // its jobs go with it (owner references)
	}
	if list.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	all := &v1beta1.ImagePullJobList{}
	if err := r.Client.List(ctx, all, client.InNamespace(list.Namespace)); err != nil {
		return ctrl.Result{}, err
	}
	var children []*v1beta1.ImagePullJob
	for i := range all.Items {
		if ref := metav1.GetControllerOf(&all.Items[i]); ref != nil && ref.UID == list.UID {
			children = append(children, &all.Items[i])
		}
	}
	plan := PlanList(list, children, r.Clock.Now())
	for _, j := range plan.Create {
		if err := r.Client.Create(ctx, j); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("create the job for %s: %w", j.Spec.Image, err)
		}
	}
	for _, j := range plan.Update {
		if err := r.Client.Update(ctx, j); err != nil {
			return ctrl.Result{}, fmt.Errorf("update job %s: %w", j.Name, err)
		}
	}
	for _, j := range plan.Delete {
		if err := r.Client.Delete(ctx, j); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("delete job %s: %w", j.Name, err)
		}
	}
	if !equality.Semantic.DeepEqual(plan.Status, list.Status) {
		if plan.Status.CompletionTime != nil && list.Status.CompletionTime == nil && r.Recorder != nil {
			typ := corev1.EventTypeNormal
			if len(plan.Status.FailedImageStatuses) > 0 {
				typ = corev1.EventTypeWarning
			}
			r.Recorder.Eventf(list, nil, typ, "Completed", "Completed", "%d/%d images pulled everywhere, %d with failed nodes",
				plan.Status.Succeeded, plan.Status.Desired, len(plan.Status.FailedImageStatuses))
		}
		list.Status = plan.Status
		if err := r.Client.Status().Update(ctx, list); err != nil {
			return ctrl.Result{}, err
		}
	}
	if plan.DeleteList {
		err := r.Client.Delete(ctx, list, client.Preconditions{UID: &list.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{RequeueAfter: plan.RequeueAfter}, nil
}
