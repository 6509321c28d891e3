package validating

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// validDaemonSet is a defaulted Advanced DaemonSet every rule accepts: a Standard rolling update
// with maxUnavailable 1.
func validDaemonSet() *v1beta1.DaemonSet {
	return &v1beta1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns"},
		Spec: v1beta1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent:v1"}}},
			},
			UpdateStrategy: v1beta1.DaemonSetUpdateStrategy{
				Type: v1beta1.DaemonSetRollingUpdateStrategyType,
				RollingUpdate: &v1beta1.DaemonSetRollingUpdate{Type: v1beta1.DaemonSetStandardRollingUpdateType,
					MaxUnavailable: intVal(1), MaxSurge: intVal(0)},
			},
			BurstReplicas:        intVal(250),
			RevisionHistoryLimit: ptr.To[int32](10),
		},
	}
}

// dsCase is one spec and the errors expected for it.
type dsCase struct {
	name   string
	mutate func(*v1beta1.DaemonSetSpec)
	want   []want
}

func runDaemonSetCases(t *testing.T, cases []dsCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := validDaemonSet()
			tc.mutate(&ds.Spec)
			errs := ValidateDaemonSet(ds)
			checkErrors(t, errs, tc.want)
			for _, e := range errs {
				if e.Detail == "" && e.Type != field.ErrorTypeRequired && e.Type != field.ErrorTypeNotSupported {
					t.Errorf("%s: no message says what is wrong", e.Field)
				}
			}
		})
	}
}

const pDSRolling = "spec.updateStrategy.rollingUpdate"

func dsRolling(s *v1beta1.DaemonSetSpec) *v1beta1.DaemonSetRollingUpdate {
	return s.UpdateStrategy.RollingUpdate
}

func TestValidateDaemonSetSpec(t *testing.T) {
	runDaemonSetCases(t, []dsCase{
		{"valid", func(*v1beta1.DaemonSetSpec) {}, nil},
		{"defaults left empty", func(s *v1beta1.DaemonSetSpec) {
			s.BurstReplicas, s.RevisionHistoryLimit, s.UpdateStrategy = nil, nil, v1beta1.DaemonSetUpdateStrategy{}
		}, nil},
		{"selector missing", func(s *v1beta1.DaemonSetSpec) { s.Selector = nil }, []want{{field.ErrorTypeRequired, "spec.selector"}}},
		{"selector empty", func(s *v1beta1.DaemonSetSpec) { s.Selector = &metav1.LabelSelector{} }, []want{{field.ErrorTypeInvalid, "spec.selector"}}},
		{"selector not matching the template", func(s *v1beta1.DaemonSetSpec) { s.Template.Labels = map[string]string{"app": "web"} },
			[]want{{field.ErrorTypeInvalid, "spec.template.metadata.labels"}}},
		{"no container", func(s *v1beta1.DaemonSetSpec) { s.Template.Spec.Containers = nil },
			[]want{{field.ErrorTypeRequired, "spec.template.spec.containers"}}},
		{"restartPolicy OnFailure", func(s *v1beta1.DaemonSetSpec) { s.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
			[]want{{field.ErrorTypeNotSupported, "spec.template.spec.restartPolicy"}}},
		{"restartPolicy Always", func(s *v1beta1.DaemonSetSpec) { s.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways }, nil},
		{"activeDeadlineSeconds", func(s *v1beta1.DaemonSetSpec) { s.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) },
			[]want{{field.ErrorTypeForbidden, "spec.template.spec.activeDeadlineSeconds"}}},
		{"minReadySeconds -1", func(s *v1beta1.DaemonSetSpec) { s.MinReadySeconds = -1 }, []want{{field.ErrorTypeInvalid, "spec.minReadySeconds"}}},
		{"minReadySeconds 30", func(s *v1beta1.DaemonSetSpec) { s.MinReadySeconds = 30 }, nil},
		{"revisionHistoryLimit -1", func(s *v1beta1.DaemonSetSpec) { s.RevisionHistoryLimit = ptr.To[int32](-1) },
			[]want{{field.ErrorTypeInvalid, "spec.revisionHistoryLimit"}}},
		{"revisionHistoryLimit 0", func(s *v1beta1.DaemonSetSpec) { s.RevisionHistoryLimit = ptr.To[int32](0) }, nil},
		{"burstReplicas -1", func(s *v1beta1.DaemonSetSpec) { s.BurstReplicas = intVal(-1) }, []want{{field.ErrorTypeInvalid, "spec.burstReplicas"}}},
		{"burstReplicas not a number", func(s *v1beta1.DaemonSetSpec) { s.BurstReplicas = strVal("many") },
			[]want{{field.ErrorTypeInvalid, "spec.burstReplicas"}}},
		{"burstReplicas 150%", func(s *v1beta1.DaemonSetSpec) { s.BurstReplicas = strVal("150%") }, nil},
		{"burstReplicas 0", func(s *v1beta1.DaemonSetSpec) { s.BurstReplicas = intVal(0) }, nil},
		{"lifecycle preDelete and preNormal", func(s *v1beta1.DaemonSetSpec) {
			s.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"example.com/hold"}},
				PreNormal: &appspub.LifecycleHook{LabelsHandler: map[string]string{"example.com/ready": "true"}}}
		}, nil},
		{"lifecycle inPlaceUpdate", func(s *v1beta1.DaemonSetSpec) {
			s.Lifecycle = &appspub.Lifecycle{InPlaceUpdate: &appspub.LifecycleHook{MarkPodNotReady: true}}
		}, []want{{field.ErrorTypeForbidden, "spec.lifecycle.inPlaceUpdate"}}},
	})
}

func TestValidateDaemonSetUpdateStrategy(t *testing.T) {
	surge := func(unavailable, surge *intstr.IntOrString) func(*v1beta1.DaemonSetSpec) {
		return func(s *v1beta1.DaemonSetSpec) {
			dsRolling(s).MaxUnavailable, dsRolling(s).MaxSurge = unavailable, surge
		}
	}
	runDaemonSetCases(t, []dsCase{
		{"type unknown", func(s *v1beta1.DaemonSetSpec) { s.UpdateStrategy.Type = "Recreate" },
			[]want{{field.ErrorTypeNotSupported, "spec.updateStrategy.type"}}},
		{"OnDelete does not read rollingUpdate", func(s *v1beta1.DaemonSetSpec) {
			s.UpdateStrategy.Type = v1beta1.DaemonSetOnDeleteStrategyType
			dsRolling(s).MaxUnavailable, dsRolling(s).Type = strVal("x"), "Surging"
		}, nil},
		{"rollingUpdate with every field unset", func(s *v1beta1.DaemonSetSpec) {
			s.UpdateStrategy.RollingUpdate = &v1beta1.DaemonSetRollingUpdate{}
		}, nil},
		{"maxUnavailable 10%", surge(strVal("10%"), nil), nil},
		{"maxUnavailable 100%", surge(strVal("100%"), intVal(0)), nil},
		{"maxUnavailable 101%", surge(strVal("101%"), nil), []want{{field.ErrorTypeInvalid, pDSRolling + ".maxUnavailable"}}},
		{"maxUnavailable -1", surge(intVal(-1), nil), []want{{field.ErrorTypeInvalid, pDSRolling + ".maxUnavailable"}}},
		{"maxUnavailable without %", surge(strVal("5"), nil), []want{{field.ErrorTypeInvalid, pDSRolling + ".maxUnavailable"}}},
		{"maxUnavailable not a whole percentage", surge(strVal("50.5%"), nil), []want{{field.ErrorTypeInvalid, pDSRolling + ".maxUnavailable"}}},
		{"maxUnavailable and maxSurge both 0", surge(intVal(0), intVal(0)), []want{{field.ErrorTypeInvalid, pDSRolling + ".maxUnavailable"}}},
		{"maxUnavailable 0% and maxSurge unset", surge(strVal("0%"), nil), []want{{field.ErrorTypeInvalid, pDSRolling + ".maxUnavailable"}}},
		{"maxSurge 0 alone", surge(nil, intVal(0)), []want{{field.ErrorTypeInvalid, pDSRolling + ".maxUnavailable"}}},
		{"maxSurge 1 alone", surge(nil, intVal(1)), nil},
		{"maxSurge 30% with maxUnavailable 0", surge(intVal(0), strVal("30%")), nil},
		{"maxSurge 101%", surge(intVal(0), strVal("101%")), []want{{field.ErrorTypeInvalid, pDSRolling + ".maxSurge"}}},
		{"maxSurge and maxUnavailable both set", surge(intVal(1), intVal(1)), []want{{field.ErrorTypeInvalid, pDSRolling + ".maxSurge"}}},
		{"InPlaceIfPossible", func(s *v1beta1.DaemonSetSpec) { dsRolling(s).Type = v1beta1.DaemonSetInplaceRollingUpdateType }, nil},
		{"InPlaceIfPossible with surge", func(s *v1beta1.DaemonSetSpec) {
			surge(intVal(0), intVal(1))(s)
			dsRolling(s).Type = v1beta1.DaemonSetInplaceRollingUpdateType
		}, []want{{field.ErrorTypeForbidden, pDSRolling + ".maxSurge"}}},
		{"rollingUpdateType Surging (v1alpha1 only)", func(s *v1beta1.DaemonSetSpec) { dsRolling(s).Type = "Surging" },
			[]want{{field.ErrorTypeNotSupported, pDSRolling + ".rollingUpdateType"}}},
		{"partition 3", func(s *v1beta1.DaemonSetSpec) { dsRolling(s).Partition = intVal(3) }, nil},
		{"partition 50%", func(s *v1beta1.DaemonSetSpec) { dsRolling(s).Partition = strVal("50%") }, nil},
		{"partition -1", func(s *v1beta1.DaemonSetSpec) { dsRolling(s).Partition = intVal(-1) },
			[]want{{field.ErrorTypeInvalid, pDSRolling + ".partition"}}},
		{"partition 120%", func(s *v1beta1.DaemonSetSpec) { dsRolling(s).Partition = strVal("120%") },
			[]want{{field.ErrorTypeInvalid, pDSRolling + ".partition"}}},
		{"paused", func(s *v1beta1.DaemonSetSpec) { dsRolling(s).Paused = ptr.To(true) }, nil},
		{"node selector", func(s *v1beta1.DaemonSetSpec) {
			dsRolling(s).Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"node-type": "canary"}}
		}, nil},
		{"node selector with an unknown operator", func(s *v1beta1.DaemonSetSpec) {
			dsRolling(s).Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: "Near"}}}
		}, []want{{field.ErrorTypeInvalid, pDSRolling + ".selector.matchExpressions[0].operator"}}},
	})
}

func TestValidateDaemonSetUpdate(t *testing.T) {
	old := validDaemonSet()
	for _, tc := range []struct {
		name   string
		mutate func(*v1beta1.DaemonSet)
		want   []want
	}{
		{"new image", func(ds *v1beta1.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = "agent:v2" }, nil},
		{"every mutable field", func(ds *v1beta1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.Partition = strVal("50%")
			ds.Spec.ScaleStrategy = &v1beta1.DaemonSetScaleStrategy{PartitionedScaling: true}
			ds.Spec.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{MarkPodNotReady: true}}
			ds.Spec.BurstReplicas, ds.Spec.MinReadySeconds, ds.Spec.RevisionHistoryLimit = intVal(10), 5, ptr.To[int32](3)
		}, nil},
		{"selector changed", func(ds *v1beta1.DaemonSet) {
			ds.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent", "v": "2"}}
			ds.Spec.Template.Labels["v"] = "2"
		}, []want{{field.ErrorTypeInvalid, "spec.selector"}}},
		{"invalid change", func(ds *v1beta1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = intVal(0) },
			[]want{{field.ErrorTypeInvalid, pDSRolling + ".maxUnavailable"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := old.DeepCopy()
			tc.mutate(cur)
			checkErrors(t, ValidateDaemonSetUpdate(cur, old), tc.want)
		})
	}

	// A stored spec Kruise refuses (OpenKruise accepts an invalid node selector) can still be
	// relabelled; a spec change is validated in full.
	stored := validDaemonSet()
	stored.Spec.UpdateStrategy.RollingUpdate.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}
	cur := stored.DeepCopy()
	cur.Labels = map[string]string{"team": "a"}
	checkErrors(t, ValidateDaemonSetUpdate(cur, stored), nil)
	cur.Spec.MinReadySeconds = 1
	checkErrors(t, ValidateDaemonSetUpdate(cur, stored), []want{{field.ErrorTypeInvalid, pDSRolling + ".selector.matchLabels"}})
}

// The DaemonSet OpenKruise v1.9.0 stored in its takeover fixture is accepted after the defaulting
// webhook, on create and on its next template change.
func TestValidateDaemonSetOpenKruiseObjects(t *testing.T) {
	dir := compat.OracleDir(filepath.Join("..", "..", ".."))
	data, err := os.ReadFile(filepath.Join(dir, "takeover/workloads/daemonsets.apps.kruise.io.yaml"))
	if err != nil {
		t.Fatalf("the OpenKruise oracle (set KRUISE_COMPAT_DIR): %v", err)
	}
	objs := decodeVersioned(t, data, daemonSetKind, defaults.SetDefaultsDaemonSet, defaults.SetDefaultsDaemonSetV1beta1)
	if len(objs) == 0 {
		t.Fatal("no DaemonSet in the takeover fixture")
	}
	for _, ds := range objs {
		checkErrors(t, ValidateDaemonSet(ds), nil)
		next := ds.DeepCopy()
		next.Spec.Template.Spec.Containers[0].Image = "example.com/agent:v3"
		checkErrors(t, ValidateDaemonSetUpdate(next, ds), nil)
	}
}

// The v1alpha1 webhook validates the object as v1beta1 (the progressive-create-pod annotation as
// partitionedScaling, Surging as Standard); the template is dry-run on create and when it changed
// only; a surge update of host-port pods is allowed with a warning.
func TestDaemonSetWebhook(t *testing.T) {
	ctx := context.Background()
	checker := &checkedTemplates{}
	alphaV := daemonSetValidator[*v1alpha1.DaemonSet]{templates: checker, toV1beta1: toHub[*v1alpha1.DaemonSet, v1beta1.DaemonSet]}
	alpha := &v1alpha1.DaemonSet{}
	if err := alpha.ConvertFrom(validDaemonSet()); err != nil {
		t.Fatal(err)
	}
	alpha.Annotations = map[string]string{v1alpha1.DaemonSetProgressiveCreatePodAnnotation: "true"}
	alpha.Spec.UpdateStrategy.RollingUpdate = &v1alpha1.DaemonSetRollingUpdate{Type: v1alpha1.DaemonSetSurgingRollingUpdateType,
		MaxUnavailable: intVal(0), MaxSurge: intVal(1)}
	if warnings, err := alphaV.ValidateCreate(ctx, alpha); err != nil || len(warnings) != 0 {
		t.Fatalf("valid v1alpha1 DaemonSet: warnings %v, err %v", warnings, err)
	}
	if len(checker.seen) != 1 {
		t.Fatalf("want one dry run of the template, got %d", len(checker.seen))
	}
	relabelled := alpha.DeepCopy()
	relabelled.Labels = map[string]string{"team": "a"}
	if _, err := alphaV.ValidateUpdate(ctx, alpha, relabelled); err != nil || len(checker.seen) != 1 {
		t.Fatalf("relabelling: err %v, %d dry runs (want none for an unchanged template)", err, len(checker.seen)-1)
	}

	alpha.Annotations[v1alpha1.ConversionV1beta1OnlyAnnotation] = "{not json"
	_, err := alphaV.ValidateCreate(ctx, alpha)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.annotations["+v1alpha1.ConversionV1beta1OnlyAnnotation+"]") {
		t.Errorf("unreadable conversion annotation: want Invalid at the annotation, got %v", err)
	}

	betaV := daemonSetValidator[*v1beta1.DaemonSet]{templates: checker, toV1beta1: same[*v1beta1.DaemonSet]}
	hostPorts := validDaemonSet()
	hostPorts.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 9100, HostPort: 9100}}
	if warnings, err := betaV.ValidateCreate(ctx, hostPorts); err != nil || len(warnings) != 0 {
		t.Fatalf("host ports without surge: warnings %v, err %v", warnings, err)
	}
	surging := hostPorts.DeepCopy()
	surging.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable, surging.Spec.UpdateStrategy.RollingUpdate.MaxSurge = intVal(0), intVal(1)
	warnings, err := betaV.ValidateUpdate(ctx, hostPorts, surging)
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "hostPort 9100") {
		t.Fatalf("surge with host ports: want one warning, got %v (err %v)", warnings, err)
	}
	if len(checker.seen) != 2 {
		t.Fatalf("want no dry run for an unchanged template, got %d in all", len(checker.seen))
	}

	bad := validDaemonSet()
	bad.Spec.Selector = nil
	if _, err := betaV.ValidateCreate(ctx, bad); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.selector") {
		t.Errorf("no selector: want Invalid at spec.selector, got %v", err)
	}
}
