package integration

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// checkCloneSetValidation runs against a serving kruise-manager: an invalid CloneSet is refused with
// an Invalid error whose message names the offending field, a valid one is stored, and an InPlaceOnly
// CloneSet accepts an image change but refuses a change that would recreate its pods.
func checkCloneSetValidation(t *testing.T, c client.Client, ns string, selector *metav1.LabelSelector, template corev1.PodTemplateSpec) {
	ctx := context.Background()
	cloneSet := func(name string, edit func(*appsv1alpha1.CloneSetSpec)) *appsv1alpha1.CloneSet {
		cs := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1alpha1.CloneSetSpec{Selector: selector.DeepCopy(), Template: *template.DeepCopy()}}
		edit(&cs.Spec)
		return cs
	}
	rejected := []struct {
		name, field string
		edit        func(*appsv1alpha1.CloneSetSpec)
	}{
		{"bad-selector", "spec.template.metadata.labels", func(s *appsv1alpha1.CloneSetSpec) {
			s.Template.Labels = map[string]string{"app": "not-x"}
		}},
		{"inplaceonly-surge", "spec.updateStrategy.maxSurge", func(s *appsv1alpha1.CloneSetSpec) {
			s.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
			s.UpdateStrategy.MaxSurge = ptr.To(intstr.FromInt32(1))
		}},
		// OpenKruise's rule: an update must be able to progress (maxUnavailable or maxSurge ≥ 1).
		{"unavailable-0-no-surge", "spec.updateStrategy.maxUnavailable", func(s *appsv1alpha1.CloneSetSpec) {
			s.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromString("0%"))
			s.UpdateStrategy.MaxSurge = ptr.To(intstr.FromInt32(0))
		}},
		// Found by the API server's pod validation (a dry-run pod create), reported at the template.
		{"request-above-limit", "spec.template.spec.containers[0].resources.requests", func(s *appsv1alpha1.CloneSetSpec) {
			s.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
		}},
		{"port-out-of-range", "spec.template.spec.containers[0].ports[0].containerPort", func(s *appsv1alpha1.CloneSetSpec) {
			s.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 70000}}
		}},
	}
	for _, r := range rejected {
		err := c.Create(ctx, cloneSet(r.name, r.edit))
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), r.field) {
			t.Errorf("create CloneSet %s: want an Invalid error naming %s, got %v", r.name, r.field, err)
		} else {
			t.Logf("refused as expected: %v", err)
		}
	}

	// A container may mount its claim template's volume, the usual way to use one.
	mounted := cloneSet("mounts-claim", func(s *appsv1alpha1.CloneSetSpec) {
		s.Replicas = ptr.To[int32](0)
		s.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		s.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}}}
	})
	if err := c.Create(ctx, mounted); err != nil {
		t.Errorf("a CloneSet mounting its claim template's volume was refused: %v", err)
	}

	valid := cloneSet("inplace-only", func(s *appsv1alpha1.CloneSetSpec) {
		s.Replicas = ptr.To[int32](0)
		s.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
		s.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromString("100%"))
	})
	if err := c.Create(ctx, valid); err != nil {
		t.Fatalf("create a valid CloneSet: %v", err)
	}
	update := func(edit func(*appsv1alpha1.CloneSetSpec)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cs := &appsv1alpha1.CloneSet{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(valid), cs); err != nil {
				return err
			}
			edit(&cs.Spec)
			return c.Update(ctx, cs)
		})
	}
	if err := update(func(s *appsv1alpha1.CloneSetSpec) { s.Template.Spec.Containers[0].Image = "img:v2" }); err != nil {
		t.Errorf("InPlaceOnly CloneSet: an image change must be accepted: %v", err)
	}
	err := update(func(s *appsv1alpha1.CloneSetSpec) {
		s.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
	})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.template") || !strings.Contains(err.Error(), "env") {
		t.Errorf("InPlaceOnly CloneSet: an env change must be refused at spec.template naming env, got %v", err)
	}
	err = update(func(s *appsv1alpha1.CloneSetSpec) {
		s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x", "v": "2"}}
	})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.selector") {
		t.Errorf("CloneSet selector change: want an Invalid error naming spec.selector, got %v", err)
	}
}
