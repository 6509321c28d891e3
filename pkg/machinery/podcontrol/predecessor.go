package podcontrol

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HeldByPredecessor reports whether obj's controller is owner's predecessor: a controller of
// owner's kind (gvk) and name with another UID. Such an owner was deleted, and owner created
// again under its name, before the garbage collector released or deleted its dependents (a
// deletion with propagation Orphan releases them one by one).
func HeldByPredecessor(obj metav1.Object, owner client.Object, gvk schema.GroupVersionKind) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.UID == owner.GetUID() || ref.Kind != gvk.Kind || ref.Name != owner.GetName() {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == gvk.Group
}

// PredecessorError is a workload waiting for the garbage collector to release its predecessor's
// dependents (HeldByPredecessor): until then it could neither count the pods it is to adopt nor
// know their revisions, and would make pods again, or recreate ones it could update in place.
type PredecessorError struct {
	// What are the dependents waited for, e.g. "pods", "revisions"; Names some of them.
	What  string
	Names []string
}

func (e *PredecessorError) Error() string {
	names := e.Names
	more := ""
	if len(names) > 3 {
		names, more = names[:3], fmt.Sprintf(" and %d more", len(e.Names)-3)
	}
	return fmt.Sprintf("waiting for the garbage collector to release the %s of the deleted workload this one replaces under its name (%s%s)",
		e.What, strings.Join(names, ", "), more)
}

// CanAdopt reports whether owner may adopt dependents now: it is not being deleted, as r (the API
// server, around the cache; nil: the object as read) shows it, as Kubernetes' controllers check
// before they adopt. A workload deleted with propagation Orphan that adopted back what the garbage
// collector released would have it deleted with it (the soak, seed 3: its successor then found
// its pods' revision gone).
func CanAdopt(ctx context.Context, r client.Reader, owner client.Object) (bool, error) {
	if owner.GetDeletionTimestamp() != nil {
		return false, nil
	}
	if r == nil {
		return true, nil
	}
	fresh, ok := owner.DeepCopyObject().(client.Object)
	if !ok {
		return false, fmt.Errorf("copy %s/%s", owner.GetNamespace(), owner.GetName())
	}
	if err := r.Get(ctx, client.ObjectKeyFromObject(owner), fresh); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return fresh.GetUID() == owner.GetUID() && fresh.GetDeletionTimestamp() == nil, nil
}
