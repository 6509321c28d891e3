// Package nodeimage keeps one NodeImage per Node: named after the node, carrying the node's
// labels (so that image pull jobs can select nodes through their NodeImages) and owned by the Node,
// so that the garbage collector deletes it with the node. kruise-daemon on the node pulls what its
// NodeImage asks for and reports in its status.
package nodeimage

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=nodeimages,verbs=get;list;watch;create;patch

// Reconciler creates and relabels NodeImages; it is their only writer besides the daemons, which
// write their status.
type Reconciler struct {
	Client client.Client
}

// Desired is the NodeImage metadata for node: its name and labels, and the Node as owner.
func Desired(node *corev1.Node) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: node.Name, Labels: maps.Clone(node.Labels),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID,
			Controller: ptr.To(true)}}}
}

// Reconcile creates the node's NodeImage, or brings its labels in line with the node's.
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
	if maps.Equal(ni.Labels, want.Labels) {
		return ctrl.Result{}, nil
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
	return ctrl.Result{}, nil
}

// SetupWithManager watches Nodes and the NodeImages they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("nodeimage").
		For(&corev1.Node{}).
		Owns(&v1beta1.NodeImage{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}
