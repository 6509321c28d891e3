package validating

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func ephemeralJobOf(mutate func(*v1alpha1.EphemeralJob)) *v1alpha1.EphemeralJob {
	j := &v1alpha1.EphemeralJob{ObjectMeta: metav1.ObjectMeta{Name: "ej", Namespace: "ns"},
		Spec: v1alpha1.EphemeralJobSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
			Template: v1alpha1.EphemeralJobContainerTemplateSpec{EphemeralContainers: []corev1.EphemeralContainer{
				{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox", Command: []string{"sh", "-c", "exit 0"}}}}}}}
	if mutate != nil {
		mutate(j)
	}
	return j
}

// container edits the job's first container.
func container(edit func(*corev1.EphemeralContainer)) func(*v1alpha1.EphemeralJob) {
	return func(j *v1alpha1.EphemeralJob) { edit(&j.Spec.Template.EphemeralContainers[0]) }
}

// Each invalid job is refused at its field's path.
func TestValidateEphemeralJob(t *testing.T) {
	c0 := "spec.template.ephemeralContainers[0]"
	for _, tc := range []struct {
		name string
		obj  *v1alpha1.EphemeralJob
		path string // "" when valid
	}{
		{"valid", ephemeralJobOf(nil), ""},
		{"every allowed field", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) {
			c.TargetContainerName, c.ImagePullPolicy, c.TerminationMessagePolicy = "app", corev1.PullNever, corev1.TerminationMessageFallbackToLogsOnError
			c.Env = []corev1.EnvVar{{Name: "A.b-c", Value: "1"}}
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
			c.SecurityContext, c.Stdin, c.TTY = &corev1.SecurityContext{Privileged: ptr.To(true)}, true, true
		})), ""},
		{"no selector", ephemeralJobOf(func(j *v1alpha1.EphemeralJob) { j.Spec.Selector = nil }), "spec.selector"},
		{"an empty selector", ephemeralJobOf(func(j *v1alpha1.EphemeralJob) { j.Spec.Selector = &metav1.LabelSelector{} }), "spec.selector"},
		{"a bad selector", ephemeralJobOf(func(j *v1alpha1.EphemeralJob) {
			j.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
		}), "spec.selector.matchExpressions[0].operator"},
		{"negative replicas", ephemeralJobOf(func(j *v1alpha1.EphemeralJob) { j.Spec.Replicas = ptr.To[int32](-1) }), "spec.replicas"},
		{"negative parallelism", ephemeralJobOf(func(j *v1alpha1.EphemeralJob) { j.Spec.Parallelism = ptr.To[int32](-1) }), "spec.parallelism"},
		{"negative deadline", ephemeralJobOf(func(j *v1alpha1.EphemeralJob) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](-5) }), "spec.activeDeadlineSeconds"},
		{"negative TTL", ephemeralJobOf(func(j *v1alpha1.EphemeralJob) { j.Spec.TTLSecondsAfterFinished = ptr.To[int32](-1) }), "spec.ttlSecondsAfterFinished"},
		{"zeros", ephemeralJobOf(func(j *v1alpha1.EphemeralJob) {
			j.Spec.Replicas, j.Spec.Parallelism, j.Spec.ActiveDeadlineSeconds, j.Spec.TTLSecondsAfterFinished = ptr.To[int32](0), ptr.To[int32](0), ptr.To[int64](0), ptr.To[int32](0)
		}), ""},
		{"no containers", ephemeralJobOf(func(j *v1alpha1.EphemeralJob) { j.Spec.Template.EphemeralContainers = nil }), "spec.template.ephemeralContainers"},
		{"no name", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) { c.Name = "" })), c0 + ".name"},
		{"a bad name", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) { c.Name = "Debug_1" })), c0 + ".name"},
		{"a duplicate name", ephemeralJobOf(func(j *v1alpha1.EphemeralJob) {
			j.Spec.Template.EphemeralContainers = append(j.Spec.Template.EphemeralContainers, j.Spec.Template.EphemeralContainers[0])
		}), "spec.template.ephemeralContainers[1].name"},
		{"no image", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) { c.Image = "" })), c0 + ".image"},
		{"ports", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) { c.Ports = []corev1.ContainerPort{{ContainerPort: 80}} })), c0 + ".ports"},
		{"resources", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) {
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		})), c0 + ".resources"},
		{"a probe", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) { c.ReadinessProbe = &corev1.Probe{} })), c0 + ".readinessProbe"},
		{"lifecycle", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) { c.Lifecycle = &corev1.Lifecycle{} })), c0 + ".lifecycle"},
		{"a restart policy", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		})), c0 + ".restartPolicy"},
		{"a bad pull policy", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) { c.ImagePullPolicy = "Sometimes" })), c0 + ".imagePullPolicy"},
		{"a bad termination message policy", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) { c.TerminationMessagePolicy = "Log" })), c0 + ".terminationMessagePolicy"},
		{"a subPath", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) {
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPath: "x"}}
		})), c0 + ".volumeMounts[0].subPath"},
		{"an env name with =", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) { c.Env = []corev1.EnvVar{{Name: "A=B"}} })), c0 + ".env[0].name"},
		{"the job's own env", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) {
			c.Env = []corev1.EnvVar{{Name: v1alpha1.EphemeralContainerEnvKey, Value: "x"}}
		})), c0 + ".env[0].name"},
		{"envFrom without a source", ephemeralJobOf(container(func(c *corev1.EphemeralContainer) { c.EnvFrom = []corev1.EnvFromSource{{Prefix: "P"}} })), c0 + ".envFrom[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateEphemeralJob(tc.obj)
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("refused a valid job: %v", errs)
				}
				return
			}
			if len(errs) == 0 {
				t.Fatalf("accepted; want an error at %s", tc.path)
			}
			if errs[0].Field != tc.path {
				t.Errorf("error at %s (%v), want at %s", errs[0].Field, errs, tc.path)
			}
			if err := invalid("EphemeralJob", "ej", errs); !strings.Contains(err.Error(), tc.path) {
				t.Errorf("message %q does not name %s", err, tc.path)
			}
		})
	}
}
