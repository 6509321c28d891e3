package nodeimage

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=nodeimages,verbs=list;watch;create;patch;update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=nodeimages/status,verbs=update

// Reconciler creates and relabels NodeImages; it is their only writer besides the daemons, which
// write their status (this writes it only to fail what a daemon did not answer).
type Reconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
	// Recorder receives the Warning events PullImageFailed; nil drops them.
	Recorder events.EventRecorder
}

// Desired is the NodeImage metadata for node: its name and labels, and the Node as owner.
func Desired(node *corev1.Node) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: node.Name, Labels: maps.Clone(node.Labels),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID,
			Controller: ptr.To(true)}}}
}

// Reconcile creates the node's NodeImage, drops its expired tags, and brings its labels in line
// with the node's.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	node := &corev1.Node{}
	if err := r.Client.Get(ctx, req.NamespacedName, node); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err) // its NodeImage goes with it (owner reference)
	}
	if node.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	want := Desired(node)
	ni := &v1beta1.NodeImage{}
	err := r.Client.Get(ctx, types.NamespacedName{Name: node.Name}, ni)
	switch {
	case apierrors.IsNotFound(err):
		ni = &v1beta1.NodeImage{ObjectMeta: want}
		if err := r.Client.Create(ctx, ni); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("create NodeImage %s: %w", node.Name, err)
		}
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, err
	}
	st, failures, due := Unanswered(ni, r.now())
	if st != nil {
		ni = ni.DeepCopy()
		ni.Status = *st
		if err := r.Client.Status().Update(ctx, ni); err != nil { // optimistic: a daemon's write wins
			return ctrl.Result{}, fmt.Errorf("fail unanswered tags of NodeImage %s: %w", ni.Name, err)
		}
		r.tell(ni, failures)
		return ctrl.Result{RequeueAfter: due}, nil // the rest follows the update's event
	}
	expired, next := ExpiredTags(ni, r.now())
	if due > 0 && (next == 0 || due < next) {
		next = due
	}
	if len(expired) > 0 {
		if err := r.dropTags(ctx, ni, expired); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: next}, nil // the relabel, if due, follows the update's event
	}
	if maps.Equal(ni.Labels, want.Labels) {
		return ctrl.Result{RequeueAfter: next}, nil
	}
	// A merge patch of the whole label map: keys the node lost are set to null.
	labels := map[string]any{}
	for k := range ni.Labels {
		labels[k] = nil
	}
	for k, v := range want.Labels {
		labels[k] = v
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Client.Patch(ctx, ni, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return ctrl.Result{}, fmt.Errorf("relabel NodeImage %s: %w", node.Name, err)
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

// tell records a Warning event PullImageFailed for each failure, on the NodeImage and on those
// that asked for the tag.
func (r *Reconciler) tell(ni *v1beta1.NodeImage, failures []Failure) {
	if r.Recorder == nil {
		return
	}
	for _, f := range failures {
		msg := failureEvent(f, ni.Name)
		r.Recorder.Eventf(ni, nil, corev1.EventTypeWarning, PullImageFailedReason, "Pull", "%s", msg)
		for i := range f.Owners {
			r.Recorder.Eventf(&f.Owners[i], nil, corev1.EventTypeWarning, PullImageFailedReason, "Pull", "%s", msg)
		}
	}
}

func (r *Reconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

// ExpiredTags are the tags of ni (image name → tags) whose pullPolicy.ttlSecondsAfterFinished has
// passed since the node reported them finished, and the time until the next one expires (0: none).
func ExpiredTags(ni *v1beta1.NodeImage, now time.Time) (map[string][]string, time.Duration) {
	expired := map[string][]string{}
	var next time.Duration
	for name, img := range ni.Spec.Images {
		for _, t := range img.Tags {
			if t.PullPolicy == nil || t.PullPolicy.TTLSecondsAfterFinished == nil {
				continue
			}
			for _, st := range ni.Status.ImageStatuses[name].Tags {
				if st.Tag != t.Tag || st.Version != t.Version || st.CompletionTime == nil {
					continue
				}
				left := st.CompletionTime.Add(time.Duration(*t.PullPolicy.TTLSecondsAfterFinished) * time.Second).Sub(now)
				if left <= 0 {
					expired[name] = append(expired[name], t.Tag)
				} else if next == 0 || left < next {
					next = left
				}
			}
		}
	}
	return expired, next
}

// dropTags removes the expired tags from ni's spec (optimistically locked: a concurrent writer makes
// it retry from the new object).
func (r *Reconciler) dropTags(ctx context.Context, ni *v1beta1.NodeImage, expired map[string][]string) error {
	ni = ni.DeepCopy()
	for name, tags := range expired {
		img := ni.Spec.Images[name]
		img.Tags = slices.DeleteFunc(img.Tags, func(t v1beta1.NodeImageTagSpec) bool { return slices.Contains(tags, t.Tag) })
		if len(img.Tags) == 0 {
			delete(ni.Spec.Images, name)
		} else {
			ni.Spec.Images[name] = img
		}
	}
	if err := r.Client.Update(ctx, ni); err != nil {
		return fmt.Errorf("drop expired tags of NodeImage %s: %w", ni.Name, err)
	}
	return nil
}

// SetupWithManager watches Nodes and the NodeImages they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("nodeimage-controller").
		For(&corev1.Node{}).
		Owns(&v1beta1.NodeImage{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}
