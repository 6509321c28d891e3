package validating

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/webhook/internal/webhookfuzz"
	"github.com/kruise-ng/kruise/test/compat"
)

// validWorkloadSpread spreads CloneSet web over two zones: at most 3 pods in zone a, the rest in b.
func validWorkloadSpread(name string) *v1alpha1.WorkloadSpread {
	a := zoneTerm("a")
	return &v1alpha1.WorkloadSpread{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: v1alpha1.WorkloadSpreadSpec{
			TargetReference: &v1alpha1.WorkloadSpreadTargetReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web"},
			Subsets: []v1alpha1.WorkloadSpreadSubset{
				{Name: "zone-a", RequiredNodeSelectorTerm: &a, MaxReplicas: intVal(3)},
				{Name: "zone-b", PreferredNodeSelectorTerms: []corev1.PreferredSchedulingTerm{{Weight: 10, Preference: zoneTerm("b")}}},
			},
		},
	}
}

type wsCase struct {
	name   string
	mutate func(*v1alpha1.WorkloadSpreadSpec)
	want   []want
}

func runWorkloadSpreadCases(t *testing.T, custom []schema.GroupKind, cases []wsCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := validWorkloadSpread("spread")
			tc.mutate(&ws.Spec)
			errs := ValidateWorkloadSpread(ws, custom)
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

func target(s *v1alpha1.WorkloadSpreadSpec, apiVersion, kind string) {
	s.TargetReference.APIVersion, s.TargetReference.Kind = apiVersion, kind
}

func TestValidateWorkloadSpreadTarget(t *testing.T) {
	pRef := "spec.targetRef"
	runWorkloadSpreadCases(t, []schema.GroupKind{{Group: "game.kruise.io", Kind: "GameServerSet"}}, []wsCase{
		{"valid", func(*v1alpha1.WorkloadSpreadSpec) {}, nil},
		{"no targetRef", func(s *v1alpha1.WorkloadSpreadSpec) { s.TargetReference = nil }, []want{{field.ErrorTypeRequired, pRef}}},
		{"targetRef without name, bad apiVersion", func(s *v1alpha1.WorkloadSpreadSpec) {
			s.TargetReference.Name, s.TargetReference.APIVersion = "", "a/b/c"
		}, []want{{field.ErrorTypeInvalid, pRef + ".apiVersion"}, {field.ErrorTypeRequired, pRef + ".name"}}},
		{"CloneSet of another group", func(s *v1alpha1.WorkloadSpreadSpec) { target(s, "apps/v1", "CloneSet") },
			[]want{{field.ErrorTypeInvalid, pRef + ".apiVersion"}}},
		{"Deployment", func(s *v1alpha1.WorkloadSpreadSpec) { target(s, "apps/v1", "Deployment") }, nil},
		{"ReplicaSet", func(s *v1alpha1.WorkloadSpreadSpec) { target(s, "apps/v1", "ReplicaSet") }, nil},
		{"Job", func(s *v1alpha1.WorkloadSpreadSpec) { target(s, "batch/v1", "Job") }, nil},
		{"Advanced StatefulSet with integer maxReplicas", func(s *v1alpha1.WorkloadSpreadSpec) { target(s, "apps.kruise.io/v1beta1", "StatefulSet") }, nil},
		{"StatefulSet with a percentage", func(s *v1alpha1.WorkloadSpreadSpec) {
			target(s, "apps/v1", "StatefulSet")
			s.Subsets[0].MaxReplicas = intOrStr("50%")
		}, []want{{field.ErrorTypeInvalid, "spec.subsets[0].maxReplicas"}}},
		{"a kind nobody allowed", func(s *v1alpha1.WorkloadSpreadSpec) { target(s, "apps.kruise.io/v1alpha1", "DaemonSet") },
			[]want{{field.ErrorTypeInvalid, pRef + ".kind"}}},
		{"a whitelisted custom workload", func(s *v1alpha1.WorkloadSpreadSpec) { target(s, "game.kruise.io/v1alpha1", "GameServerSet") }, nil},
		{"targetFilter with an invalid selector", func(s *v1alpha1.WorkloadSpreadSpec) {
			s.TargetFilter = &v1alpha1.WorkloadSpreadTargetFilter{Selector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "role", Operator: metav1.LabelSelectorOpIn}}}}
		}, []want{{field.ErrorTypeRequired, "spec.targetFilter.selector.matchExpressions[0].values"}}},
		{"targetFilter narrowing the pods", func(s *v1alpha1.WorkloadSpreadSpec) {
			s.TargetFilter = &v1alpha1.WorkloadSpreadTargetFilter{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "web"}},
				ReplicasPathList: []string{"spec.replicas"}}
		}, nil},
	})
}

func TestValidateWorkloadSpreadSubsets(t *testing.T) {
	p0, p1 := "spec.subsets[0]", "spec.subsets[1]"
	runWorkloadSpreadCases(t, nil, []wsCase{
		{"no subsets", func(s *v1alpha1.WorkloadSpreadSpec) { s.Subsets = nil }, []want{{field.ErrorTypeRequired, "spec.subsets"}}},
		{"one subset", func(s *v1alpha1.WorkloadSpreadSpec) { s.Subsets = s.Subsets[:1] }, nil},
		{"subset without a name", func(s *v1alpha1.WorkloadSpreadSpec) { s.Subsets[1].Name = "" }, []want{{field.ErrorTypeRequired, p1 + ".name"}}},
		{"duplicate subset", func(s *v1alpha1.WorkloadSpreadSpec) { s.Subsets[1].Name = "zone-a" }, []want{{field.ErrorTypeDuplicate, p1 + ".name"}}},
		{"required term with a bad key", func(s *v1alpha1.WorkloadSpreadSpec) {
			s.Subsets[0].RequiredNodeSelectorTerm.MatchExpressions[0].Key = "-zone"
		},
			[]want{{field.ErrorTypeInvalid, p0 + ".requiredNodeSelectorTerm.matchExpressions[0].key"}}},
		{"preferred term without weight, Gt of two values", func(s *v1alpha1.WorkloadSpreadSpec) {
			s.Subsets[1].PreferredNodeSelectorTerms[0].Weight = 0
			s.Subsets[1].PreferredNodeSelectorTerms[0].Preference.MatchExpressions[0].Operator = corev1.NodeSelectorOpGt
			s.Subsets[1].PreferredNodeSelectorTerms[0].Preference.MatchExpressions[0].Values = []string{"1", "2"}
		}, []want{{field.ErrorTypeInvalid, p1 + ".preferredNodeSelectorTerms[0].weight"},
			{field.ErrorTypeRequired, p1 + ".preferredNodeSelectorTerms[0].preference.matchExpressions[0].values"}}},
		{"toleration seconds without NoExecute, Exists with a value", func(s *v1alpha1.WorkloadSpreadSpec) {
			s.Subsets[1].Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists, Value: "yes",
				Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr.To[int64](60)}}
		}, []want{{field.ErrorTypeInvalid, p1 + ".tolerations[0].effect"}, {field.ErrorTypeInvalid, p1 + ".tolerations[0].value"}}},
		{"patch not an object", func(s *v1alpha1.WorkloadSpreadSpec) { s.Subsets[0].Patch = runtime.RawExtension{Raw: []byte(`[1]`)} },
			[]want{{field.ErrorTypeInvalid, p0 + ".patch"}}},
		{"patch that does not apply to a pod", func(s *v1alpha1.WorkloadSpreadSpec) {
			s.Subsets[0].Patch = runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":"zone-a"}}`)}
		}, []want{{field.ErrorTypeInvalid, p0 + ".patch"}}},
		{"patch of labels", func(s *v1alpha1.WorkloadSpreadSpec) {
			s.Subsets[0].Patch = runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"subset":"zone-a"}}}`)}
		}, nil},
		{"maxReplicas of two types", func(s *v1alpha1.WorkloadSpreadSpec) { s.Subsets[1].MaxReplicas = intOrStr("50%") },
			[]want{{field.ErrorTypeInvalid, p1 + ".maxReplicas"}}},
		{"negative maxReplicas", func(s *v1alpha1.WorkloadSpreadSpec) { s.Subsets[0].MaxReplicas = intVal(-1) },
			[]want{{field.ErrorTypeInvalid, p0 + ".maxReplicas"}}},
		{"maxReplicas not a whole percentage", func(s *v1alpha1.WorkloadSpreadSpec) { s.Subsets[0].MaxReplicas = intOrStr("12.5%") },
			[]want{{field.ErrorTypeInvalid, p0 + ".maxReplicas"}}},
		{"percentages above 100%", func(s *v1alpha1.WorkloadSpreadSpec) {
			s.Subsets[0].MaxReplicas, s.Subsets[1].MaxReplicas = intOrStr("60%"), intOrStr("50%")
		}, []want{{field.ErrorTypeInvalid, p1 + ".maxReplicas"}}},
		{"percentages short of 100%, last one set", func(s *v1alpha1.WorkloadSpreadSpec) {
			s.Subsets[0].MaxReplicas, s.Subsets[1].MaxReplicas = intOrStr("30%"), intOrStr("50%")
		}, []want{{field.ErrorTypeInvalid, p0 + ".maxReplicas"}}},
		{"percentages of 100%", func(s *v1alpha1.WorkloadSpreadSpec) {
			s.Subsets[0].MaxReplicas, s.Subsets[1].MaxReplicas = intOrStr("30%"), intOrStr("70%")
		}, nil},
		{"a percentage, the rest to the last subset", func(s *v1alpha1.WorkloadSpreadSpec) { s.Subsets[0].MaxReplicas = intOrStr("30%") }, nil},
	})
}

func TestValidateWorkloadSpreadSchedule(t *testing.T) {
	pSchedule := "spec.scheduleStrategy"
	adaptive := func(s *v1alpha1.WorkloadSpreadSpec, seconds int32) {
		s.ScheduleStrategy = v1alpha1.WorkloadSpreadScheduleStrategy{Type: v1alpha1.WorkloadSpreadAdaptiveScheduleStrategy,
			Adaptive: &v1alpha1.WorkloadSpreadAdaptiveStrategy{RescheduleCriticalSeconds: ptr.To(seconds)}}
	}
	runWorkloadSpreadCases(t, nil, []wsCase{
		{"unknown type", func(s *v1alpha1.WorkloadSpreadSpec) { s.ScheduleStrategy.Type = "Random" },
			[]want{{field.ErrorTypeNotSupported, pSchedule + ".type"}}},
		{"adaptive settings with the Fixed type", func(s *v1alpha1.WorkloadSpreadSpec) {
			adaptive(s, 30)
			s.ScheduleStrategy.Type = v1alpha1.WorkloadSpreadFixedScheduleStrategy
		}, []want{{field.ErrorTypeInvalid, pSchedule + ".type"}}},
		{"adaptive with a bounded last subset", func(s *v1alpha1.WorkloadSpreadSpec) {
			adaptive(s, 30)
			s.Subsets[1].MaxReplicas = intVal(2)
		}, []want{{field.ErrorTypeInvalid, pSchedule + ".adaptive"}}},
		{"adaptive at the limit (295 s over one move)", func(s *v1alpha1.WorkloadSpreadSpec) { adaptive(s, 295) }, nil},
		{"adaptive beyond the limit", func(s *v1alpha1.WorkloadSpreadSpec) { adaptive(s, 296) },
			[]want{{field.ErrorTypeInvalid, pSchedule + ".adaptive.rescheduleCriticalSeconds"}}},
		{"adaptive, negative", func(s *v1alpha1.WorkloadSpreadSpec) { adaptive(s, -1) },
			[]want{{field.ErrorTypeInvalid, pSchedule + ".adaptive.rescheduleCriticalSeconds"}}},
	})
}

func TestValidateWorkloadSpreadUpdate(t *testing.T) {
	old := validWorkloadSpread("spread")
	newVersion := old.DeepCopy()
	newVersion.Spec.TargetReference.APIVersion = "apps.kruise.io/v1beta1"
	newVersion.Spec.Subsets[0].MaxReplicas = intVal(5)
	checkErrors(t, ValidateWorkloadSpreadUpdate(newVersion, old, nil), nil)
	renamed := old.DeepCopy()
	renamed.Spec.TargetReference.Name = "api"
	checkErrors(t, ValidateWorkloadSpreadUpdate(renamed, old, nil), []want{{field.ErrorTypeForbidden, "spec.targetRef"}})
	stored := old.DeepCopy()
	stored.Spec.Subsets[1].Name = "zone-a" // refused now, kept by a metadata-only update
	relabelled := stored.DeepCopy()
	relabelled.Labels = map[string]string{"team": "a"}
	checkErrors(t, ValidateWorkloadSpreadUpdate(relabelled, stored, nil), nil)
}

// OpenKruise v1.9.0's WorkloadSpread sample is accepted after the defaulting webhook.
func TestValidateWorkloadSpreadOpenKruiseSample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(compat.OracleDir(filepath.Join("..", "..", "..")), "samples/apps_v1alpha1_workloadspread.yaml"))
	if err != nil {
		t.Fatalf("the OpenKruise oracle (set KRUISE_COMPAT_DIR): %v", err)
	}
	ws := &v1alpha1.WorkloadSpread{}
	if err := yaml.Unmarshal(data, ws); err != nil {
		t.Fatal(err)
	}
	defaults.SetDefaultsWorkloadSpread(ws)
	checkErrors(t, ValidateWorkloadSpread(ws, nil), nil)
}

// workloadSpreadValidator is the webhook's validator over a fake cluster holding objs, its
// kruise-configuration in namespace kruise-system.
func newWorkloadSpreadValidator(t *testing.T, checker PodTemplateChecker, objs ...client.Object) workloadSpreadValidator {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(webhookfuzz.NewScheme(t)).WithObjects(objs...).Build()
	return workloadSpreadValidator{opts: WorkloadSpreadOptions{Reader: c, Config: c, Namespace: "kruise-system", Templates: checker}}
}

// A workload is spread by one WorkloadSpread only (whatever the version in targetRef; another
// namespace does not count); a custom workload is accepted once the whitelist lists it; a subset
// patch is dry-run on the existing workload's template and refused at the patch.
func TestWorkloadSpreadWebhook(t *testing.T) {
	ctx := context.Background()
	other := validWorkloadSpread("spread-old")
	other.Spec.TargetReference.APIVersion = "apps.kruise.io/v1beta1"
	elsewhere := validWorkloadSpread("spread-elsewhere")
	elsewhere.Namespace = "other"
	whitelist := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: KruiseConfigurationName, Namespace: "kruise-system"},
		Data: map[string]string{WorkloadSpreadWhitelistKey: `{"workloads":[{"Group":"game.kruise.io","Version":"v1","Kind":"GameServerSet","replicasPath":"spec.replicas"}]}`}}
	cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "ns"}, Spec: v1alpha1.CloneSetSpec{Template: webPodTemplate()}}
	checker := &pathTemplates{}
	v := newWorkloadSpreadValidator(t, checker, other, elsewhere, whitelist, cs)

	_, err := v.ValidateCreate(ctx, validWorkloadSpread("spread"))
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeInvalid, "spec.targetRef"}})
	if err == nil || !strings.Contains(err.Error(), "WorkloadSpread spread-old") {
		t.Errorf("want the conflict to name spread-old, got %v", err)
	}
	if _, err := v.ValidateUpdate(ctx, other, func() *v1alpha1.WorkloadSpread {
		o := other.DeepCopy()
		o.Spec.Subsets[0].MaxReplicas = intVal(4)
		return o
	}()); err != nil {
		t.Errorf("the WorkloadSpread in place conflicts with none but itself: %v", err)
	}

	custom := validWorkloadSpread("game")
	custom.Spec.TargetReference = &v1alpha1.WorkloadSpreadTargetReference{APIVersion: "game.kruise.io/v1", Kind: "GameServerSet", Name: "gs"}
	if _, err := v.ValidateCreate(ctx, custom); err != nil {
		t.Errorf("a whitelisted custom workload: %v", err)
	}
	unlisted := custom.DeepCopy()
	unlisted.Spec.TargetReference.Kind = "GameServer"
	_, err = v.ValidateCreate(ctx, unlisted)
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeInvalid, "spec.targetRef.kind"}})

	patched := validWorkloadSpread("api")
	patched.Spec.TargetReference.Name = "api"
	patched.Spec.Subsets[1].Patch = runtime.RawExtension{Raw: []byte(`{"spec":{"containers":[{"name":"web","image":"refused"}]}}`)}
	_, err = v.ValidateCreate(ctx, patched)
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeInvalid, "spec.subsets[1].patch.spec.containers[0].image"}})
	patched.Spec.Subsets[1].Patch = runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"zone":"b"}}}`)}
	if _, err := v.ValidateCreate(ctx, patched); err != nil {
		t.Errorf("a patch of labels: %v", err)
	}
	noWorkload := validWorkloadSpread("later")
	noWorkload.Spec.TargetReference.Name = "later"
	noWorkload.Spec.Subsets[1].Patch = runtime.RawExtension{Raw: []byte(`{"spec":{"containers":[{"name":"web","image":"refused"}]}}`)}
	if _, err := v.ValidateCreate(ctx, noWorkload); err != nil {
		t.Errorf("a WorkloadSpread made before its workload: the patch is not dry-run, got %v", err)
	}
	if len(checker.paths) != 2 {
		t.Errorf("want two dry runs (the refused and the accepted patch), got %v", checker.paths)
	}
}
