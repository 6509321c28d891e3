package integration

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// checkStatefulSetValidation runs against a serving kruise-manager: an invalid Advanced StatefulSet
// is refused, in either version, with an Invalid error naming the offending field; maxUnavailable
// above 1 is accepted with OrderedReady (Kruise's B1); a valid v1alpha1 StatefulSet is stored and
// read back as v1beta1; once stored, its claim templates may grow but not otherwise change, its
// serviceName not at all, and an InPlaceOnly one refuses a template change that recreates pods.
func checkStatefulSetValidation(t *testing.T, c client.Client, ns string, selector *metav1.LabelSelector, template corev1.PodTemplateSpec) {
	ctx := context.Background()
	gated := template.DeepCopy()
	gated.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
	gated.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	claim := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}}
	beta := func(name string, edit func(*appsv1beta1.StatefulSetSpec)) *appsv1beta1.StatefulSet {
		sts := &appsv1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1beta1.StatefulSetSpec{Replicas: ptr.To[int32](0), ServiceName: name, Selector: selector.DeepCopy(),
				Template: *gated.DeepCopy(), VolumeClaimTemplates: []corev1.PersistentVolumeClaim{*claim.DeepCopy()}}}
		edit(&sts.Spec)
		return sts
	}
	ru := func(s *appsv1beta1.StatefulSetSpec) *appsv1beta1.StatefulSetRollingUpdateStrategy {
		if s.UpdateStrategy.RollingUpdate == nil {
			s.UpdateStrategy.RollingUpdate = &appsv1beta1.StatefulSetRollingUpdateStrategy{}
		}
		return s.UpdateStrategy.RollingUpdate
	}
	rejected := []struct {
		name, field string
		edit        func(*appsv1beta1.StatefulSetSpec)
	}{
		{"unavailable-0", "spec.updateStrategy.rollingUpdate.maxUnavailable", func(s *appsv1beta1.StatefulSetSpec) {
			ru(s).MaxUnavailable = ptr.To(intstr.FromInt32(0))
		}},
		{"inplace-no-gate", "spec.template.spec.readinessGates", func(s *appsv1beta1.StatefulSetSpec) {
			ru(s).PodUpdatePolicy = appsv1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy
			s.Template.Spec.ReadinessGates = nil
		}},
		{"reserve-backwards", "spec.reserveOrdinals[0]", func(s *appsv1beta1.StatefulSetSpec) {
			s.ReserveOrdinals = []intstr.IntOrString{intstr.FromString("5-1")}
		}},
		{"claim-no-modes", "spec.volumeClaimTemplates[0].spec.accessModes", func(s *appsv1beta1.StatefulSetSpec) {
			s.VolumeClaimTemplates[0].Spec.AccessModes = nil
		}},
		// Found by the API server's pod validation (a dry-run pod create), reported at the template.
		{"port-out-of-range", "spec.template.spec.containers[0].ports[0].containerPort", func(s *appsv1beta1.StatefulSetSpec) {
			s.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 70000}}
		}},
	}
	for _, r := range rejected {
		expectInvalid(t, "create v1beta1 StatefulSet "+r.name, c.Create(ctx, beta(r.name, r.edit)), r.field)
	}
	// The v1alpha1 webhook applies the same rules.
	alpha := &appsv1alpha1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "unordered", Namespace: ns},
		Spec: appsv1alpha1.StatefulSetSpec{Selector: selector.DeepCopy(), Template: *gated.DeepCopy(),
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{*claim.DeepCopy()},
			UpdateStrategy: appsv1alpha1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1alpha1.StatefulSetRollingUpdateStrategy{UnorderedUpdate: &appsv1alpha1.StatefulSetUnorderedUpdateStrategy{}}}}}
	expectInvalid(t, "create v1alpha1 StatefulSet with unorderedUpdate and OrderedReady", c.Create(ctx, alpha),
		"spec.updateStrategy.rollingUpdate.unorderedUpdate")

	// B1: maxUnavailable above 1 with OrderedReady, as Kubernetes' MaxUnavailableStatefulSet allows.
	if err := c.Create(ctx, beta("ordered-wide", func(s *appsv1beta1.StatefulSetSpec) {
		ru(s).MaxUnavailable = ptr.To(intstr.FromInt32(3))
	})); err != nil {
		t.Errorf("maxUnavailable 3 with OrderedReady must be accepted (B1): %v", err)
	}

	checkStatefulSetV1alpha1(t, c, ns, selector, *gated, claim)
}

// checkStatefulSetV1alpha1: a valid v1alpha1 StatefulSet is accepted and read back as v1beta1; the
// update rules then apply to it.
func checkStatefulSetV1alpha1(t *testing.T, c client.Client, ns string, selector *metav1.LabelSelector, gated corev1.PodTemplateSpec,
	claim corev1.PersistentVolumeClaim) {
	ctx := context.Background()
	alpha := &appsv1alpha1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "inplace-only", Namespace: ns},
		Spec: appsv1alpha1.StatefulSetSpec{Replicas: ptr.To[int32](0), ServiceName: "inplace-only", Selector: selector.DeepCopy(),
			PodManagementPolicy: appsv1.ParallelPodManagement, Template: *gated.DeepCopy(),
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{*claim.DeepCopy()},
			UpdateStrategy: appsv1alpha1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1alpha1.StatefulSetRollingUpdateStrategy{MaxUnavailable: ptr.To(intstr.FromString("50%")),
					PodUpdatePolicy: appsv1alpha1.InPlaceOnlyStatefulSetPodUpdatePolicy}}}}
	if err := c.Create(ctx, alpha); err != nil {
		t.Fatalf("create a valid v1alpha1 StatefulSet: %v", err)
	}
	stored := &appsv1beta1.StatefulSet{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(alpha), stored); err != nil {
		t.Fatalf("read the v1alpha1 StatefulSet as v1beta1: %v", err)
	}
	if ru := stored.Spec.UpdateStrategy.RollingUpdate; ru == nil || ru.PodUpdatePolicy != appsv1beta1.InPlaceOnlyStatefulSetPodUpdatePolicy ||
		stored.Spec.PodManagementPolicy != appsv1.ParallelPodManagement || len(stored.Spec.VolumeClaimTemplates) != 1 {
		t.Errorf("read back as v1beta1 without what was written: %+v", stored.Spec)
	}

	update := func(edit func(*appsv1beta1.StatefulSetSpec)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := &appsv1beta1.StatefulSet{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(alpha), cur); err != nil {
				return err
			}
			edit(&cur.Spec)
			return c.Update(ctx, cur)
		})
	}
	if err := update(func(s *appsv1beta1.StatefulSetSpec) {
		s.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Mi")
		s.Template.Spec.Containers[0].Image = "img:v2"
	}); err != nil {
		t.Errorf("a claim template's storage and an InPlaceOnly image change must be accepted: %v", err)
	}
	// Claim template changes reach existing claims only under OnPodRollingUpdate, where nothing but
	// the storage size may change.
	expectInvalid(t, "change a claim template's access modes under OnPodRollingUpdate", update(func(s *appsv1beta1.StatefulSetSpec) {
		s.VolumeClaimUpdateStrategy.Type = appsv1beta1.OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy
		s.VolumeClaimTemplates[0].Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	}), "spec.volumeClaimTemplates[0]")
	expectInvalid(t, "change serviceName", update(func(s *appsv1beta1.StatefulSetSpec) { s.ServiceName = "other" }), "spec.serviceName")
	err := update(func(s *appsv1beta1.StatefulSetSpec) {
		s.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
	})
	expectInvalid(t, "InPlaceOnly env change", err, "spec.template")
	if err != nil && !strings.Contains(err.Error(), "env") {
		t.Errorf("InPlaceOnly env change: the error should name env: %v", err)
	}
}

// expectInvalid fails t unless err is the API server's Invalid answer naming field.
func expectInvalid(t *testing.T, what string, err error, field string) {
	t.Helper()
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), field+":") {
		t.Errorf("%s: want an Invalid error naming %s, got %v", what, field, err)
		return
	}
	t.Logf("refused as expected: %v", err)
}
