package validating

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/test/compat"
)

// sidecar is a defaulted sidecar container of the given name.
func sidecar(name string) v1beta1.SidecarSetContainer {
	return v1beta1.SidecarSetContainer{
		Container:         corev1.Container{Name: name, Image: name + ":v1"},
		PodInjectPolicy:   v1beta1.SidecarSetBeforeAppContainer,
		UpgradeStrategy:   v1beta1.SidecarSetContainerUpgradeStrategy{UpgradeType: v1beta1.SidecarSetColdUpgrade},
		ShareVolumePolicy: v1beta1.SidecarSetShareVolumePolicy{Type: v1beta1.SidecarSetShareVolumePolicyDisabled},
	}
}

// initSidecar is a defaulted init container of the given name.
func initSidecar(name string) v1beta1.SidecarSetContainer {
	c := sidecar(name)
	c.PodInjectPolicy = v1beta1.SidecarSetAfterAppContainer
	return c
}

// validSidecarSet is a defaulted SidecarSet every rule accepts: a container mounting the
// SidecarSet's volume, an init container, a rolling update.
func validSidecarSet() *v1beta1.SidecarSet {
	log := sidecar("log")
	log.VolumeMounts = []corev1.VolumeMount{{Name: "logs", MountPath: "/var/log"}}
	return &v1beta1.SidecarSet{
		ObjectMeta: metav1.ObjectMeta{Name: "log-agent", Labels: map[string]string{"team": "a"}},
		Spec: v1beta1.SidecarSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Containers:     []v1beta1.SidecarSetContainer{log},
			InitContainers: []v1beta1.SidecarSetContainer{initSidecar("setup")},
			Volumes:        []corev1.Volume{{Name: "logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			UpdateStrategy: v1beta1.SidecarSetUpdateStrategy{Type: v1beta1.SidecarSetRollingUpdateStrategy,
				Partition: intVal(0), MaxUnavailable: intVal(1)},
			RevisionHistoryLimit: ptr.To[int32](10),
		},
	}
}

// scsCase is one SidecarSet and the errors expected for it.
type scsCase struct {
	name   string
	mutate func(*v1beta1.SidecarSet)
	want   []want
}

func runSidecarSetCases(t *testing.T, cases []scsCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := validSidecarSet()
			tc.mutate(set)
			errs := ValidateSidecarSet(set)
			checkErrors(t, errs, tc.want)
			for _, e := range errs {
				if e.Detail == "" && e.Type != field.ErrorTypeRequired && e.Type != field.ErrorTypeNotSupported &&
					e.Type != field.ErrorTypeDuplicate && e.Type != field.ErrorTypeTooLong {
					t.Errorf("%s: no message says what is wrong", e.Field)
				}
			}
		})
	}
}

const (
	pUpdate = "spec.updateStrategy"
	pC0     = "spec.containers[0]"
	pI0     = "spec.initContainers[0]"
	pPatch0 = "spec.patchPodMetadata[0]"
)

func c0(s *v1beta1.SidecarSet) *v1beta1.SidecarSetContainer { return &s.Spec.Containers[0] }
func i0(s *v1beta1.SidecarSet) *v1beta1.SidecarSetContainer { return &s.Spec.InitContainers[0] }

func withNamespace(s *v1beta1.SidecarSet, ns string) {
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[v1alpha1.ConversionV1alpha1OnlyAnnotation] = `{"spec":{"namespace":"` + ns + `"}}`
}

func TestValidateSidecarSetScope(t *testing.T) {
	nsSel := &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	runSidecarSetCases(t, []scsCase{
		{"valid", func(*v1beta1.SidecarSet) {}, nil},
		{"name with a dot", func(s *v1beta1.SidecarSet) { s.Name = "log.agent" }, []want{{field.ErrorTypeInvalid, "metadata.name"}}},
		{"name of 64 characters", func(s *v1beta1.SidecarSet) { s.Name = strings.Repeat("a", 64) }, []want{{field.ErrorTypeTooLong, "metadata.name"}}},
		{"name of 63 characters", func(s *v1beta1.SidecarSet) { s.Name = strings.Repeat("a", 63) }, nil},
		{"selector missing", func(s *v1beta1.SidecarSet) { s.Spec.Selector = nil }, []want{{field.ErrorTypeRequired, "spec.selector"}}},
		{"selector empty", func(s *v1beta1.SidecarSet) { s.Spec.Selector = &metav1.LabelSelector{} }, []want{{field.ErrorTypeInvalid, "spec.selector"}}},
		{"selector with an invalid value", func(s *v1beta1.SidecarSet) { s.Spec.Selector.MatchLabels["app"] = "web-" },
			[]want{{field.ErrorTypeInvalid, "spec.selector.matchLabels"}}},
		{"selector with an unknown operator", func(s *v1beta1.SidecarSet) {
			s.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near", Values: []string{"x"}}}
		}, []want{{field.ErrorTypeInvalid, "spec.selector.matchExpressions[0].operator"}}},
		{"namespaceSelector", func(s *v1beta1.SidecarSet) { s.Spec.NamespaceSelector = nsSel }, nil},
		{"namespaceSelector empty", func(s *v1beta1.SidecarSet) { s.Spec.NamespaceSelector = &metav1.LabelSelector{} },
			[]want{{field.ErrorTypeInvalid, "spec.namespaceSelector"}}},
		{"v1alpha1 namespace", func(s *v1beta1.SidecarSet) { withNamespace(s, "ns") }, nil},
		{"v1alpha1 namespace and namespaceSelector", func(s *v1beta1.SidecarSet) {
			withNamespace(s, "ns")
			s.Spec.NamespaceSelector = nsSel
		}, []want{{field.ErrorTypeForbidden, "spec.namespaceSelector"}}},
		{"v1alpha1 namespace and the namespaceSelector the conversion makes of it", func(s *v1beta1.SidecarSet) {
			withNamespace(s, "ns")
			s.Spec.NamespaceSelector = v1alpha1.NamespaceSelectorFor("ns")
		}, nil},
		{"v1alpha1-only annotation not JSON", func(s *v1beta1.SidecarSet) {
			s.Annotations = map[string]string{v1alpha1.ConversionV1alpha1OnlyAnnotation: "{"}
		}, []want{{field.ErrorTypeInvalid, "metadata.annotations[apps.kruise.io/conversion-v1alpha1-only]"}}},
	})
}

func TestValidateSidecarSetInjectionStrategy(t *testing.T) {
	rev := func(r v1beta1.SidecarSetInjectRevision) func(*v1beta1.SidecarSet) {
		return func(s *v1beta1.SidecarSet) { s.Spec.InjectionStrategy.Revision = &r }
	}
	p := "spec.injectionStrategy.revision"
	runSidecarSetCases(t, []scsCase{
		{"revisionName", rev(v1beta1.SidecarSetInjectRevision{RevisionName: ptr.To("log-agent-abc"), Policy: v1beta1.SidecarSetAlwaysRevisionPolicy}), nil},
		{"customVersion, Partial", rev(v1beta1.SidecarSetInjectRevision{CustomVersion: ptr.To("v1"), Policy: v1beta1.SidecarSetPartialRevisionPolicy}), nil},
		{"policy unset", rev(v1beta1.SidecarSetInjectRevision{CustomVersion: ptr.To("v1")}), nil},
		{"neither revisionName nor customVersion", rev(v1beta1.SidecarSetInjectRevision{Policy: v1beta1.SidecarSetAlwaysRevisionPolicy}),
			[]want{{field.ErrorTypeRequired, p}}},
		{"unknown policy", rev(v1beta1.SidecarSetInjectRevision{CustomVersion: ptr.To("v1"), Policy: "Sometimes"}),
			[]want{{field.ErrorTypeNotSupported, p + ".policy"}}},
	})
}

func TestValidateSidecarSetUpdateStrategy(t *testing.T) {
	us := func(s *v1beta1.SidecarSet) *v1beta1.SidecarSetUpdateStrategy { return &s.Spec.UpdateStrategy }
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
	native := func(s *v1beta1.SidecarSet) { i0(s).RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways) }
	runSidecarSetCases(t, []scsCase{
		{"type unset (defaulted to RollingUpdate)", func(s *v1beta1.SidecarSet) { us(s).Type = "" }, nil},
		{"type unknown", func(s *v1beta1.SidecarSet) { us(s).Type = "OnDelete" }, []want{{field.ErrorTypeNotSupported, pUpdate + ".type"}}},
		{"NotUpdate checks nothing else", func(s *v1beta1.SidecarSet) {
			us(s).Type = v1beta1.SidecarSetNotUpdateStrategy
			us(s).MaxUnavailable, us(s).Selector = intVal(-1), &metav1.LabelSelector{}
		}, nil},
		{"native sidecar init container with RollingUpdate", native, []want{{field.ErrorTypeForbidden, pUpdate + ".type"}}},
		{"native sidecar init container with NotUpdate", func(s *v1beta1.SidecarSet) {
			native(s)
			us(s).Type = v1beta1.SidecarSetNotUpdateStrategy
		}, nil},
		{"selector", func(s *v1beta1.SidecarSet) { us(s).Selector = sel }, nil},
		{"selector empty", func(s *v1beta1.SidecarSet) { us(s).Selector = &metav1.LabelSelector{} }, []want{{field.ErrorTypeInvalid, pUpdate + ".selector"}}},
		{"selector and partition 1", func(s *v1beta1.SidecarSet) { us(s).Selector, us(s).Partition = sel, intVal(1) },
			[]want{{field.ErrorTypeForbidden, pUpdate + ".selector"}}},
		{"selector and partition 0%", func(s *v1beta1.SidecarSet) { us(s).Selector, us(s).Partition = sel, intOrStr("0%") },
			[]want{{field.ErrorTypeForbidden, pUpdate + ".selector"}}},
		{"partition 50%", func(s *v1beta1.SidecarSet) { us(s).Partition = intOrStr("50%") }, nil},
		{"partition 150% (no upper bound)", func(s *v1beta1.SidecarSet) { us(s).Partition = intOrStr("150%") }, nil},
		{"partition -1", func(s *v1beta1.SidecarSet) { us(s).Partition = intVal(-1) }, []want{{field.ErrorTypeInvalid, pUpdate + ".partition"}}},
		{"partition a string without %", func(s *v1beta1.SidecarSet) { us(s).Partition = ptr.To(intstr.FromString("5")) },
			[]want{{field.ErrorTypeInvalid, pUpdate + ".partition"}}},
		{"maxUnavailable 0 (accepted, as OpenKruise does)", func(s *v1beta1.SidecarSet) { us(s).MaxUnavailable = intVal(0) }, nil},
		{"maxUnavailable 0%", func(s *v1beta1.SidecarSet) { us(s).MaxUnavailable = intOrStr("0%") }, nil},
		{"maxUnavailable -1", func(s *v1beta1.SidecarSet) { us(s).MaxUnavailable = intVal(-1) }, []want{{field.ErrorTypeInvalid, pUpdate + ".maxUnavailable"}}},
		{"maxUnavailable x%", func(s *v1beta1.SidecarSet) { us(s).MaxUnavailable = ptr.To(intstr.FromString("x%")) },
			[]want{{field.ErrorTypeInvalid, pUpdate + ".maxUnavailable"}}},
		{"priorityStrategy", func(s *v1beta1.SidecarSet) {
			us(s).PriorityStrategy = &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{{Weight: 50, MatchSelector: *sel}}}
		}, nil},
		{"priorityStrategy weight and order", func(s *v1beta1.SidecarSet) {
			us(s).PriorityStrategy = &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{{Weight: 50, MatchSelector: *sel}},
				OrderPriority: []appspub.UpdatePriorityOrderTerm{{OrderedKey: "k"}}}
		}, []want{{field.ErrorTypeForbidden, pUpdate + ".priorityStrategy"}}},
		{"priorityStrategy weight 101", func(s *v1beta1.SidecarSet) {
			us(s).PriorityStrategy = &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{{Weight: 101, MatchSelector: *sel}}}
		}, []want{{field.ErrorTypeInvalid, pUpdate + ".priorityStrategy.weightPriority[0].weight"}}},
		{"scatterStrategy, a term without value", func(s *v1beta1.SidecarSet) {
			us(s).ScatterStrategy = v1beta1.SidecarSetUpdateScatterStrategy{{Key: "zone", Value: "a"}, {Key: "rack"}}
		}, nil},
		{"scatterStrategy term without key", func(s *v1beta1.SidecarSet) {
			us(s).ScatterStrategy = v1beta1.SidecarSetUpdateScatterStrategy{{Value: "a"}}
		}, []want{{field.ErrorTypeRequired, pUpdate + ".scatterStrategy[0].key"}}},
		{"scatterStrategy term twice", func(s *v1beta1.SidecarSet) {
			us(s).ScatterStrategy = v1beta1.SidecarSetUpdateScatterStrategy{{Key: "zone", Value: "a"}, {Key: "zone", Value: "a"}}
		}, []want{{field.ErrorTypeDuplicate, pUpdate + ".scatterStrategy[1]"}}},
	})
}

func TestValidateSidecarSetContainers(t *testing.T) {
	runSidecarSetCases(t, []scsCase{
		{"no containers at all", func(s *v1beta1.SidecarSet) { s.Spec.Containers, s.Spec.InitContainers = nil, nil },
			[]want{{field.ErrorTypeRequired, "spec.containers"}}},
		{"init containers only", func(s *v1beta1.SidecarSet) { s.Spec.Containers = nil }, nil},
		{"containers only", func(s *v1beta1.SidecarSet) { s.Spec.InitContainers = nil }, nil},
		{"name missing", func(s *v1beta1.SidecarSet) { c0(s).Name = "" }, []want{{field.ErrorTypeRequired, pC0 + ".name"}}},
		{"name not a DNS label", func(s *v1beta1.SidecarSet) { c0(s).Name = "Log" }, []want{{field.ErrorTypeInvalid, pC0 + ".name"}}},
		{"two containers of one name", func(s *v1beta1.SidecarSet) { s.Spec.Containers = append(s.Spec.Containers, sidecar("log")) },
			[]want{{field.ErrorTypeDuplicate, "spec.containers[1].name"}}},
		{"an init container named as a container", func(s *v1beta1.SidecarSet) { i0(s).Name = "log" },
			[]want{{field.ErrorTypeDuplicate, pI0 + ".name"}}},
		{"image missing", func(s *v1beta1.SidecarSet) { c0(s).Image = "" }, []want{{field.ErrorTypeRequired, pC0 + ".image"}}},
		{"init container image missing", func(s *v1beta1.SidecarSet) { i0(s).Image = "" }, []want{{field.ErrorTypeRequired, pI0 + ".image"}}},
		{"mount of an undeclared volume", func(s *v1beta1.SidecarSet) { c0(s).VolumeMounts[0].Name = "data" },
			[]want{{field.ErrorTypeNotFound, pC0 + ".volumeMounts[0].name"}}},
		{"device of an undeclared volume", func(s *v1beta1.SidecarSet) {
			i0(s).VolumeDevices = []corev1.VolumeDevice{{Name: "disk", DevicePath: "/dev/xvda"}}
		}, []want{{field.ErrorTypeNotFound, pI0 + ".volumeDevices[0].name"}}},
		{"two volumes of one name", func(s *v1beta1.SidecarSet) { s.Spec.Volumes = append(s.Spec.Volumes, s.Spec.Volumes[0]) },
			[]want{{field.ErrorTypeDuplicate, "spec.volumes[1].name"}}},
		{"volume name not a DNS label", func(s *v1beta1.SidecarSet) {
			s.Spec.Volumes = append(s.Spec.Volumes, corev1.Volume{Name: "my_vol"})
		}, []want{{field.ErrorTypeInvalid, "spec.volumes[1].name"}}},
		{"podInjectPolicy AfterAppContainer", func(s *v1beta1.SidecarSet) { c0(s).PodInjectPolicy = v1beta1.SidecarSetAfterAppContainer }, nil},
		{"podInjectPolicy unknown", func(s *v1beta1.SidecarSet) { c0(s).PodInjectPolicy = "First" },
			[]want{{field.ErrorTypeNotSupported, pC0 + ".podInjectPolicy"}}},
		{"podInjectPolicy unset on a container (the defaulting webhook sets it)", func(s *v1beta1.SidecarSet) { c0(s).PodInjectPolicy = "" },
			[]want{{field.ErrorTypeNotSupported, pC0 + ".podInjectPolicy"}}},
		{"podInjectPolicy unset on an init container", func(s *v1beta1.SidecarSet) { i0(s).PodInjectPolicy = "" }, nil},
		{"podInjectPolicy unknown on an init container", func(s *v1beta1.SidecarSet) { i0(s).PodInjectPolicy = "First" },
			[]want{{field.ErrorTypeNotSupported, pI0 + ".podInjectPolicy"}}},
		{"shareVolumePolicy enabled", func(s *v1beta1.SidecarSet) { c0(s).ShareVolumePolicy.Type = v1beta1.SidecarSetShareVolumePolicyEnabled }, nil},
		{"shareVolumePolicy unknown", func(s *v1beta1.SidecarSet) { c0(s).ShareVolumePolicy.Type = "on" },
			[]want{{field.ErrorTypeNotSupported, pC0 + ".shareVolumePolicy.type"}}},
		{"shareVolumePolicy unknown on an init container", func(s *v1beta1.SidecarSet) { i0(s).ShareVolumePolicy.Type = "on" },
			[]want{{field.ErrorTypeNotSupported, pI0 + ".shareVolumePolicy.type"}}},
	})
}

func TestValidateSidecarSetUpgradeStrategy(t *testing.T) {
	hot := func(c *v1beta1.SidecarSetContainer, empty string) {
		c.UpgradeStrategy = v1beta1.SidecarSetContainerUpgradeStrategy{UpgradeType: v1beta1.SidecarSetHotUpgrade, HotUpgradeEmptyImage: empty}
	}
	p := pC0 + ".upgradeStrategy"
	runSidecarSetCases(t, []scsCase{
		{"upgradeType unset", func(s *v1beta1.SidecarSet) { c0(s).UpgradeStrategy.UpgradeType = "" }, nil},
		{"upgradeType unknown", func(s *v1beta1.SidecarSet) { c0(s).UpgradeStrategy.UpgradeType = "WarmUpgrade" },
			[]want{{field.ErrorTypeNotSupported, p + ".upgradeType"}}},
		{"HotUpgrade", func(s *v1beta1.SidecarSet) { hot(c0(s), "log:empty") }, nil},
		{"HotUpgrade without hotUpgradeEmptyImage", func(s *v1beta1.SidecarSet) { hot(c0(s), "") },
			[]want{{field.ErrorTypeRequired, p + ".hotUpgradeEmptyImage"}}},
		{"HotUpgrade with hotUpgradeEmptyImage the image", func(s *v1beta1.SidecarSet) { hot(c0(s), c0(s).Image) },
			[]want{{field.ErrorTypeInvalid, p + ".hotUpgradeEmptyImage"}}},
		{"HotUpgrade on an init container", func(s *v1beta1.SidecarSet) { hot(i0(s), "setup:empty") },
			[]want{{field.ErrorTypeForbidden, pI0 + ".upgradeStrategy.upgradeType"}}},
		{"HotUpgrade on a native sidecar init container", func(s *v1beta1.SidecarSet) {
			hot(i0(s), "setup:empty")
			i0(s).RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			s.Spec.UpdateStrategy.Type = v1beta1.SidecarSetNotUpdateStrategy
		}, nil},
		{"HotUpgrade on a native sidecar init container without hotUpgradeEmptyImage", func(s *v1beta1.SidecarSet) {
			hot(i0(s), "")
			i0(s).RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			s.Spec.UpdateStrategy.Type = v1beta1.SidecarSetNotUpdateStrategy
		}, []want{{field.ErrorTypeRequired, pI0 + ".upgradeStrategy.hotUpgradeEmptyImage"}}},
	})
}

func TestValidateSidecarSetTransferEnv(t *testing.T) {
	env := func(t v1beta1.SidecarSetTransferEnvVar) func(*v1beta1.SidecarSet) {
		return func(s *v1beta1.SidecarSet) { c0(s).TransferEnv = []v1beta1.SidecarSetTransferEnvVar{t} }
	}
	from := func(apiVersion, fieldPath string) *v1beta1.SidecarSetSourceContainerNameSource {
		return &v1beta1.SidecarSetSourceContainerNameSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: apiVersion, FieldPath: fieldPath}}
	}
	p := pC0 + ".transferEnv[0]"
	fr := p + ".sourceContainerNameFrom.fieldRef"
	runSidecarSetCases(t, []scsCase{
		{"sourceContainerName and envName", env(v1beta1.SidecarSetTransferEnvVar{SourceContainerName: "main", EnvName: "A"}), nil},
		{"envName and envNames (both copied)", env(v1beta1.SidecarSetTransferEnvVar{SourceContainerName: "main", EnvName: "A", EnvNames: []string{"B"}}), nil},
		{"fieldRef to a label", env(v1beta1.SidecarSetTransferEnvVar{SourceContainerNameFrom: from("v1", "metadata.labels['main']"), EnvNames: []string{"A"}}), nil},
		{"fieldRef to an annotation", env(v1beta1.SidecarSetTransferEnvVar{SourceContainerNameFrom: from("v1", "metadata.annotations['example.com/Main']"), EnvName: "A"}), nil},
		{"no source", env(v1beta1.SidecarSetTransferEnvVar{EnvName: "A"}), []want{{field.ErrorTypeRequired, p + ".sourceContainerName"}}},
		{"two sources", env(v1beta1.SidecarSetTransferEnvVar{SourceContainerName: "main", SourceContainerNameFrom: from("v1", "metadata.labels['main']"), EnvName: "A"}),
			[]want{{field.ErrorTypeForbidden, p + ".sourceContainerNameFrom"}}},
		{"sourceContainerNameFrom without fieldRef", env(v1beta1.SidecarSetTransferEnvVar{SourceContainerNameFrom: &v1beta1.SidecarSetSourceContainerNameSource{}, EnvName: "A"}),
			[]want{{field.ErrorTypeRequired, fr}}},
		{"no variable", env(v1beta1.SidecarSetTransferEnvVar{SourceContainerName: "main"}), []want{{field.ErrorTypeRequired, p + ".envName"}}},
		{"an empty envNames entry", env(v1beta1.SidecarSetTransferEnvVar{SourceContainerName: "main", EnvNames: []string{"A", ""}}),
			[]want{{field.ErrorTypeRequired, p + ".envNames[1]"}}},
		{"fieldRef without apiVersion", env(v1beta1.SidecarSetTransferEnvVar{SourceContainerNameFrom: from("", "metadata.labels['main']"), EnvName: "A"}),
			[]want{{field.ErrorTypeRequired, fr + ".apiVersion"}}},
		{"fieldRef without fieldPath", env(v1beta1.SidecarSetTransferEnvVar{SourceContainerNameFrom: from("v1", ""), EnvName: "A"}),
			[]want{{field.ErrorTypeRequired, fr + ".fieldPath"}}},
		{"fieldRef apiVersion v2", env(v1beta1.SidecarSetTransferEnvVar{SourceContainerNameFrom: from("v2", "metadata.labels['main']"), EnvName: "A"}),
			[]want{{field.ErrorTypeNotSupported, fr + ".apiVersion"}}},
		{"fieldRef to metadata.name (OpenKruise reads labels and annotations only)",
			env(v1beta1.SidecarSetTransferEnvVar{SourceContainerNameFrom: from("v1", "metadata.name"), EnvName: "A"}),
			[]want{{field.ErrorTypeNotSupported, fr + ".fieldPath"}}},
		{"fieldRef subscript of another field", env(v1beta1.SidecarSetTransferEnvVar{SourceContainerNameFrom: from("v1", "spec.nodeName['x']"), EnvName: "A"}),
			[]want{{field.ErrorTypeNotSupported, fr + ".fieldPath"}}},
		{"fieldRef label key invalid", env(v1beta1.SidecarSetTransferEnvVar{SourceContainerNameFrom: from("v1", "metadata.labels['a b']"), EnvName: "A"}),
			[]want{{field.ErrorTypeInvalid, fr + ".fieldPath"}}},
		{"init container: the same rules", func(s *v1beta1.SidecarSet) {
			i0(s).TransferEnv = []v1beta1.SidecarSetTransferEnvVar{{SourceContainerNameFrom: from("v1", "metadata.name")}}
		}, []want{{field.ErrorTypeNotSupported, pI0 + ".transferEnv[0].sourceContainerNameFrom.fieldRef.fieldPath"},
			{field.ErrorTypeRequired, pI0 + ".transferEnv[0].envName"}}},
	})
}

func TestValidateSidecarSetResourcesPolicy(t *testing.T) {
	policy := func(s *v1beta1.SidecarSet) *v1beta1.SidecarSetResourcesPolicy {
		c0(s).ResourcesPolicy = &v1beta1.SidecarSetResourcesPolicy{TargetContainersNameRegex: "^app$",
			TargetContainersMode: v1beta1.SidecarSetTargetContainersModeSum,
			ResourcesExpr:        v1beta1.SidecarSetResourcesExpr{Limits: &v1beta1.SidecarSetResourceExprs{CPU: "cpu*50%"}}}
		return c0(s).ResourcesPolicy
	}
	p := pC0 + ".resourcesPolicy"
	runSidecarSetCases(t, []scsCase{
		{"valid", func(s *v1beta1.SidecarSet) { policy(s) }, nil},
		{"requests only, mode max", func(s *v1beta1.SidecarSet) {
			rp := policy(s)
			rp.TargetContainersMode = v1beta1.SidecarSetTargetContainersModeMax
			rp.ResourcesExpr = v1beta1.SidecarSetResourcesExpr{Requests: &v1beta1.SidecarSetResourceExprs{Memory: "100Mi"}}
		}, nil},
		{"with resources", func(s *v1beta1.SidecarSet) {
			policy(s)
			c0(s).Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}
		}, []want{{field.ErrorTypeForbidden, p}}},
		{"mode unknown", func(s *v1beta1.SidecarSet) { policy(s).TargetContainersMode = "avg" },
			[]want{{field.ErrorTypeNotSupported, p + ".targetContainersMode"}}},
		{"regex empty", func(s *v1beta1.SidecarSet) { policy(s).TargetContainersNameRegex = "" },
			[]want{{field.ErrorTypeRequired, p + ".targetContainersNameRegex"}}},
		{"regex invalid", func(s *v1beta1.SidecarSet) { policy(s).TargetContainersNameRegex = "[app(" },
			[]want{{field.ErrorTypeInvalid, p + ".targetContainersNameRegex"}}},
		{"neither limits nor requests", func(s *v1beta1.SidecarSet) { policy(s).ResourcesExpr = v1beta1.SidecarSetResourcesExpr{} },
			[]want{{field.ErrorTypeRequired, p + ".resourcesExpr"}}},
		{"on an init container", func(s *v1beta1.SidecarSet) {
			policy(s)
			i0(s).ResourcesPolicy, c0(s).ResourcesPolicy = c0(s).ResourcesPolicy, nil
		}, []want{{field.ErrorTypeForbidden, pI0 + ".resourcesPolicy"}}},
	})
}

func TestValidateSidecarSetPatchPodMetadata(t *testing.T) {
	patches := func(ps ...v1beta1.SidecarSetPatchPodMetadata) func(*v1beta1.SidecarSet) {
		return func(s *v1beta1.SidecarSet) { s.Spec.PatchPodMetadata = ps }
	}
	patch := func(policy v1beta1.SidecarSetPatchPolicyType, kv ...string) v1beta1.SidecarSetPatchPodMetadata {
		a := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			a[kv[i]] = kv[i+1]
		}
		return v1beta1.SidecarSetPatchPodMetadata{Annotations: a, PatchPolicy: policy}
	}
	runSidecarSetCases(t, []scsCase{
		{"Retain", patches(patch(v1beta1.SidecarSetRetainPatchPolicy, "example.com/a", "x")), nil},
		{"Overwrite and MergePatchJson", patches(patch(v1beta1.SidecarSetOverwritePatchPolicy, "example.com/a", "x"),
			patch(v1beta1.SidecarSetMergePatchJSONPatchPolicy, "example.com/b", `{"k":"v"}`)), nil},
		{"no annotations", patches(patch(v1beta1.SidecarSetRetainPatchPolicy)), []want{{field.ErrorTypeRequired, pPatch0 + ".annotations"}}},
		{"an invalid annotation key", patches(patch(v1beta1.SidecarSetRetainPatchPolicy, "a b", "x")),
			[]want{{field.ErrorTypeInvalid, pPatch0 + ".annotations"}}},
		{"patchPolicy unset", patches(patch("", "example.com/a", "x")), []want{{field.ErrorTypeRequired, pPatch0 + ".patchPolicy"}}},
		{"patchPolicy unknown", patches(patch("Replace", "example.com/a", "x")), []want{{field.ErrorTypeNotSupported, pPatch0 + ".patchPolicy"}}},
		{"an annotation in two patches", patches(patch(v1beta1.SidecarSetRetainPatchPolicy, "example.com/a", "x"),
			patch(v1beta1.SidecarSetOverwritePatchPolicy, "example.com/a", "y")),
			[]want{{field.ErrorTypeDuplicate, "spec.patchPodMetadata[1].annotations[example.com/a]"}}},
		{"MergePatchJson value not JSON", patches(patch(v1beta1.SidecarSetMergePatchJSONPatchPolicy, "example.com/a", "{k: v}")),
			[]want{{field.ErrorTypeInvalid, pPatch0 + ".annotations[example.com/a]"}}},
		{"MergePatchJson value a JSON string", patches(patch(v1beta1.SidecarSetMergePatchJSONPatchPolicy, "example.com/a", `"v"`)), nil},
	})
}

// scsUpdate is one change of a stored SidecarSet and the errors expected for it.
type scsUpdate struct {
	name   string
	old    func(*v1beta1.SidecarSet) // the stored object, from validSidecarSet; nil: as is
	mutate func(*v1beta1.SidecarSet) // the new object, from the stored one
	want   []want
}

func TestValidateSidecarSetUpdate(t *testing.T) {
	hotNoEmpty := func(s *v1beta1.SidecarSet) { c0(s).UpgradeStrategy.UpgradeType = v1beta1.SidecarSetHotUpgrade }
	p := pC0 + ".upgradeStrategy"
	cases := []scsUpdate{
		{"image change", nil, func(s *v1beta1.SidecarSet) { c0(s).Image = "log:v2" }, nil},
		{"a container added", nil, func(s *v1beta1.SidecarSet) { s.Spec.Containers = append(s.Spec.Containers, sidecar("metrics")) },
			[]want{{field.ErrorTypeForbidden, "spec.containers[1].name"}}},
		{"a container renamed", nil, func(s *v1beta1.SidecarSet) { c0(s).Name = "logger" },
			[]want{{field.ErrorTypeForbidden, pC0 + ".name"}}},
		{"a container removed", func(s *v1beta1.SidecarSet) { s.Spec.Containers = append(s.Spec.Containers, sidecar("metrics")) },
			func(s *v1beta1.SidecarSet) { s.Spec.Containers = s.Spec.Containers[:1] }, nil},
		{"an init container added (OpenKruise checks containers only)", nil,
			func(s *v1beta1.SidecarSet) {
				s.Spec.InitContainers = append(s.Spec.InitContainers, initSidecar("more"))
			}, nil},
		{"upgradeType changed", nil, func(s *v1beta1.SidecarSet) {
			c0(s).UpgradeStrategy = v1beta1.SidecarSetContainerUpgradeStrategy{UpgradeType: v1beta1.SidecarSetHotUpgrade, HotUpgradeEmptyImage: "log:empty"}
		}, []want{{field.ErrorTypeInvalid, p + ".upgradeType"}}},
		{"upgradeType set where it was unset", func(s *v1beta1.SidecarSet) { c0(s).UpgradeStrategy.UpgradeType = "" }, func(s *v1beta1.SidecarSet) {
			c0(s).UpgradeStrategy = v1beta1.SidecarSetContainerUpgradeStrategy{UpgradeType: v1beta1.SidecarSetHotUpgrade, HotUpgradeEmptyImage: "log:empty"}
		}, nil},
		{"stored HotUpgrade without hotUpgradeEmptyImage, image change", hotNoEmpty,
			func(s *v1beta1.SidecarSet) { c0(s).Image = "log:v2" }, nil},
		{"stored HotUpgrade without hotUpgradeEmptyImage, hotUpgradeEmptyImage set", hotNoEmpty,
			func(s *v1beta1.SidecarSet) { c0(s).UpgradeStrategy.HotUpgradeEmptyImage = "log:empty" }, nil},
		{"stored HotUpgrade, hotUpgradeEmptyImage set to the image", hotNoEmpty,
			func(s *v1beta1.SidecarSet) { c0(s).UpgradeStrategy.HotUpgradeEmptyImage = c0(s).Image },
			[]want{{field.ErrorTypeInvalid, p + ".hotUpgradeEmptyImage"}}},
		{"stored HotUpgrade, image changed to hotUpgradeEmptyImage",
			func(s *v1beta1.SidecarSet) { hotNoEmpty(s); c0(s).UpgradeStrategy.HotUpgradeEmptyImage = "log:empty" },
			func(s *v1beta1.SidecarSet) { c0(s).Image = "log:empty" }, []want{{field.ErrorTypeInvalid, p + ".hotUpgradeEmptyImage"}}},
		{"stored HotUpgrade on a plain init container, unrelated change",
			func(s *v1beta1.SidecarSet) {
				i0(s).UpgradeStrategy = v1beta1.SidecarSetContainerUpgradeStrategy{UpgradeType: v1beta1.SidecarSetHotUpgrade}
			},
			func(s *v1beta1.SidecarSet) { i0(s).Image = "setup:v2" }, nil},
		{"stored unknown patchPolicy, unrelated change",
			func(s *v1beta1.SidecarSet) {
				s.Spec.PatchPodMetadata = []v1beta1.SidecarSetPatchPodMetadata{{Annotations: map[string]string{"a": "{"}, PatchPolicy: "Replace"}}
			},
			func(s *v1beta1.SidecarSet) { c0(s).Image = "log:v2" }, nil},
		{"stored MergePatchJson value not JSON, patch changed",
			func(s *v1beta1.SidecarSet) {
				s.Spec.PatchPodMetadata = []v1beta1.SidecarSetPatchPodMetadata{{Annotations: map[string]string{"a": "{"},
					PatchPolicy: v1beta1.SidecarSetMergePatchJSONPatchPolicy}}
			},
			func(s *v1beta1.SidecarSet) { s.Spec.PatchPodMetadata[0].Annotations["b"] = "{}" },
			[]want{{field.ErrorTypeInvalid, pPatch0 + ".annotations[a]"}}},
		{"stored transferEnv without variables, unrelated change",
			func(s *v1beta1.SidecarSet) {
				c0(s).TransferEnv = []v1beta1.SidecarSetTransferEnvVar{{SourceContainerName: "main"}}
			},
			func(s *v1beta1.SidecarSet) { c0(s).Image = "log:v2" }, nil},
		{"stored unknown updateStrategy.type, unrelated change",
			func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.Type = "OnDelete" },
			func(s *v1beta1.SidecarSet) { c0(s).Image = "log:v2" }, nil},
		{"stored name with a dot (names do not change)", func(s *v1beta1.SidecarSet) { s.Name = "log.agent" },
			func(s *v1beta1.SidecarSet) { c0(s).Image = "log:v2" }, nil},
		{"metadata-only change of an invalid stored SidecarSet", func(s *v1beta1.SidecarSet) { s.Spec.Selector = &metav1.LabelSelector{} },
			func(s *v1beta1.SidecarSet) { s.Finalizers = []string{"example.com/keep"} }, nil},
		{"label change of an invalid stored SidecarSet", func(s *v1beta1.SidecarSet) { s.Spec.Selector = &metav1.LabelSelector{} },
			func(s *v1beta1.SidecarSet) { s.Labels["team"] = "b" }, []want{{field.ErrorTypeInvalid, "spec.selector"}}},
		{"v1alpha1 namespace set next to a namespaceSelector",
			func(s *v1beta1.SidecarSet) {
				s.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
			},
			func(s *v1beta1.SidecarSet) { withNamespace(s, "ns") }, []want{{field.ErrorTypeForbidden, "spec.namespaceSelector"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := validSidecarSet()
			if tc.old != nil {
				tc.old(old)
			}
			cur := old.DeepCopy()
			tc.mutate(cur)
			checkErrors(t, ValidateSidecarSetUpdate(cur, old), tc.want)
		})
	}
}

// OpenKruise v1.9.0's SidecarSet sample and the SidecarSet its takeover fixture left behind get
// OpenKruise's answer, after the defaulting webhook: the stored one is accepted on create and on
// an image update; the sample is refused for its resourcesPolicy, written with field names the
// schema does not have (targetContainerMode, resourceExpr), as OpenKruise's schema refuses it.
func TestValidateSidecarSetOpenKruiseObjects(t *testing.T) {
	dir := compat.OracleDir(filepath.Join("..", "..", ".."))
	rp := "spec.containers[1].resourcesPolicy"
	files := map[string][]want{
		"takeover/workloads/sidecarsets.apps.kruise.io.yaml": nil,
		"samples/apps_v1alpha1_sidecarset.yaml": {{field.ErrorTypeNotSupported, rp + ".targetContainersMode"},
			{field.ErrorTypeRequired, rp + ".resourcesExpr"}},
	}
	for file, expect := range files {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatalf("the OpenKruise oracle (set KRUISE_COMPAT_DIR): %v", err)
			}
			sets := decodeVersioned(t, data, "SidecarSet", defaults.SetDefaultsSidecarSet, defaults.SetDefaultsSidecarSetV1beta1)
			if len(sets) == 0 {
				t.Fatalf("no SidecarSet in %s", file)
			}
			for _, set := range sets {
				checkErrors(t, ValidateSidecarSet(set), expect)
				if expect != nil {
					continue
				}
				updated := set.DeepCopy()
				updated.Spec.Containers[0].Image += "-next"
				checkErrors(t, ValidateSidecarSetUpdate(updated, set), nil)
			}
		})
	}
}
