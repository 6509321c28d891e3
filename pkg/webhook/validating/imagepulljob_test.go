package validating

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func TestValidateImagePullJobSpec(t *testing.T) {
	valid := func() *v1beta1.ImagePullJobSpec {
		return &v1beta1.ImagePullJobSpec{Image: "127.0.0.1:5000/app:v2", ImagePullJobTemplate: v1beta1.ImagePullJobTemplate{
			Parallelism: ptr.To(intstr.FromString("50%")), PullSecrets: []string{"reg"},
			CompletionPolicy: v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways, ActiveDeadlineSeconds: ptr.To[int64](60)}}}
	}
	if errs := ValidateImagePullJobSpec(valid(), field.NewPath("spec")); len(errs) != 0 {
		t.Fatalf("a valid spec: %v", errs)
	}
	for name, c := range map[string]struct {
		mutate func(*v1beta1.ImagePullJobSpec)
		field  string
	}{
		"no image":      {func(s *v1beta1.ImagePullJobSpec) { s.Image = "" }, "spec.image"},
		"digest":        {func(s *v1beta1.ImagePullJobSpec) { s.Image = "app@sha256:" + strings.Repeat("a", 64) }, "spec.image"},
		"bad reference": {func(s *v1beta1.ImagePullJobSpec) { s.Image = "UPPER case:tag" }, "spec.image"},
		"both selectors": {func(s *v1beta1.ImagePullJobSpec) {
			s.Selector, s.PodSelector = &v1beta1.ImagePullJobNodeSelector{}, &v1beta1.ImagePullJobPodSelector{}
		}, "spec.podSelector"},
		"bad node name": {func(s *v1beta1.ImagePullJobSpec) {
			s.Selector = &v1beta1.ImagePullJobNodeSelector{Names: []string{"Bad_Name"}}
		}, "spec.selector.names[0]"},
		"bad selector": {func(s *v1beta1.ImagePullJobSpec) {
			s.PodSelector = &v1beta1.ImagePullJobPodSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b c"}}}
		}, "spec.podSelector.matchLabels"},
		"negative par": {func(s *v1beta1.ImagePullJobSpec) { s.Parallelism = ptr.To(intstr.FromInt32(-1)) }, "spec.parallelism"},
		"par 150%":     {func(s *v1beta1.ImagePullJobSpec) { s.Parallelism = ptr.To(intstr.FromString("150%")) }, "spec.parallelism"},
		"timeout 0": {func(s *v1beta1.ImagePullJobSpec) {
			s.PullPolicy = &v1beta1.ImagePullJobPullPolicy{TimeoutSeconds: ptr.To[int32](0)}
		}, "spec.pullPolicy.timeoutSeconds"},
		"negative backoff": {func(s *v1beta1.ImagePullJobSpec) {
			s.PullPolicy = &v1beta1.ImagePullJobPullPolicy{BackoffLimit: ptr.To[int32](-1)}
		}, "spec.pullPolicy.backoffLimit"},
		"never + deadline":  {func(s *v1beta1.ImagePullJobSpec) { s.CompletionPolicy.Type = v1beta1.ImagePullJobCompletionNever }, "spec.completionPolicy.activeDeadlineSeconds"},
		"unknown type":      {func(s *v1beta1.ImagePullJobSpec) { s.CompletionPolicy.Type = "Sometimes" }, "spec.completionPolicy.type"},
		"unknown policy":    {func(s *v1beta1.ImagePullJobSpec) { s.ImagePullPolicy = "Never" }, "spec.imagePullPolicy"},
		"bad secret name":   {func(s *v1beta1.ImagePullJobSpec) { s.PullSecrets = []string{"no/slash"} }, "spec.pullSecrets[0]"},
		"negative deadline": {func(s *v1beta1.ImagePullJobSpec) { s.CompletionPolicy.ActiveDeadlineSeconds = ptr.To[int64](0) }, "spec.completionPolicy.activeDeadlineSeconds"},
	} {
		s := valid()
		c.mutate(s)
		errs := ValidateImagePullJobSpec(s, field.NewPath("spec"))
		found := false
		for _, e := range errs {
			found = found || strings.HasPrefix(e.Field, c.field)
		}
		if !found {
			t.Errorf("%s: errors %v lack one for %s", name, errs, c.field)
		}
	}
	list := &v1beta1.ImageListPullJobSpec{Images: []string{"a:1", "a:1"}, ImagePullJobTemplate: valid().ImagePullJobTemplate}
	if errs := ValidateImageListPullJobSpec(list, field.NewPath("spec")); len(errs) != 1 || errs[0].Field != "spec.images[1]" {
		t.Errorf("duplicate images: %v", errs)
	}
}

func TestValidateContainerRecreateRequestSpec(t *testing.T) {
	spec := &v1alpha1.ContainerRecreateRequestSpec{PodName: "p",
		Containers: []v1alpha1.ContainerRecreateRequestContainer{{Name: "a"}, {Name: "a", PreStop: &v1alpha1.ContainerRecreateRequestPreStop{
			Exec: &corev1.ExecAction{}, TCPSocket: &corev1.TCPSocketAction{}}}},
		Strategy:              &v1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: "Maybe", MinStartedSeconds: -1},
		ActiveDeadlineSeconds: ptr.To[int64](0)}
	got := map[string]bool{}
	for _, e := range ValidateContainerRecreateRequestSpec(spec, field.NewPath("spec")) {
		got[e.Field] = true
	}
	for _, f := range []string{"spec.containers[1].name", "spec.containers[1].preStop", "spec.strategy.failurePolicy",
		"spec.strategy.minStartedSeconds", "spec.activeDeadlineSeconds"} {
		if !got[f] {
			t.Errorf("no error for %s (got %v)", f, got)
		}
	}
}

// What ties a request to its pod does not change after creation (OpenKruise's rule).
func TestCRRMetadataImmutable(t *testing.T) {
	old := &v1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Name: "r",
		Labels: map[string]string{v1alpha1.ContainerRecreateRequestPodUIDKey: "uid", v1alpha1.ContainerRecreateRequestNodeNameKey: "n1",
			v1alpha1.ContainerRecreateRequestActiveKey: "true"}}}
	edit := func(f func(*v1alpha1.ContainerRecreateRequest)) *v1alpha1.ContainerRecreateRequest {
		c := old.DeepCopy()
		f(c)
		return c
	}
	v := crrValidator{}
	for name, tc := range map[string]struct {
		old, new *v1alpha1.ContainerRecreateRequest
		refused  bool
	}{
		"pod-uid changed": {old, edit(func(c *v1alpha1.ContainerRecreateRequest) { c.Labels[v1alpha1.ContainerRecreateRequestPodUIDKey] = "x" }), true},
		"node-name changed": {old, edit(func(c *v1alpha1.ContainerRecreateRequest) {
			c.Labels[v1alpha1.ContainerRecreateRequestNodeNameKey] = "n2"
		}), true},
		"active dropped": {old, edit(func(c *v1alpha1.ContainerRecreateRequest) {
			delete(c.Labels, v1alpha1.ContainerRecreateRequestActiveKey)
		}), false},
		"acquired set": {old, edit(func(c *v1alpha1.ContainerRecreateRequest) {
			c.Annotations = map[string]string{v1alpha1.ContainerRecreateRequestUnreadyAcquiredKey: "2026-01-01T00:00:00Z"}
		}), false},
		"acquired changed": {edit(func(c *v1alpha1.ContainerRecreateRequest) {
			c.Annotations = map[string]string{v1alpha1.ContainerRecreateRequestUnreadyAcquiredKey: "2026-01-01T00:00:00Z"}
		}), edit(func(c *v1alpha1.ContainerRecreateRequest) {
			c.Annotations = map[string]string{v1alpha1.ContainerRecreateRequestUnreadyAcquiredKey: "2020-01-01T00:00:00Z"}
		}), true},
	} {
		_, err := v.ValidateUpdate(context.Background(), tc.old, tc.new)
		if (err != nil) != tc.refused {
			t.Errorf("%s: %v, want refused %v", name, err, tc.refused)
		}
	}
}
