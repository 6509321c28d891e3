package imagepulljob

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/webhook/validating"
)

// TestNodeImageWritesPassTheWebhook checks that every NodeImage spec this controller writes (tags
// added by jobs of several images and policies, a re-pull, releases) passes the NodeImage
// validating webhook's rules, so none of Kruise's own writes is refused.
func TestNodeImageWritesPassTheWebhook(t *testing.T) {
	p := field.NewPath("spec")
	ni := &v1beta1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	check := func(what string, old *v1beta1.NodeImage) {
		t.Helper()
		if errs := validating.ValidateNodeImageSpec(&ni.Spec, p); len(errs) != 0 {
			t.Fatalf("%s: the written NodeImage is refused on create: %v", what, errs)
		}
		if errs := validating.ValidateNodeImageSpecUpdate(&ni.Spec, &old.Spec, p); len(errs) != 0 {
			t.Fatalf("%s: the write is refused: %v", what, errs)
		}
	}
	cp := v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways}
	var jobs []*v1beta1.ImagePullJob
	for i, image := range []string{"registry.local/app", "registry.local/app:v2", "127.0.0.1:5000/other:1.0", "registry.local/app:v2"} {
		j := job(intstr.FromInt32(1), cp)
		j.Name, j.UID, j.Spec.Image = fmt.Sprintf("j%d", i), types.UID(fmt.Sprint("u", i)), image
		if i == 3 {
			j.Spec.ImagePullPolicy = v1beta1.ImagePullJobPullAlways // a re-pull of a shared tag
		}
		jobs = append(jobs, j)
		old := ni.DeepCopy()
		AddJob(ni, j, []v1beta1.NodeImageReferenceObject{{Namespace: appspub.KruiseDaemonConfigNamespace, Name: "ns.reg"}}, t0)
		check("add "+image, old)
	}
	for _, j := range jobs {
		old := ni.DeepCopy()
		RemoveOwners(ni, func(o corev1.ObjectReference) bool { return ownedBy(o, OwnerRef(j)) })
		check("release "+j.Name, old)
	}
	if len(ni.Spec.Images) != 0 {
		t.Errorf("after every release: %v", ni.Spec.Images)
	}
}
