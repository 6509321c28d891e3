package validating

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/test/compat"
)

// stsUpdate is one change of a stored StatefulSet and the errors expected for it.
type stsUpdate struct {
	name   string
	old    func(*v1beta1.StatefulSetSpec) // the stored object, from validStatefulSet; nil: as is
	mutate func(*v1beta1.StatefulSetSpec) // the new object, from the stored one
	want   []want
}

func runStatefulSetUpdates(t *testing.T, cases []stsUpdate) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := validStatefulSet()
			if tc.old != nil {
				tc.old(&old.Spec)
			}
			cur := old.DeepCopy()
			tc.mutate(&cur.Spec)
			checkErrors(t, ValidateStatefulSetUpdate(cur, old), tc.want)
		})
	}
}

func env(s *v1beta1.StatefulSetSpec) {
	s.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
}

func TestValidateStatefulSetUpdate(t *testing.T) {
	runStatefulSetUpdates(t, []stsUpdate{
		{"scale and new image", nil, func(s *v1beta1.StatefulSetSpec) {
			s.Replicas = ptr.To[int32](10)
			s.Template.Spec.Containers[0].Image = "postgres:2"
		}, nil},
		{"every mutable field changed", nil, func(s *v1beta1.StatefulSetSpec) {
			s.Replicas, s.RevisionHistoryLimit = ptr.To[int32](7), ptr.To[int32](3)
			s.Ordinals = &appsv1.StatefulSetOrdinals{Start: 1}
			s.ReserveOrdinals = []intstr.IntOrString{intstr.FromInt32(1), intstr.FromString("4-5")}
			env(s)
			s.UpdateStrategy.RollingUpdate = &v1beta1.StatefulSetRollingUpdateStrategy{Partition: ptr.To[int32](2), MaxUnavailable: strVal("50%"),
				PodUpdatePolicy: v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy, Paused: true, MinReadySeconds: ptr.To[int32](30),
				InPlaceUpdateStrategy: &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: 5}}
			s.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType}
			s.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"example.io/x"}}}
			s.ScaleStrategy = &v1beta1.StatefulSetScaleStrategy{MaxUnavailable: intVal(1)}
			s.VolumeClaimUpdateStrategy.Type = v1beta1.OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy
			s.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("20Gi")
		}, nil},
		{"switched to OnDelete", nil, func(s *v1beta1.StatefulSetSpec) {
			s.UpdateStrategy = v1beta1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
		}, nil},
		{"selector changed", nil, func(s *v1beta1.StatefulSetSpec) { s.Selector.MatchLabels["tier"] = "data" },
			[]want{{field.ErrorTypeInvalid, "spec.selector"}}},
		{"serviceName changed", nil, func(s *v1beta1.StatefulSetSpec) { s.ServiceName = "db-v2" },
			[]want{{field.ErrorTypeInvalid, "spec.serviceName"}}},
		{"podManagementPolicy changed", nil, parallel, []want{{field.ErrorTypeInvalid, "spec.podManagementPolicy"}}},
		{"podManagementPolicy written out as its default", func(s *v1beta1.StatefulSetSpec) { s.PodManagementPolicy = "" },
			func(s *v1beta1.StatefulSetSpec) { s.PodManagementPolicy = appsv1.OrderedReadyPodManagement }, nil},
		{"the new object is validated", nil, func(s *v1beta1.StatefulSetSpec) { rolling(s).Partition = ptr.To[int32](-1) },
			[]want{{field.ErrorTypeInvalid, pRolling + ".partition"}}},
	})
}

// With volumeClaimUpdateStrategy OnPodRollingUpdate, claim template changes reach existing claims,
// so only their storage size may change; otherwise they apply to new claims only, and any change
// is allowed (as in OpenKruise).
func TestValidateStatefulSetClaimChanges(t *testing.T) {
	runStatefulSetUpdates(t, []stsUpdate{
		{"OnPVCDelete: claim added", nil, func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimTemplates = append(s.VolumeClaimTemplates, claimTemplate("logs", "1Gi"))
		}, nil},
		{"OnPVCDelete: claim access modes changed", nil, func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimTemplates[0].Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}, nil},
	})
	runStatefulSetUpdates(t, onPodRollingUpdate([]stsUpdate{
		{"claim grown", nil, func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("20Gi")
		}, nil},
		{"claim shrunk (the size is the user's call)", nil, func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("512Mi")
		}, nil},
		{"claim storage limit set", nil, func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimTemplates[0].Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
		}, nil},
		{"claim status differs", nil, func(s *v1beta1.StatefulSetSpec) { s.VolumeClaimTemplates[0].Status.Phase = corev1.ClaimPending }, nil},
		{"claim size spelt otherwise", nil, func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("1024Mi")
		}, nil},
		{"claim access modes changed", nil, func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimTemplates[0].Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}, []want{{field.ErrorTypeForbidden, pClaims + "[0]"}}},
		{"claim storage class changed", nil, func(s *v1beta1.StatefulSetSpec) { s.VolumeClaimTemplates[0].Spec.StorageClassName = ptr.To("fast") },
			[]want{{field.ErrorTypeForbidden, pClaims + "[0]"}}},
		{"claim cpu request added", nil, func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
		}, []want{{field.ErrorTypeForbidden, pClaims + "[0]"}}},
		{"claim labels changed", nil, func(s *v1beta1.StatefulSetSpec) { s.VolumeClaimTemplates[0].Labels = map[string]string{"a": "b"} },
			[]want{{field.ErrorTypeForbidden, pClaims + "[0]"}}},
		{"claim renamed", nil, func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimTemplates[0].Name = "data2"
			s.Template.Spec.Containers[0].VolumeMounts[0].Name = "data2"
		}, []want{{field.ErrorTypeForbidden, pClaims + "[0]"}}},
		{"claim added", nil, func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimTemplates = append(s.VolumeClaimTemplates, claimTemplate("logs", "1Gi"))
		},
			[]want{{field.ErrorTypeForbidden, pClaims}}},
		{"claim removed", nil, func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimTemplates = nil
			s.Template.Spec.Containers[0].VolumeMounts = nil
		}, []want{{field.ErrorTypeForbidden, pClaims}}},
		{"stored claim Kruise refuses is not checked while unchanged",
			func(s *v1beta1.StatefulSetSpec) { s.VolumeClaimTemplates[0].Spec.AccessModes = nil },
			func(s *v1beta1.StatefulSetSpec) { s.Replicas = ptr.To[int32](5) }, nil},
		{"stored claim Kruise refuses is checked once changed",
			func(s *v1beta1.StatefulSetSpec) { s.VolumeClaimTemplates[0].Spec.AccessModes = nil },
			func(s *v1beta1.StatefulSetSpec) {
				s.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
			}, []want{{field.ErrorTypeRequired, pClaims + "[0].spec.accessModes"}}},
	}))
}

// onPodRollingUpdate stores and sends each case with volumeClaimUpdateStrategy OnPodRollingUpdate.
func onPodRollingUpdate(cases []stsUpdate) []stsUpdate {
	for i, c := range cases {
		old, mutate := c.old, c.mutate
		cases[i].old = func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimUpdateStrategy.Type = v1beta1.OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy
			if old != nil {
				old(s)
			}
		}
		cases[i].mutate = mutate
	}
	return cases
}

func TestValidateStatefulSetUpdateInPlaceOnly(t *testing.T) {
	inPlaceOnly := func(s *v1beta1.StatefulSetSpec) {
		rolling(s).PodUpdatePolicy = v1beta1.InPlaceOnlyStatefulSetPodUpdatePolicy
	}
	runStatefulSetUpdates(t, []stsUpdate{
		{"InPlaceOnly: image, labels and annotations change", inPlaceOnly, func(s *v1beta1.StatefulSetSpec) {
			s.Template.Spec.Containers[0].Image = "postgres:2"
			s.Template.Labels["version"] = "2"
			s.Template.Annotations = map[string]string{"note": "v2"}
		}, nil},
		{"InPlaceOnly: env change", inPlaceOnly, env, []want{{field.ErrorTypeForbidden, "spec.template"}}},
		{"InPlaceOnly: container added", inPlaceOnly, func(s *v1beta1.StatefulSetSpec) {
			s.Template.Spec.Containers = append(s.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "envoy"})
		}, []want{{field.ErrorTypeForbidden, "spec.template"}}},
		{"switching to InPlaceOnly with an env change", nil, func(s *v1beta1.StatefulSetSpec) { inPlaceOnly(s); env(s) },
			[]want{{field.ErrorTypeForbidden, "spec.template"}}},
		{"switching from InPlaceOnly to ReCreate with an env change", inPlaceOnly, func(s *v1beta1.StatefulSetSpec) {
			rolling(s).PodUpdatePolicy = v1beta1.RecreateStatefulSetPodUpdatePolicy
			env(s)
		}, nil},
		{"InPlaceIfPossible: env change", func(s *v1beta1.StatefulSetSpec) {
			rolling(s).PodUpdatePolicy = v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy
		}, env, nil},
	})
}

// Every spec field is either mutable or reported at its own path when changed: a field added to
// the API must be classified here (and in ValidateStatefulSetUpdate when immutable).
func TestStatefulSetSpecFieldsClassified(t *testing.T) {
	immutable := map[string]func(*v1beta1.StatefulSetSpec){
		"selector":            func(s *v1beta1.StatefulSetSpec) { s.Selector.MatchLabels["tier"] = "data" },
		"serviceName":         func(s *v1beta1.StatefulSetSpec) { s.ServiceName = "other" },
		"podManagementPolicy": parallel,
	}
	mutable := map[string]bool{"replicas": true, "template": true, "volumeClaimTemplates": true, "updateStrategy": true,
		"revisionHistoryLimit": true, "reserveOrdinals": true, "lifecycle": true, "scaleStrategy": true,
		"persistentVolumeClaimRetentionPolicy": true, "ordinals": true, "volumeClaimUpdateStrategy": true}
	typ := reflect.TypeFor[v1beta1.StatefulSetSpec]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		change, isImmutable := immutable[name]
		if !isImmutable {
			if !mutable[name] {
				t.Errorf("spec.%s is neither mutable nor immutable here: decide, as OpenKruise does", name)
			}
			continue
		}
		old := validStatefulSet()
		cur := old.DeepCopy()
		change(&cur.Spec)
		checkErrors(t, ValidateStatefulSetUpdate(cur, old), []want{{field.ErrorTypeInvalid, "spec." + name}})
	}
}

// A metadata-only update is accepted even when the stored spec would now be refused.
func TestValidateStatefulSetUpdateAcceptsMetadataOnlyChanges(t *testing.T) {
	old := validStatefulSet()
	rolling(&old.Spec).MaxUnavailable = intVal(0)
	cur := old.DeepCopy()
	cur.Labels, cur.Finalizers = map[string]string{"team": "a"}, nil
	checkErrors(t, ValidateStatefulSetUpdate(cur, old), nil)
	cur.Spec.Replicas = ptr.To[int32](4)
	checkErrors(t, ValidateStatefulSetUpdate(cur, old), []want{{field.ErrorTypeInvalid, pRolling + ".maxUnavailable"}})
}

// OpenKruise v1.9.0's StatefulSet samples and the StatefulSet its takeover fixture left behind get
// OpenKruise's answer, after the defaulting webhook: the valid ones are accepted, on create and on
// a scale; the scaffolding sample without a selector is refused, as OpenKruise refuses it.
func TestValidateStatefulSetOpenKruiseObjects(t *testing.T) {
	dir := compat.OracleDir(filepath.Join("..", "..", ".."))
	files := map[string][]want{
		"samples/apps_v1alpha1_statefulset.yaml": nil,
		"samples/apps_v1beta1_statefulset.yaml": {{field.ErrorTypeRequired, "spec.selector"},
			{field.ErrorTypeRequired, "spec.template.spec.containers"}},
		"takeover/workloads/statefulsets.apps.kruise.io.yaml": nil,
	}
	for file, expect := range files {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatalf("the OpenKruise oracle (set KRUISE_COMPAT_DIR): %v", err)
			}
			objs := decodeVersioned(t, data, "StatefulSet", defaults.SetDefaultsStatefulSet, defaults.SetDefaultsStatefulSetV1beta1)
			if len(objs) == 0 {
				t.Fatalf("no StatefulSet in %s", file)
			}
			for _, sts := range objs {
				checkErrors(t, ValidateStatefulSet(sts), expect)
				if expect != nil {
					continue
				}
				scaled := sts.DeepCopy()
				scaled.Spec.Replicas = ptr.To(*sts.Spec.Replicas + 1)
				checkErrors(t, ValidateStatefulSetUpdate(scaled, sts), nil)
			}
		})
	}
}

// checkedTemplates records the templates the webhook asks the dry run about, and refuses none.
type checkedTemplates struct{ seen []*corev1.PodTemplateSpec }

func (c *checkedTemplates) Check(_ context.Context, _ string, tmpl *corev1.PodTemplateSpec, _ *field.Path) field.ErrorList {
	c.seen = append(c.seen, tmpl)
	return nil
}

// The v1alpha1 webhook validates the object as v1beta1, v1beta1-only fields (kept in the
// conversion annotation) included; the template is dry-run with the claim volumes, on create and
// when it changed only.
func TestStatefulSetWebhookV1alpha1(t *testing.T) {
	ctx := context.Background()
	checker := &checkedTemplates{}
	v := statefulSetValidator[*v1alpha1.StatefulSet]{templates: checker,
		toV1beta1: func(o *v1alpha1.StatefulSet) (*v1beta1.StatefulSet, error) {
			out := &v1beta1.StatefulSet{}
			return out, o.ConvertTo(out)
		}}
	beta := validStatefulSet()
	alpha := &v1alpha1.StatefulSet{}
	if err := alpha.ConvertFrom(beta); err != nil {
		t.Fatal(err)
	}
	if _, err := v.ValidateCreate(ctx, alpha); err != nil {
		t.Fatalf("valid v1alpha1 StatefulSet refused: %v", err)
	}
	if len(checker.seen) != 1 || len(checker.seen[0].Spec.Volumes) != 1 || checker.seen[0].Spec.Volumes[0].PersistentVolumeClaim == nil {
		t.Fatalf("want one dry run of the template with the claim's volume, got %+v", checker.seen)
	}
	scaled := alpha.DeepCopy()
	scaled.Spec.Replicas = ptr.To[int32](5)
	if _, err := v.ValidateUpdate(ctx, alpha, scaled); err != nil || len(checker.seen) != 1 {
		t.Fatalf("scaling: err %v, %d dry runs (want none for an unchanged template)", err, len(checker.seen)-1)
	}

	reserved := beta.DeepCopy()
	reserved.Spec.ReserveOrdinals = []intstr.IntOrString{intstr.FromString("5-1")}
	if err := alpha.ConvertFrom(reserved); err != nil {
		t.Fatal(err)
	}
	_, err := v.ValidateCreate(ctx, alpha)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.reserveOrdinals[0]") {
		t.Errorf("a v1beta1-only field of a v1alpha1 object: want Invalid at spec.reserveOrdinals[0], got %v", err)
	}

	alpha.Annotations = map[string]string{v1alpha1.ConversionV1beta1OnlyAnnotation: "{not json"}
	_, err = v.ValidateCreate(ctx, alpha)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.annotations["+v1alpha1.ConversionV1beta1OnlyAnnotation+"]") {
		t.Errorf("unreadable conversion annotation: want Invalid at the annotation, got %v", err)
	}
}

// Under OnPodRollingUpdate a growing claim template needs a StorageClass that can expand.
func TestRefusedExpansions(t *testing.T) {
	classes := fake.NewClientBuilder().WithObjects(
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard",
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "expandable"}, AllowVolumeExpansion: ptr.To(true)}).Build()
	for _, c := range []struct {
		name  string
		class *string
		ok    bool
	}{{"default class, no expansion", nil, false}, {"expandable", ptr.To("expandable"), true}, {"no class", ptr.To(""), false},
		{"missing class", ptr.To("gone"), false}} {
		old := validStatefulSet()
		old.Spec.VolumeClaimUpdateStrategy.Type = v1beta1.OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy
		old.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = c.class
		cur := old.DeepCopy()
		cur.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("20Gi")
		if errs := refusedExpansions(context.Background(), classes, cur, old); (len(errs) == 0) != c.ok {
			t.Errorf("%s: errors %v, want ok %v", c.name, errs, c.ok)
		}
		cur.Spec.VolumeClaimUpdateStrategy.Type = v1beta1.OnPVCDeleteStatefulSetVolumeClaimUpdateStrategy
		if errs := refusedExpansions(context.Background(), classes, cur, old); len(errs) != 0 {
			t.Errorf("%s, OnPVCDelete: %v", c.name, errs)
		}
	}
}
