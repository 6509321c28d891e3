package defaults

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// sidecarContainerDefaulted is the embedded container {Name: "c", Image: "c:v1"} with
// Kubernetes' SetDefaults_Container applied.
var sidecarContainerDefaulted = corev1.Container{
	Name: "c", Image: "c:v1", ImagePullPolicy: corev1.PullIfNotPresent,
	TerminationMessagePath: corev1.TerminationMessagePathDefault, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
}

func TestSetDefaultsSidecarSetV1beta1(t *testing.T) {
	defaulted := func(inject v1beta1.SidecarSetPodInjectPolicy) v1beta1.SidecarSetContainer {
		return v1beta1.SidecarSetContainer{
			Container:         sidecarContainerDefaulted,
			PodInjectPolicy:   inject,
			UpgradeStrategy:   v1beta1.SidecarSetContainerUpgradeStrategy{UpgradeType: v1beta1.SidecarSetColdUpgrade},
			ShareVolumePolicy: v1beta1.SidecarSetShareVolumePolicy{Type: v1beta1.SidecarSetShareVolumePolicyDisabled},
			ResourcesPolicy:   &v1beta1.SidecarSetResourcesPolicy{TargetContainersNameRegex: ".*"},
		}
	}
	user := v1beta1.SidecarSetContainer{
		Container: corev1.Container{
			Name: "c", Image: "c", ImagePullPolicy: corev1.PullNever,
			TerminationMessagePath: "/tmp/t", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		},
		PodInjectPolicy:   v1beta1.SidecarSetAfterAppContainer,
		UpgradeStrategy:   v1beta1.SidecarSetContainerUpgradeStrategy{UpgradeType: v1beta1.SidecarSetHotUpgrade},
		ShareVolumePolicy: v1beta1.SidecarSetShareVolumePolicy{Type: v1beta1.SidecarSetShareVolumePolicyEnabled},
		ResourcesPolicy:   &v1beta1.SidecarSetResourcesPolicy{TargetContainersNameRegex: "^app$"},
	}
	userInit := *user.DeepCopy()
	userInit.PodInjectPolicy = v1beta1.SidecarSetBeforeAppContainer
	userSet := &v1beta1.SidecarSet{Spec: v1beta1.SidecarSetSpec{
		UpdateStrategy: v1beta1.SidecarSetUpdateStrategy{
			Type: v1beta1.SidecarSetNotUpdateStrategy, MaxUnavailable: ioi(0), Partition: ios("10%"),
		},
		RevisionHistoryLimit: i32(0),
		InjectionStrategy: v1beta1.SidecarSetInjectionStrategy{
			Revision: &v1beta1.SidecarSetInjectRevision{Policy: v1beta1.SidecarSetPartialRevisionPolicy},
		},
		PatchPodMetadata: []v1beta1.SidecarSetPatchPodMetadata{{PatchPolicy: v1beta1.SidecarSetOverwritePatchPolicy}},
		Containers:       []v1beta1.SidecarSetContainer{user},
		InitContainers:   []v1beta1.SidecarSetContainer{userInit},
	}}
	run(t, []tcase[v1beta1.SidecarSet]{
		{
			name: "empty object gets every default",
			in:   &v1beta1.SidecarSet{},
			want: &v1beta1.SidecarSet{Spec: v1beta1.SidecarSetSpec{
				UpdateStrategy: v1beta1.SidecarSetUpdateStrategy{
					Type: v1beta1.SidecarSetRollingUpdateStrategy, MaxUnavailable: ioi(1), Partition: ioi(0),
				},
				RevisionHistoryLimit: i32(10),
			}},
		},
		{
			name: "nested entries get every default, init containers inject after the app's",
			in: &v1beta1.SidecarSet{Spec: v1beta1.SidecarSetSpec{
				InjectionStrategy: v1beta1.SidecarSetInjectionStrategy{Revision: &v1beta1.SidecarSetInjectRevision{}},
				PatchPodMetadata:  []v1beta1.SidecarSetPatchPodMetadata{{}},
				Containers: []v1beta1.SidecarSetContainer{{
					Container: corev1.Container{Name: "c", Image: "c:v1"}, ResourcesPolicy: &v1beta1.SidecarSetResourcesPolicy{},
				}},
				InitContainers: []v1beta1.SidecarSetContainer{{
					Container: corev1.Container{Name: "c", Image: "c:v1"}, ResourcesPolicy: &v1beta1.SidecarSetResourcesPolicy{},
				}},
			}},
			want: &v1beta1.SidecarSet{Spec: v1beta1.SidecarSetSpec{
				UpdateStrategy: v1beta1.SidecarSetUpdateStrategy{
					Type: v1beta1.SidecarSetRollingUpdateStrategy, MaxUnavailable: ioi(1), Partition: ioi(0),
				},
				RevisionHistoryLimit: i32(10),
				InjectionStrategy: v1beta1.SidecarSetInjectionStrategy{
					Revision: &v1beta1.SidecarSetInjectRevision{Policy: v1beta1.SidecarSetAlwaysRevisionPolicy},
				},
				PatchPodMetadata: []v1beta1.SidecarSetPatchPodMetadata{{PatchPolicy: v1beta1.SidecarSetRetainPatchPolicy}},
				Containers:       []v1beta1.SidecarSetContainer{defaulted(v1beta1.SidecarSetBeforeAppContainer)},
				InitContainers:   []v1beta1.SidecarSetContainer{defaulted(v1beta1.SidecarSetAfterAppContainer)},
			}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsSidecarSetV1beta1, (*v1beta1.SidecarSet).DeepCopy)
}

func TestSetDefaultsSidecarSet(t *testing.T) {
	user := v1alpha1.SidecarSetContainer{
		Container:         corev1.Container{Name: "c", Image: "c:latest", ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePath: "/t", TerminationMessagePolicy: corev1.TerminationMessageReadFile},
		PodInjectPolicy:   v1alpha1.SidecarSetAfterAppContainer,
		UpgradeStrategy:   v1alpha1.SidecarSetContainerUpgradeStrategy{UpgradeType: v1alpha1.SidecarSetHotUpgrade},
		ShareVolumePolicy: v1alpha1.SidecarSetShareVolumePolicy{Type: v1alpha1.SidecarSetShareVolumePolicyEnabled},
	}
	userInit := *user.DeepCopy()
	userInit.PodInjectPolicy = v1alpha1.SidecarSetBeforeAppContainer
	userSet := &v1alpha1.SidecarSet{Spec: v1alpha1.SidecarSetSpec{
		UpdateStrategy: v1alpha1.SidecarSetUpdateStrategy{
			Type: v1alpha1.SidecarSetNotUpdateStrategy, MaxUnavailable: ios("50%"), Partition: ioi(0),
		},
		RevisionHistoryLimit: i32(3),
		InjectionStrategy: v1alpha1.SidecarSetInjectionStrategy{
			Revision: &v1alpha1.SidecarSetInjectRevision{Policy: v1alpha1.SidecarSetPartialRevisionPolicy},
		},
		PatchPodMetadata: []v1alpha1.SidecarSetPatchPodMetadata{{PatchPolicy: v1alpha1.SidecarSetMergePatchJSONPatchPolicy}},
		Containers:       []v1alpha1.SidecarSetContainer{user},
		InitContainers:   []v1alpha1.SidecarSetContainer{userInit},
	}}
	defaulted := func(inject v1alpha1.SidecarSetPodInjectPolicy) v1alpha1.SidecarSetContainer {
		return v1alpha1.SidecarSetContainer{
			Container:         sidecarContainerDefaulted,
			PodInjectPolicy:   inject,
			UpgradeStrategy:   v1alpha1.SidecarSetContainerUpgradeStrategy{UpgradeType: v1alpha1.SidecarSetColdUpgrade},
			ShareVolumePolicy: v1alpha1.SidecarSetShareVolumePolicy{Type: v1alpha1.SidecarSetShareVolumePolicyDisabled},
		}
	}
	run(t, []tcase[v1alpha1.SidecarSet]{
		{
			name: "empty object gets every default",
			in: &v1alpha1.SidecarSet{Spec: v1alpha1.SidecarSetSpec{
				InjectionStrategy: v1alpha1.SidecarSetInjectionStrategy{Revision: &v1alpha1.SidecarSetInjectRevision{}},
				PatchPodMetadata:  []v1alpha1.SidecarSetPatchPodMetadata{{}},
				Containers:        []v1alpha1.SidecarSetContainer{{Container: corev1.Container{Name: "c", Image: "c:v1"}}},
				InitContainers:    []v1alpha1.SidecarSetContainer{{Container: corev1.Container{Name: "c", Image: "c:v1"}}},
			}},
			want: &v1alpha1.SidecarSet{Spec: v1alpha1.SidecarSetSpec{
				UpdateStrategy: v1alpha1.SidecarSetUpdateStrategy{
					Type: v1alpha1.SidecarSetRollingUpdateStrategy, MaxUnavailable: ioi(1), Partition: ioi(0),
				},
				RevisionHistoryLimit: i32(10),
				InjectionStrategy: v1alpha1.SidecarSetInjectionStrategy{
					Revision: &v1alpha1.SidecarSetInjectRevision{Policy: v1alpha1.SidecarSetAlwaysRevisionPolicy},
				},
				PatchPodMetadata: []v1alpha1.SidecarSetPatchPodMetadata{{PatchPolicy: v1alpha1.SidecarSetRetainPatchPolicy}},
				Containers:       []v1alpha1.SidecarSetContainer{defaulted(v1alpha1.SidecarSetBeforeAppContainer)},
				InitContainers:   []v1alpha1.SidecarSetContainer{defaulted(v1alpha1.SidecarSetAfterAppContainer)},
			}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsSidecarSet, (*v1alpha1.SidecarSet).DeepCopy)
}

// sidecarSetContainerParts is a v1beta1 SidecarSet whose containers and volumes have a part of
// every kind the defaulting looks at, and the same SidecarSet as the defaulting must leave it.
func sidecarSetContainerParts() (in, want *v1beta1.SidecarSet) {
	probe := func(defaulted bool) *corev1.Probe {
		p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}}
		if defaulted {
			p.HTTPGet.Path, p.HTTPGet.Scheme = "/", corev1.URISchemeHTTP
			p.TimeoutSeconds, p.PeriodSeconds, p.SuccessThreshold, p.FailureThreshold = 1, 10, 1, 3
		}
		return p
	}
	hook := func(defaulted bool) *corev1.LifecycleHandler {
		h := &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("http")}}
		if defaulted {
			h.HTTPGet.Path, h.HTTPGet.Scheme = "/", corev1.URISchemeHTTP
		}
		return h
	}
	container := func(image string, inject v1beta1.SidecarSetPodInjectPolicy, defaulted bool) v1beta1.SidecarSetContainer {
		q := "0.0001"
		if defaulted {
			q = "1m"
		}
		c := v1beta1.SidecarSetContainer{
			Container: corev1.Container{
				Name: "s", Image: image,
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
				Env:   []corev1.EnvVar{{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)},
					Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)},
				},
				LivenessProbe:  probe(defaulted),
				ReadinessProbe: probe(defaulted),
				StartupProbe:   probe(false), // OpenKruise leaves a sidecar's startup probe as it is
				Lifecycle:      &corev1.Lifecycle{PostStart: hook(defaulted), PreStop: hook(defaulted)},
			},
			TransferEnv: []v1beta1.SidecarSetTransferEnvVar{{
				EnvName:                 "E",
				SourceContainerNameFrom: &v1beta1.SidecarSetSourceContainerNameSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['c']"}},
			}},
		}
		if defaulted {
			c.PodInjectPolicy = inject
			c.UpgradeStrategy.UpgradeType = v1beta1.SidecarSetColdUpgrade
			c.ShareVolumePolicy.Type = v1beta1.SidecarSetShareVolumePolicyDisabled
			c.ImagePullPolicy = corev1.PullAlways // "s" and "s:latest" both pull Always
			c.TerminationMessagePath = corev1.TerminationMessagePathDefault
			c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
			c.Ports[0].Protocol = corev1.ProtocolTCP
			c.Env[0].ValueFrom.FieldRef.APIVersion = "v1"
			c.TransferEnv[0].SourceContainerNameFrom.FieldRef.APIVersion = "v1"
		}
		return c
	}
	in = &v1beta1.SidecarSet{Spec: v1beta1.SidecarSetSpec{
		Containers:     []v1beta1.SidecarSetContainer{container("s", "", false)},
		InitContainers: []v1beta1.SidecarSetContainer{container("s:latest", "", false)},
		Volumes: []corev1.Volume{
			{Name: "none"},
			{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/h"}}},
			{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
			{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}},
		},
	}}
	want = in.DeepCopy()
	want.Spec.UpdateStrategy = v1beta1.SidecarSetUpdateStrategy{Type: v1beta1.SidecarSetRollingUpdateStrategy, MaxUnavailable: ioi(1), Partition: ioi(0)}
	want.Spec.RevisionHistoryLimit = i32(10)
	want.Spec.Containers = []v1beta1.SidecarSetContainer{container("s", v1beta1.SidecarSetBeforeAppContainer, true)}
	want.Spec.InitContainers = []v1beta1.SidecarSetContainer{container("s:latest", v1beta1.SidecarSetAfterAppContainer, true)}
	unset := corev1.HostPathUnset
	want.Spec.Volumes[0].EmptyDir = &corev1.EmptyDirVolumeSource{}
	want.Spec.Volumes[1].HostPath.Type = &unset
	want.Spec.Volumes[2].Secret.DefaultMode = i32(corev1.SecretVolumeSourceDefaultMode)
	want.Spec.Volumes[3].ConfigMap.DefaultMode = i32(corev1.ConfigMapVolumeSourceDefaultMode)
	return in, want
}

// The embedded containers get Kubernetes' container defaults (their liveness and readiness probes
// SetDefaults_Probe, their startup probe nothing), transferEnv's fieldRef its apiVersion, and the
// volumes Kubernetes' volume defaults.
// (Quantities are compared by value and by their JSON: rounding leaves a different internal form.)
func TestSetDefaultsSidecarSetContainerParts(t *testing.T) {
	in, want := sidecarSetContainerParts()
	got := in.DeepCopy()
	SetDefaultsSidecarSetV1beta1(got)
	if !equality.Semantic.DeepEqual(got, want) || js(got) != js(want) {
		t.Errorf("defaulted object differs\n got: %s\nwant: %s", js(got), js(want))
	}
	again := got.DeepCopy()
	SetDefaultsSidecarSetV1beta1(again)
	if !equality.Semantic.DeepEqual(again, got) || js(again) != js(got) {
		t.Errorf("not idempotent\n once: %s\ntwice: %s", js(got), js(again))
	}
}

// The v1alpha1 defaulting stores what the v1beta1 one does.
func TestSetDefaultsSidecarSetVersionsAgree(t *testing.T) {
	in, want := sidecarSetContainerParts()
	alpha := &v1alpha1.SidecarSet{}
	if err := alpha.ConvertFrom(in); err != nil {
		t.Fatal(err)
	}
	SetDefaultsSidecarSet(alpha)
	got := &v1beta1.SidecarSet{}
	if err := alpha.ConvertTo(got); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got.Spec, want.Spec) || js(got.Spec) != js(want.Spec) {
		t.Errorf("v1alpha1 defaulted, as v1beta1:\n got: %s\nwant: %s", js(got.Spec), js(want.Spec))
	}
}
