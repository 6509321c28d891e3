package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/test/harness"
)

// A user creating Advanced DaemonSets through a serving kruise-manager: an invalid one is refused,
// in either version, naming the offending field; a v1alpha1 one written the OpenKruise way (the
// progressive-create-pod annotation, the deprecated Surging type) is stored as the v1beta1 it
// means and read back as written; its selector cannot change.
func TestDaemonSetAdmission(t *testing.T) {
	ctx := context.Background()
	admin := harness.KruiseClient(t, cfg)
	installKruise(t, admin)
	startManager(t, managerOptions(t, "kruise-manager-ds"))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ads-"}}
	if err := admin.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent:v1"}}}}
	beta := func(name string, ru *appsv1beta1.DaemonSetRollingUpdate) *appsv1beta1.DaemonSet {
		return &appsv1beta1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name},
			Spec: appsv1beta1.DaemonSetSpec{Selector: selector.DeepCopy(), Template: *template.DeepCopy(),
				UpdateStrategy: appsv1beta1.DaemonSetUpdateStrategy{RollingUpdate: ru}}}
	}
	zero, one := ptr.To(intstr.FromInt32(0)), ptr.To(intstr.FromInt32(1))
	const rolling = "spec.updateStrategy.rollingUpdate."
	expectInvalid(t, "no pod could be updated", admin.Create(ctx, beta("stuck", &appsv1beta1.DaemonSetRollingUpdate{MaxUnavailable: zero, MaxSurge: zero})),
		rolling+"maxUnavailable")
	expectInvalid(t, "surge in place", admin.Create(ctx, beta("surge-inplace", &appsv1beta1.DaemonSetRollingUpdate{
		Type: appsv1beta1.DaemonSetInplaceRollingUpdateType, MaxSurge: one})), rolling+"maxSurge")
	badPort := beta("bad-port", nil)
	badPort.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 70000}}
	expectInvalid(t, "a template the API server refuses as a pod", admin.Create(ctx, badPort), "spec.template.spec.containers[0].ports[0].containerPort")

	surging := beta("surging", &appsv1beta1.DaemonSetRollingUpdate{MaxSurge: one})
	if err := admin.Create(ctx, surging); err != nil {
		t.Fatalf("a surge update (maxSurge alone): %v", err)
	}
	if ru := surging.Spec.UpdateStrategy.RollingUpdate; ru.MaxUnavailable != nil || ru.Type != appsv1beta1.DaemonSetStandardRollingUpdateType {
		t.Errorf("maxSurge alone: defaulted to %+v, want maxUnavailable left unset and type Standard", ru)
	}

	alpha := &appsv1alpha1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "progressive", Namespace: ns.Name,
		Annotations: map[string]string{appsv1alpha1.DaemonSetProgressiveCreatePodAnnotation: "true"}},
		Spec: appsv1alpha1.DaemonSetSpec{Selector: selector.DeepCopy(), Template: *template.DeepCopy(),
			UpdateStrategy: appsv1alpha1.DaemonSetUpdateStrategy{RollingUpdate: &appsv1alpha1.DaemonSetRollingUpdate{
				Type: appsv1alpha1.DaemonSetSurgingRollingUpdateType, Partition: ptr.To(intstr.FromString("50%"))}}}}
	if err := admin.Create(ctx, alpha); err != nil {
		t.Fatalf("create a v1alpha1 DaemonSet written the OpenKruise way: %v", err)
	}
	stored := &appsv1beta1.DaemonSet{}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(alpha), stored); err != nil {
		t.Fatal(err)
	}
	ru := stored.Spec.UpdateStrategy.RollingUpdate
	if ss := stored.Spec.ScaleStrategy; ss == nil || !ss.PartitionedScaling || ru == nil || ru.Type != appsv1beta1.DaemonSetStandardRollingUpdateType ||
		ru.MaxSurge == nil || *ru.MaxSurge != intstr.FromInt32(1) || ru.MaxUnavailable == nil || *ru.MaxUnavailable != intstr.FromInt32(0) {
		t.Errorf("stored as v1beta1: scaleStrategy %+v, rollingUpdate %+v; want partitionedScaling, Standard, maxSurge 1, maxUnavailable 0",
			stored.Spec.ScaleStrategy, ru)
	}
	again := &appsv1alpha1.DaemonSet{}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(alpha), again); err != nil {
		t.Fatal(err)
	}
	if again.Annotations[appsv1alpha1.DaemonSetProgressiveCreatePodAnnotation] != "true" ||
		again.Annotations[appsv1alpha1.ConversionV1beta1OnlyAnnotation] != "" {
		t.Errorf("read back as v1alpha1: annotations %v", again.Annotations)
	}

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &appsv1beta1.DaemonSet{}
		if err := admin.Get(ctx, client.ObjectKeyFromObject(alpha), cur); err != nil {
			return err
		}
		cur.Spec.Selector.MatchLabels["tier"] = "node"
		cur.Spec.Template.Labels["tier"] = "node"
		return admin.Update(ctx, cur)
	})
	expectInvalid(t, "change the selector", err, "spec.selector")
}
