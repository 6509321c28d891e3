package validating

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/test/compat"
)

var webLabels = map[string]string{"app": "web"}

func webPodTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:v1"}}}}
}

func zoneTerm(zone string) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}}}
}

// validUnitedDeployment is a defaulted UnitedDeployment every rule accepts: 6 replicas of a
// StatefulSet template over two zones, shared evenly.
func validUnitedDeployment() *v1alpha1.UnitedDeployment {
	return &v1alpha1.UnitedDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: v1alpha1.UnitedDeploymentSpec{
			Replicas: ptr.To[int32](6), RevisionHistoryLimit: ptr.To[int32](10),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: v1alpha1.UnitedDeploymentSubsetTemplate{StatefulSetTemplate: &v1alpha1.UnitedDeploymentStatefulSetTemplate{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       appsv1.StatefulSetSpec{Template: webPodTemplate()},
			}},
			Topology: v1alpha1.UnitedDeploymentTopology{Subsets: []v1alpha1.UnitedDeploymentSubset{
				{Name: "zone-a", NodeSelectorTerm: zoneTerm("a")}, {Name: "zone-b", NodeSelectorTerm: zoneTerm("b")}}},
			UpdateStrategy: v1alpha1.UnitedDeploymentUpdateStrategy{Type: v1alpha1.ManualUnitedDeploymentUpdateStrategyType,
				ManualUpdate: &v1alpha1.UnitedDeploymentManualUpdate{}},
		},
	}
}

type udCase struct {
	name   string
	mutate func(*v1alpha1.UnitedDeploymentSpec)
	want   []want
}

func runUnitedDeploymentCases(t *testing.T, cases []udCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ud := validUnitedDeployment()
			tc.mutate(&ud.Spec)
			errs := ValidateUnitedDeployment(ud)
			checkErrors(t, errs, tc.want)
			for _, e := range errs {
				if e.Detail == "" && e.Type != field.ErrorTypeRequired && e.Type != field.ErrorTypeNotSupported &&
					e.Type != field.ErrorTypeDuplicate {
					t.Errorf("%s: no message says what is wrong", e.Field)
				}
			}
		})
	}
}

const (
	pUDSts     = "spec.template.statefulSetTemplate"
	pUDSubsets = "spec.topology.subsets"
)

func subsets(s *v1alpha1.UnitedDeploymentSpec) []v1alpha1.UnitedDeploymentSubset {
	return s.Topology.Subsets
}

func TestValidateUnitedDeploymentSelectorAndTemplate(t *testing.T) {
	runUnitedDeploymentCases(t, []udCase{
		{"valid", func(*v1alpha1.UnitedDeploymentSpec) {}, nil},
		{"negative replicas", func(s *v1alpha1.UnitedDeploymentSpec) { s.Replicas = ptr.To[int32](-1) },
			[]want{{field.ErrorTypeInvalid, "spec.replicas"}, {field.ErrorTypeInvalid, pUDSubsets}}},
		{"no selector", func(s *v1alpha1.UnitedDeploymentSpec) { s.Selector = nil }, []want{{field.ErrorTypeRequired, "spec.selector"}}},
		{"empty selector", func(s *v1alpha1.UnitedDeploymentSpec) { s.Selector = &metav1.LabelSelector{} },
			[]want{{field.ErrorTypeInvalid, "spec.selector"}}},
		{"selector misses the template labels", func(s *v1alpha1.UnitedDeploymentSpec) { s.Selector.MatchLabels["app"] = "api" },
			[]want{{field.ErrorTypeInvalid, pUDSts + ".metadata.labels"}, {field.ErrorTypeInvalid, pUDSts + ".spec.template.metadata.labels"}}},
		{"no template", func(s *v1alpha1.UnitedDeploymentSpec) { s.Template = v1alpha1.UnitedDeploymentSubsetTemplate{} },
			[]want{{field.ErrorTypeRequired, "spec.template"}}},
		{"two templates", func(s *v1alpha1.UnitedDeploymentSpec) {
			s.Template.DeploymentTemplate = &v1alpha1.UnitedDeploymentDeploymentTemplate{Spec: appsv1.DeploymentSpec{Template: webPodTemplate()}}
		}, []want{{field.ErrorTypeInvalid, "spec.template"}}},
		{"StatefulSet template with replicas", func(s *v1alpha1.UnitedDeploymentSpec) {
			s.Template.StatefulSetTemplate.Spec.Replicas = ptr.To[int32](3)
		}, []want{{field.ErrorTypeInvalid, pUDSts + ".spec.replicas"}}},
		{"StatefulSet template with a partition", func(s *v1alpha1.UnitedDeploymentSpec) {
			s.Template.StatefulSetTemplate.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1)}}
		}, []want{{field.ErrorTypeInvalid, pUDSts + ".spec.updateStrategy.rollingUpdate.partition"}}},
		{"StatefulSet pods that end", func(s *v1alpha1.UnitedDeploymentSpec) {
			s.Template.StatefulSetTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		}, []want{{field.ErrorTypeNotSupported, pUDSts + ".spec.template.spec.restartPolicy"}}},
		{"StatefulSet claim template without a name", func(s *v1alpha1.UnitedDeploymentSpec) {
			s.Template.StatefulSetTemplate.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{}}
		}, []want{{field.ErrorTypeRequired, pUDSts + ".spec.volumeClaimTemplates[0].metadata.name"},
			{field.ErrorTypeRequired, pUDSts + ".spec.volumeClaimTemplates[0].spec.accessModes"},
			{field.ErrorTypeRequired, pUDSts + ".spec.volumeClaimTemplates[0].spec.resources.requests[storage]"}}},
		{"CloneSet template validated as a CloneSet", func(s *v1alpha1.UnitedDeploymentSpec) {
			tmpl := webPodTemplate()
			tmpl.Labels = map[string]string{"app": "api"}
			s.Template = v1alpha1.UnitedDeploymentSubsetTemplate{CloneSetTemplate: &v1alpha1.UnitedDeploymentCloneSetTemplate{
				Spec: v1alpha1.CloneSetSpec{Template: tmpl, Replicas: ptr.To[int32](3), UpdateStrategy: v1alpha1.CloneSetUpdateStrategy{Type: "Rolling"}}}}
		}, []want{{field.ErrorTypeInvalid, "spec.template.cloneSetTemplate.spec.template.metadata.labels"},
			{field.ErrorTypeNotSupported, "spec.template.cloneSetTemplate.spec.updateStrategy.type"}}},
		{"Advanced StatefulSet template validated as one", func(s *v1alpha1.UnitedDeploymentSpec) {
			s.Template = v1alpha1.UnitedDeploymentSubsetTemplate{AdvancedStatefulSetTemplate: &v1alpha1.UnitedDeploymentAdvancedStatefulSetTemplate{
				ObjectMeta: metav1.ObjectMeta{Labels: webLabels},
				Spec:       v1beta1.StatefulSetSpec{Template: webPodTemplate(), Replicas: ptr.To[int32](2), PodManagementPolicy: "Random"}}}
		}, []want{{field.ErrorTypeInvalid, "spec.template.advancedStatefulSetTemplate.spec.replicas"},
			{field.ErrorTypeNotSupported, "spec.template.advancedStatefulSetTemplate.spec.podManagementPolicy"}}},
		{"Deployment template with replicas", func(s *v1alpha1.UnitedDeploymentSpec) {
			s.Template = v1alpha1.UnitedDeploymentSubsetTemplate{DeploymentTemplate: &v1alpha1.UnitedDeploymentDeploymentTemplate{
				ObjectMeta: metav1.ObjectMeta{Labels: webLabels},
				Spec:       appsv1.DeploymentSpec{Template: webPodTemplate(), Replicas: ptr.To[int32](1)}}}
		}, []want{{field.ErrorTypeInvalid, "spec.template.deploymentTemplate.spec.replicas"}}},
		{"a valid Deployment template", func(s *v1alpha1.UnitedDeploymentSpec) {
			s.Template = v1alpha1.UnitedDeploymentSubsetTemplate{DeploymentTemplate: &v1alpha1.UnitedDeploymentDeploymentTemplate{
				ObjectMeta: metav1.ObjectMeta{Labels: webLabels}, Spec: appsv1.DeploymentSpec{Template: webPodTemplate()}}}
		}, nil},
	})
}

func TestValidateUnitedDeploymentSubsets(t *testing.T) {
	p0, p1 := pUDSubsets+"[0]", pUDSubsets+"[1]"
	runUnitedDeploymentCases(t, []udCase{
		{"subset without a name", func(s *v1alpha1.UnitedDeploymentSpec) { subsets(s)[1].Name = "" },
			[]want{{field.ErrorTypeRequired, p1 + ".name"}}},
		{"duplicate subset", func(s *v1alpha1.UnitedDeploymentSpec) { subsets(s)[1].Name = "zone-a" },
			[]want{{field.ErrorTypeDuplicate, p1 + ".name"}}},
		{"subset name not a DNS label", func(s *v1alpha1.UnitedDeploymentSpec) { subsets(s)[1].Name = "Zone_B" },
			[]want{{field.ErrorTypeInvalid, p1 + ".name"}}},
		{"node term operator unknown, In without values", func(s *v1alpha1.UnitedDeploymentSpec) {
			subsets(s)[0].NodeSelectorTerm.MatchExpressions = []corev1.NodeSelectorRequirement{
				{Key: "zone", Operator: "Near"}, {Key: "zone", Operator: corev1.NodeSelectorOpIn}}
		}, []want{{field.ErrorTypeNotSupported, p0 + ".nodeSelectorTerm.matchExpressions[0].operator"},
			{field.ErrorTypeRequired, p0 + ".nodeSelectorTerm.matchExpressions[1].values"}}},
		{"node field other than the name", func(s *v1alpha1.UnitedDeploymentSpec) {
			subsets(s)[0].NodeSelectorTerm.MatchFields = []corev1.NodeSelectorRequirement{
				{Key: "spec.unschedulable", Operator: corev1.NodeSelectorOpIn, Values: []string{"false"}}}
		}, []want{{field.ErrorTypeInvalid, p0 + ".nodeSelectorTerm.matchFields[0].key"}}},
		{"toleration without key nor Exists", func(s *v1alpha1.UnitedDeploymentSpec) {
			subsets(s)[0].Tolerations = []corev1.Toleration{{Value: "x", Effect: "Sometimes"}}
		}, []want{{field.ErrorTypeInvalid, p0 + ".tolerations[0].operator"}, {field.ErrorTypeNotSupported, p0 + ".tolerations[0].effect"}}},
		{"replicas neither integer nor percentage", func(s *v1alpha1.UnitedDeploymentSpec) { subsets(s)[0].Replicas = intOrStr("half") },
			[]want{{field.ErrorTypeInvalid, p0 + ".replicas"}}},
		{"replicas above 100%", func(s *v1alpha1.UnitedDeploymentSpec) { subsets(s)[0].Replicas = intOrStr("150%") },
			[]want{{field.ErrorTypeInvalid, p0 + ".replicas"}}},
		{"fixed replicas above spec.replicas", func(s *v1alpha1.UnitedDeploymentSpec) { subsets(s)[0].Replicas = intVal(7) },
			[]want{{field.ErrorTypeInvalid, pUDSubsets}}},
		{"every subset fixed, short of spec.replicas", func(s *v1alpha1.UnitedDeploymentSpec) {
			subsets(s)[0].Replicas, subsets(s)[1].Replicas = intVal(2), intOrStr("50%")
		}, []want{{field.ErrorTypeInvalid, pUDSubsets}}},
		{"every subset fixed, adding up", func(s *v1alpha1.UnitedDeploymentSpec) {
			subsets(s)[0].Replicas, subsets(s)[1].Replicas = intVal(3), intOrStr("50%")
		}, nil},
		{"replicas beside maxReplicas", func(s *v1alpha1.UnitedDeploymentSpec) {
			subsets(s)[0].Replicas, subsets(s)[1].MaxReplicas = intVal(2), intVal(3)
		}, []want{{field.ErrorTypeInvalid, pUDSubsets}}},
		{"minReplicas above maxReplicas", func(s *v1alpha1.UnitedDeploymentSpec) {
			subsets(s)[0].MinReplicas, subsets(s)[0].MaxReplicas = intVal(3), intVal(2)
		}, []want{{field.ErrorTypeInvalid, p0 + ".minReplicas"}}},
		{"maxReplicas not a number", func(s *v1alpha1.UnitedDeploymentSpec) { subsets(s)[0].MaxReplicas = intOrStr("many") },
			[]want{{field.ErrorTypeInvalid, p0 + ".maxReplicas"}}},
		{"every subset bounded above", func(s *v1alpha1.UnitedDeploymentSpec) {
			subsets(s)[0].MaxReplicas, subsets(s)[1].MaxReplicas = intVal(3), intVal(3)
		}, []want{{field.ErrorTypeInvalid, pUDSubsets}}},
		{"bounds without spec.replicas", func(s *v1alpha1.UnitedDeploymentSpec) {
			s.Replicas, subsets(s)[0].MaxReplicas = nil, intVal(3)
		}, []want{{field.ErrorTypeRequired, "spec.replicas"}}},
		{"elastic bounds", func(s *v1alpha1.UnitedDeploymentSpec) {
			subsets(s)[0].MinReplicas, subsets(s)[0].MaxReplicas, subsets(s)[1].MinReplicas = intVal(1), intOrStr("50%"), intVal(1)
		}, nil},
		{"without spec.replicas, every subset must be fixed", func(s *v1alpha1.UnitedDeploymentSpec) {
			s.Replicas, subsets(s)[0].Replicas = nil, intVal(2)
		}, []want{{field.ErrorTypeInvalid, pUDSubsets}}},
	})
}

func TestValidateUnitedDeploymentStrategies(t *testing.T) {
	p0 := pUDSubsets + "[0]"
	adaptive := func(s *v1alpha1.UnitedDeploymentSpec) *v1alpha1.UnitedDeploymentAdaptiveStrategy {
		s.Topology.ScheduleStrategy = v1alpha1.UnitedDeploymentScheduleStrategy{Type: v1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType,
			Adaptive: &v1alpha1.UnitedDeploymentAdaptiveStrategy{}}
		return s.Topology.ScheduleStrategy.Adaptive
	}
	pAdaptive := "spec.topology.scheduleStrategy.adaptive"
	pPartitions := "spec.updateStrategy.manualUpdate.partitions"
	runUnitedDeploymentCases(t, []udCase{
		{"adaptive with fixed replicas", func(s *v1alpha1.UnitedDeploymentSpec) { adaptive(s); subsets(s)[0].Replicas = intVal(1) },
			[]want{{field.ErrorTypeForbidden, p0 + ".replicas"}}},
		{"reserving StatefulSet pods", func(s *v1alpha1.UnitedDeploymentSpec) { adaptive(s).ReserveUnschedulablePods = true },
			[]want{{field.ErrorTypeInvalid, pAdaptive + ".reserveUnschedulablePods"}}},
		{"negative adaptive durations", func(s *v1alpha1.UnitedDeploymentSpec) {
			a := adaptive(s)
			a.RescheduleCriticalSeconds, a.UnschedulableDuration = ptr.To[int32](-1), ptr.To[int32](-1)
		}, []want{{field.ErrorTypeInvalid, pAdaptive + ".rescheduleCriticalSeconds"}, {field.ErrorTypeInvalid, pAdaptive + ".unschedulableDuration"}}},
		{"unknown schedule strategy", func(s *v1alpha1.UnitedDeploymentSpec) { s.Topology.ScheduleStrategy.Type = "Random" },
			[]want{{field.ErrorTypeNotSupported, "spec.topology.scheduleStrategy.type"}}},
		{"partitions of unknown subsets, negative", func(s *v1alpha1.UnitedDeploymentSpec) {
			s.UpdateStrategy.ManualUpdate.Partitions = map[string]int32{"zone-a": -1, "zone-z": 1}
		}, []want{{field.ErrorTypeInvalid, pPartitions + "[zone-a]"}, {field.ErrorTypeNotFound, pPartitions + "[zone-z]"}}},
		{"valid partitions", func(s *v1alpha1.UnitedDeploymentSpec) {
			s.UpdateStrategy.ManualUpdate.Partitions = map[string]int32{"zone-a": 1, "zone-b": 0}
		}, nil},
		{"patch not an object", func(s *v1alpha1.UnitedDeploymentSpec) {
			subsets(s)[0].Patch = runtime.RawExtension{Raw: []byte(`"big"`)}
		},
			[]want{{field.ErrorTypeInvalid, p0 + ".patch"}}},
		{"patch that does not apply", func(s *v1alpha1.UnitedDeploymentSpec) {
			subsets(s)[0].Patch = runtime.RawExtension{Raw: []byte(`{"spec":{"containers":"web"}}`)}
		}, []want{{field.ErrorTypeInvalid, p0 + ".patch"}}},
		{"patch that unselects the pods", func(s *v1alpha1.UnitedDeploymentSpec) {
			subsets(s)[0].Patch = runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"app":"other"}}}`)}
		}, []want{{field.ErrorTypeInvalid, p0 + ".patch"}}},
		{"patch of labels and resources", func(s *v1alpha1.UnitedDeploymentSpec) {
			subsets(s)[0].Patch = runtime.RawExtension{Raw: []byte(
				`{"metadata":{"labels":{"zone":"a"}},"spec":{"containers":[{"name":"web","resources":{"limits":{"cpu":"2"}}}]}}`)}
		}, nil},
	})
}

func TestValidateUnitedDeploymentUpdate(t *testing.T) {
	p0 := pUDSubsets + "[0]"
	cases := []struct {
		name   string
		mutate func(*v1alpha1.UnitedDeployment)
		want   []want
	}{
		{"metadata only, stored spec now refused", func(ud *v1alpha1.UnitedDeployment) { ud.Labels = map[string]string{"team": "a"} }, nil},
		{"scale and new image", func(ud *v1alpha1.UnitedDeployment) {
			ud.Spec.Replicas = ptr.To[int32](9)
			ud.Spec.Template.StatefulSetTemplate.Spec.Template.Spec.Containers[0].Image = "web:v2"
		}, nil},
		{"selector changed", func(ud *v1alpha1.UnitedDeployment) {
			ud.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}
		}, []want{{field.ErrorTypeInvalid, "spec.selector"}}},
		{"StatefulSet serviceName changed", func(ud *v1alpha1.UnitedDeployment) {
			ud.Spec.Template.StatefulSetTemplate.Spec.ServiceName = "web"
		}, []want{{field.ErrorTypeForbidden, pUDSts + ".spec"}}},
		{"kept subset moved", func(ud *v1alpha1.UnitedDeployment) {
			ud.Spec.Topology.Subsets[0].NodeSelectorTerm = zoneTerm("c")
			ud.Spec.Topology.Subsets[0].Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
		}, []want{{field.ErrorTypeForbidden, p0 + ".nodeSelectorTerm"}, {field.ErrorTypeForbidden, p0 + ".tolerations"}}},
		{"subset added", func(ud *v1alpha1.UnitedDeployment) {
			ud.Spec.Topology.Subsets = append(ud.Spec.Topology.Subsets, v1alpha1.UnitedDeploymentSubset{Name: "zone-c", NodeSelectorTerm: zoneTerm("c")})
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := validUnitedDeployment()
			if tc.name == "metadata only, stored spec now refused" {
				old.Spec.Topology.Subsets[1].Name = "Zone_B"
			}
			cur := old.DeepCopy()
			tc.mutate(cur)
			checkErrors(t, ValidateUnitedDeploymentUpdate(cur, old), tc.want)
		})
	}
}

// OpenKruise v1.9.0's UnitedDeployment sample is accepted after the defaulting webhook, on create
// and on an image update.
func TestValidateUnitedDeploymentOpenKruiseSample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(compat.OracleDir(filepath.Join("..", "..", "..")), "samples/apps_v1alpha1_uniteddeployment.yaml"))
	if err != nil {
		t.Fatalf("the OpenKruise oracle (set KRUISE_COMPAT_DIR): %v", err)
	}
	ud := &v1alpha1.UnitedDeployment{}
	if err := yaml.Unmarshal(data, ud); err != nil {
		t.Fatal(err)
	}
	defaults.SetDefaultsUnitedDeployment(ud)
	checkErrors(t, ValidateUnitedDeployment(ud), nil)
	next := ud.DeepCopy()
	next.Spec.Template.StatefulSetTemplate.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
	checkErrors(t, ValidateUnitedDeploymentUpdate(next, ud), nil)
}

// pathTemplates records where the webhook asks the dry run about a template, and refuses the
// templates whose first container has the image "refused".
type pathTemplates struct{ paths []string }

func (r *pathTemplates) Check(_ context.Context, _ string, tmpl *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	r.paths = append(r.paths, p.String())
	if tmpl.Spec.Containers[0].Image == "refused" {
		return field.ErrorList{field.Invalid(p.Child("spec", "containers").Index(0).Child("image"), "refused", "refused by the test")}
	}
	return nil
}

// The webhook dry-runs the workload's pod template and each patched subset template, on create
// and when the template or a subset changed; a refused patched template is reported at its patch.
func TestUnitedDeploymentWebhook(t *testing.T) {
	ctx := context.Background()
	checker := &pathTemplates{}
	v := unitedDeploymentValidator{templates: checker}
	ud := validUnitedDeployment()
	ud.Spec.Topology.Subsets[1].Patch = runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"zone":"b"}}}`)}
	if _, err := v.ValidateCreate(ctx, ud); err != nil {
		t.Fatalf("valid UnitedDeployment: %v", err)
	}
	wantPaths := []string{pUDSts + ".spec.template", pUDSubsets + "[1].patch"}
	if strings.Join(checker.paths, " ") != strings.Join(wantPaths, " ") {
		t.Fatalf("dry runs at %v, want %v", checker.paths, wantPaths)
	}
	relabelled := ud.DeepCopy()
	relabelled.Labels = map[string]string{"team": "a"}
	if _, err := v.ValidateUpdate(ctx, ud, relabelled); err != nil || len(checker.paths) != 2 {
		t.Fatalf("relabelling: err %v, dry runs %v (want none more)", err, checker.paths)
	}
	refused := ud.DeepCopy()
	refused.Spec.Topology.Subsets[1].Patch = runtime.RawExtension{Raw: []byte(`{"spec":{"containers":[{"name":"web","image":"refused"}]}}`)}
	_, err := v.ValidateUpdate(ctx, ud, refused)
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeInvalid, pUDSubsets + "[1].patch.spec.containers[0].image"}})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "UnitedDeployment.apps.kruise.io \"web\"") {
		t.Errorf("want an Invalid UnitedDeployment web, got %v", err)
	}
}
