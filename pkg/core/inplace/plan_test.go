package inplace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

type mutation func(t *corev1.PodTemplateSpec)

func TestPlan(t *testing.T) {
	vs := Options{VerticalScaling: true, EnvFromMetadata: true}
	env := Options{EnvFromMetadata: true}
	tests := []struct {
		name     string
		old, new mutation // applied to a fresh baseTemplate; nil = unchanged
		nilOld   bool
		nilNew   bool
		opts     Options
		want     Decision
	}{
		// Allowed changes.
		{name: "identical templates give a revision-only update", want: inPlace(UpdateSpec{})},
		{
			name: "image tag change",
			new:  func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "registry.example/app:1.1" },
			want: inPlace(UpdateSpec{ContainerImages: map[string]string{"app": "registry.example/app:1.1"}}),
		},
		{
			name: "tag to digest of possibly the same image is an image change",
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[1].Image = "registry.example/proxy@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			},
			want: inPlace(UpdateSpec{ContainerImages: map[string]string{
				"proxy": "registry.example/proxy@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}}),
		},
		{
			name: "images of all containers, matched by name",
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Image = "app:2"
				t.Spec.Containers[1].Image = "proxy:3"
			},
			want: inPlace(UpdateSpec{ContainerImages: map[string]string{"app": "app:2", "proxy": "proxy:3"}}),
		},
		{
			name: "labels added, changed and deleted",
			old:  func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Env = nil },
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Env = nil
				t.Labels["app"] = "web2"
				t.Labels["new"] = ""
				delete(t.Labels, "tier")
			},
			want: inPlace(UpdateSpec{Labels: map[string]*string{"app": strp("web2"), "new": strp(""), "tier": nil}}),
		},
		{
			name: "annotations added, changed and deleted",
			new: func(t *corev1.PodTemplateSpec) {
				t.Annotations["owner"] = "team-b"
				t.Annotations["added"] = "yes"
			},
			want: inPlace(UpdateSpec{Annotations: map[string]*string{"owner": strp("team-b"), "added": strp("yes")}}),
		},
		{
			name: "annotation deleted",
			new:  func(t *corev1.PodTemplateSpec) { delete(t.Annotations, "owner") },
			want: inPlace(UpdateSpec{Annotations: map[string]*string{"owner": nil}}),
		},
		{
			name: "nil and empty metadata maps are equal",
			old:  func(t *corev1.PodTemplateSpec) { t.Labels, t.Annotations = nil, map[string]string{} },
			new:  func(t *corev1.PodTemplateSpec) { t.Labels, t.Annotations = map[string]string{}, nil },
			want: inPlace(UpdateSpec{}),
		},
		{
			name: "labels from nil map",
			old:  func(t *corev1.PodTemplateSpec) { t.Labels = nil },
			new:  func(t *corev1.PodTemplateSpec) { t.Labels = map[string]string{"app": "web"} },
			want: inPlace(UpdateSpec{Labels: map[string]*string{"app": strp("web")}}),
		},
		{
			name: "managed keys are excluded from the metadata diff",
			old: func(t *corev1.PodTemplateSpec) {
				t.Labels["controller-revision-hash"] = "rev-1"
				t.Labels["lifecycle.apps.kruise.io/state"] = "Normal"
				t.Annotations["apps.kruise.io/inplace-update-state"] = "{}"
			},
			new: func(t *corev1.PodTemplateSpec) {
				t.Labels["controller-revision-hash"] = "rev-2"
				t.Labels["pod-template-hash"] = "abc"
				t.Labels["pod-template-generation"] = "2"
				t.Labels["statefulset.kubernetes.io/pod-name"] = "x-0"
				t.Labels["apps.kubernetes.io/pod-index"] = "0"
				t.Annotations["apps.kruise.io/specified-delete"] = "true"
			},
			want: inPlace(UpdateSpec{}),
		},
		{
			name: "env from a changed label restarts the reading container, image unchanged",
			opts: env,
			new:  func(t *corev1.PodTemplateSpec) { t.Labels["tier"] = "back" },
			want: inPlace(UpdateSpec{
				Labels:                    map[string]*string{"tier": strp("back")},
				EnvFromMetadataContainers: []string{"app"},
			}),
		},
		{
			name: "env from a changed label without kruise-daemon: recreate",
			new:  func(t *corev1.PodTemplateSpec) { t.Labels["tier"] = "back" },
			want: recreate("spec.containers[app].env reads a changed label or annotation: restarting the container " +
				"without an image change needs kruise-daemon (InPlaceUpdateEnvFromMetadata)"),
		},
		{
			name: "env from a changed label of a container whose image changes: in place without kruise-daemon",
			new: func(t *corev1.PodTemplateSpec) {
				t.Labels["tier"] = "back"
				t.Spec.Containers[0].Image = "app:2"
			},
			want: inPlace(UpdateSpec{
				ContainerImages:           map[string]string{"app": "app:2"},
				Labels:                    map[string]*string{"tier": strp("back")},
				EnvFromMetadataContainers: []string{"app"},
			}),
		},
		{
			name: "env from a deleted annotation restarts the reading container",
			opts: env,
			new:  func(t *corev1.PodTemplateSpec) { delete(t.Annotations, "config") },
			want: inPlace(UpdateSpec{
				Annotations:               map[string]*string{"config": nil},
				EnvFromMetadataContainers: []string{"app"},
			}),
		},
		{
			name: "env from metadata listed once per container, in template order, alongside images",
			opts: env,
			old: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[1].Env = []corev1.EnvVar{{Name: "T", ValueFrom: fieldRef("metadata.labels['tier']")}}
			},
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[1].Env = []corev1.EnvVar{{Name: "T", ValueFrom: fieldRef("metadata.labels['tier']")}}
				t.Labels["tier"] = "back"
				t.Annotations["config"] = "v2"
				t.Spec.Containers[0].Image = "app:2"
			},
			want: inPlace(UpdateSpec{
				ContainerImages:           map[string]string{"app": "app:2"},
				Labels:                    map[string]*string{"tier": strp("back")},
				Annotations:               map[string]*string{"config": strp("v2")},
				EnvFromMetadataContainers: []string{"app", "proxy"},
			}),
		},
		{
			name: "env reading an unchanged key, or a label of the same name as a changed annotation, restarts nothing",
			new:  func(t *corev1.PodTemplateSpec) { t.Labels["app"] = "web2"; t.Annotations["tier"] = "x" },
			want: inPlace(UpdateSpec{
				Labels:      map[string]*string{"app": strp("web2")},
				Annotations: map[string]*string{"tier": strp("x")},
			}),
		},
		{
			name: "env reading a managed key is not tracked",
			old: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[1].Env = []corev1.EnvVar{{Name: "R", ValueFrom: fieldRef("metadata.labels['controller-revision-hash']")}}
			},
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[1].Env = []corev1.EnvVar{{Name: "R", ValueFrom: fieldRef("metadata.labels['controller-revision-hash']")}}
				t.Labels["controller-revision-hash"] = "rev-2"
			},
			want: inPlace(UpdateSpec{}),
		},
		{
			name: "plain init container reading a changed label has run already: no restart",
			old: func(t *corev1.PodTemplateSpec) {
				t.Spec.InitContainers = []corev1.Container{initReading("tier", nil)}
				t.Spec.Containers[0].Env = nil
			},
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.InitContainers = []corev1.Container{initReading("tier", nil)}
				t.Spec.Containers[0].Env = nil
				t.Labels["tier"] = "back"
			},
			want: inPlace(UpdateSpec{Labels: map[string]*string{"tier": strp("back")}}),
		},
		{
			name: "sidecar init container reading a changed label cannot restart in place",
			opts: env,
			old: func(t *corev1.PodTemplateSpec) {
				t.Spec.InitContainers = []corev1.Container{initReading("tier", ptr.To(corev1.ContainerRestartPolicyAlways))}
			},
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.InitContainers = []corev1.Container{initReading("tier", ptr.To(corev1.ContainerRestartPolicyAlways))}
				t.Labels["tier"] = "back"
			},
			want: recreate("spec.initContainers[sidecar].env reads metadata.labels['tier'], which changed"),
		},

		// Resources.
		{
			name: "cpu change without vertical scaling recreates",
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Resources = resources("150m", "200m", "128Mi", "256Mi")
			},
			want: recreate("spec.containers[app].resources changed"),
		},
		{
			name: "cpu and memory change with vertical scaling resizes",
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Resources = resources("150m", "300m", "256Mi", "512Mi")
			},
			opts: vs,
			want: inPlace(UpdateSpec{ContainerResources: map[string]corev1.ResourceRequirements{
				"app": resources("150m", "300m", "256Mi", "512Mi")}}),
		},
		{
			name: "resources added to a Burstable pod's other container resize",
			new:  func(t *corev1.PodTemplateSpec) { t.Spec.Containers[1].Resources = resources("50m", "", "", "") },
			opts: vs,
			want: inPlace(UpdateSpec{ContainerResources: map[string]corev1.ResourceRequirements{
				"proxy": resources("50m", "", "", "")}}),
		},
		{
			name: "equal quantities in other notation are no change",
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Resources = resources("0.1", "200m", "134217728", "256Mi")
			},
			want: inPlace(UpdateSpec{}),
		},
		{
			name: "ephemeral-storage change recreates even with vertical scaling",
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
				t.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("1")
			},
			opts: vs,
			want: recreate("spec.containers[app].resources.requests[ephemeral-storage] changed"),
		},
		{
			name: "extended resource and claims changes recreate with vertical scaling",
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Resources.Limits["example.com/gpu"] = resource.MustParse("1")
				t.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
			},
			opts: vs,
			want: recreate("spec.containers[app].resources.claims changed",
				"spec.containers[app].resources.limits[example.com/gpu] changed"),
		},
		{
			name: "resize that changes the QoS class recreates",
			old: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Resources = resources("1", "1", "1Gi", "1Gi")
				t.Spec.Containers[1].Resources = resources("", "100m", "", "64Mi")
			},
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Resources = resources("500m", "1", "1Gi", "1Gi")
				t.Spec.Containers[1].Resources = resources("", "100m", "", "64Mi")
			},
			opts: vs,
			want: recreate("spec.containers[*].resources: QoS class would change from Guaranteed to Burstable"),
		},
		{
			name: "Guaranteed resize that stays Guaranteed",
			old: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers = t.Spec.Containers[:1]
				t.Spec.Containers[0].Resources = resources("1", "1", "1Gi", "1Gi")
			},
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers = t.Spec.Containers[:1]
				t.Spec.Containers[0].Resources = resources("", "2", "", "2Gi")
			},
			opts: vs,
			want: inPlace(UpdateSpec{ContainerResources: map[string]corev1.ResourceRequirements{"app": resources("", "2", "", "2Gi")}}),
		},
		{
			name: "resources removed from a BestEffort-making pod recreate",
			old:  func(t *corev1.PodTemplateSpec) { t.Spec.Containers = t.Spec.Containers[:1] },
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers = t.Spec.Containers[:1]
				t.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
			},
			opts: vs,
			want: recreate("spec.containers[*].resources: QoS class would change from Burstable to BestEffort"),
		},

		// Recreate reasons.
		{name: "nil old template", nilOld: true, want: recreate("pod template missing")},
		{name: "nil new template", nilNew: true, want: recreate("pod template missing")},
		{
			name: "command",
			new:  func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Command = []string{"/app", "-v"} },
			want: recreate("spec.containers[app].command changed"),
		},
		{
			name: "args",
			new:  func(t *corev1.PodTemplateSpec) { t.Spec.Containers[1].Args = []string{"--x"} },
			want: recreate("spec.containers[proxy].args changed"),
		},
		{
			name: "env value",
			new:  func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Env[0].Value = "dev" },
			want: recreate("spec.containers[app].env changed"),
		},
		{
			name: "ports",
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}}
			},
			want: recreate("spec.containers[app].ports changed"),
		},
		{
			name: "resize policy",
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.RestartContainer}}
			},
			opts: vs,
			want: recreate("spec.containers[app].resizePolicy changed"),
		},
		{
			name: "volumes",
			new:  func(t *corev1.PodTemplateSpec) { t.Spec.Volumes = nil },
			want: recreate("spec.volumes changed"),
		},
		{
			name: "init container image",
			old: func(t *corev1.PodTemplateSpec) {
				t.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox:1"}}
			},
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox:2"}}
			},
			want: recreate("spec.initContainers changed"),
		},
		{
			name: "scheduling fields",
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.NodeSelector = map[string]string{"zone": "a"}
				t.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
				t.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}
				t.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "x"}}
			},
			want: recreate("spec.nodeSelector changed", "spec.affinity changed", "spec.tolerations changed",
				"spec.readinessGates changed"),
		},
		{
			name: "pod-level resources",
			new:  func(t *corev1.PodTemplateSpec) { r := resources("1", "", "", ""); t.Spec.Resources = &r },
			opts: vs,
			want: recreate("spec.resources changed"),
		},
		{
			name: "template metadata other than labels and annotations",
			new:  func(t *corev1.PodTemplateSpec) { t.Finalizers = []string{"example.com/keep"} },
			want: recreate("metadata.finalizers changed"),
		},
		{
			name: "restartedAt annotation asks for new containers",
			new:  func(t *corev1.PodTemplateSpec) { t.Annotations[RestartedAtAnnotation] = "2026-01-01T00:00:00Z" },
			want: recreate("metadata.annotations[kubectl.kubernetes.io/restartedAt] changed: a restart was requested"),
		},
		{
			name: "restartedAt annotation removed is a metadata change",
			old:  func(t *corev1.PodTemplateSpec) { t.Annotations[RestartedAtAnnotation] = "2026-01-01T00:00:00Z" },
			want: inPlace(UpdateSpec{Annotations: map[string]*string{RestartedAtAnnotation: nil}}),
		},
		{
			name: "container added",
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers = append(t.Spec.Containers, corev1.Container{Name: "b", Image: "b"})
			},
			want: recreate(`spec.containers: container "b" added`),
		},
		{
			name: "container removed",
			new:  func(t *corev1.PodTemplateSpec) { t.Spec.Containers = t.Spec.Containers[:1] },
			want: recreate(`spec.containers: container "proxy" removed`),
		},
		{
			name: "container renamed",
			new:  func(t *corev1.PodTemplateSpec) { t.Spec.Containers[1].Name = "envoy" },
			want: recreate(`spec.containers: container "proxy" removed`, `spec.containers: container "envoy" added`),
		},
		{
			name: "containers reordered with identical content",
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0], t.Spec.Containers[1] = t.Spec.Containers[1], t.Spec.Containers[0]
			},
			want: recreate("spec.containers: order changed from [app proxy] to [proxy app]"),
		},
		{
			name: "duplicate container names",
			new:  func(t *corev1.PodTemplateSpec) { t.Spec.Containers[1].Name = "app" },
			want: recreate(`spec.containers: container name "app" repeated in the new template`),
		},
		{
			name: "allowed changes alongside a disallowed one: only the reasons are reported",
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Image = "app:2"
				t.Labels["tier"] = "back"
				t.Spec.Containers[1].Command = []string{"envoy"}
				t.Spec.HostNetwork = true
			},
			want: recreate("spec.hostNetwork changed", "spec.containers[proxy].command changed"),
		},
		{
			name: "several reasons in stable order: metadata, pod spec, containers",
			new: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[1].Args = []string{"a"}
				t.Spec.Containers[0].Resources = resources("1", "2", "", "")
				t.Spec.Containers[0].WorkingDir = "/w"
				t.Spec.ServiceAccountName = "sa"
				t.Namespace = "other"
			},
			want: recreate("metadata.namespace changed", "spec.serviceAccountName changed",
				"spec.containers[app].workingDir changed", "spec.containers[app].resources changed",
				"spec.containers[proxy].args changed"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldT, newT := baseTemplate(), baseTemplate()
			if tc.old != nil {
				tc.old(oldT)
			}
			if tc.new != nil {
				tc.new(newT)
			}
			if tc.nilOld {
				oldT = nil
			}
			if tc.nilNew {
				newT = nil
			}
			oldBefore, newBefore := oldT.DeepCopy(), newT.DeepCopy()
			got := Plan(oldT, newT, "rev-2", tc.opts)
			if render(got) != render(tc.want) {
				t.Errorf("Plan:\n got %s\nwant %s", render(got), render(tc.want))
			}
			if got.InPlace() == (len(got.RecreateReasons) > 0) {
				t.Errorf("Decision must be either in place or recreate: %s", render(got))
			}
			if !equality.Semantic.DeepEqual(oldT, oldBefore) || !equality.Semantic.DeepEqual(newT, newBefore) {
				t.Errorf("Plan modified its inputs")
			}
			if got.Spec != nil && got.Spec.IsRevisionOnly() != (render(got) == `in place to "rev-2"`) {
				t.Errorf("IsRevisionOnly() = %v for %s", got.Spec.IsRevisionOnly(), render(got))
			}
		})
	}
}

func initReading(label string, policy *corev1.ContainerRestartPolicy) corev1.Container {
	return corev1.Container{
		Name: "sidecar", Image: "sidecar:1", RestartPolicy: policy,
		Env: []corev1.EnvVar{{Name: "L", ValueFrom: fieldRef("metadata.labels['" + label + "']")}},
	}
}

func TestPlanSpecSharesNoMemory(t *testing.T) {
	oldT, newT := baseTemplate(), baseTemplate()
	newT.Labels["tier"] = "back"
	newT.Spec.Containers[0].Resources = resources("1", "2", "1Gi", "2Gi")
	d := Plan(oldT, newT, "rev-2", Options{VerticalScaling: true, EnvFromMetadata: true})
	if !d.InPlace() {
		t.Fatalf("want in place, got %s", render(d))
	}
	*d.Spec.Labels["tier"] = "changed"
	d.Spec.ContainerResources["app"].Requests[corev1.ResourceCPU] = resource.MustParse("9")
	if newT.Labels["tier"] != "back" || newT.Spec.Containers[0].Resources.Requests.Cpu().String() != "1" {
		t.Errorf("UpdateSpec aliases the template: %v %v", newT.Labels, newT.Spec.Containers[0].Resources)
	}
}
