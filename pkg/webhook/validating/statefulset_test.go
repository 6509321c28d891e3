package validating

import (
	"math"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// validStatefulSet is a defaulted Advanced StatefulSet every rule accepts: OrderedReady, ReCreate,
// one claim template mounted by its container, the in-place readiness gate.
func validStatefulSet() *v1beta1.StatefulSet {
	return &v1beta1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"},
		Spec: v1beta1.StatefulSetSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db", "tier": "data"}},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "main", Image: "postgres:1",
						VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
					ReadinessGates: []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{claimTemplate("data", "1Gi")},
			ServiceName:          "db",
			PodManagementPolicy:  appsv1.OrderedReadyPodManagement,
			UpdateStrategy: v1beta1.StatefulSetUpdateStrategy{
				Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &v1beta1.StatefulSetRollingUpdateStrategy{Partition: ptr.To[int32](0),
					MaxUnavailable: intVal(1), PodUpdatePolicy: v1beta1.RecreateStatefulSetPodUpdatePolicy},
			},
			RevisionHistoryLimit: ptr.To[int32](10),
		},
	}
}

func claimTemplate(name, size string) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}
}

// stsCase is one spec and the errors expected for it.
type stsCase struct {
	name   string
	mutate func(*v1beta1.StatefulSetSpec)
	want   []want
}

func runStatefulSetCases(t *testing.T, cases []stsCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sts := validStatefulSet()
			tc.mutate(&sts.Spec)
			errs := ValidateStatefulSet(sts)
			checkErrors(t, errs, tc.want)
			for _, e := range errs {
				if e.Detail == "" && e.Type != field.ErrorTypeRequired && e.Type != field.ErrorTypeNotSupported && e.Type != field.ErrorTypeDuplicate {
					t.Errorf("%s: no message says what is wrong", e.Field)
				}
			}
		})
	}
}

const (
	pRolling = "spec.updateStrategy.rollingUpdate"
	pClaims  = "spec.volumeClaimTemplates"
)

func rolling(s *v1beta1.StatefulSetSpec) *v1beta1.StatefulSetRollingUpdateStrategy {
	return s.UpdateStrategy.RollingUpdate
}

func parallel(s *v1beta1.StatefulSetSpec) { s.PodManagementPolicy = appsv1.ParallelPodManagement }

func TestValidateStatefulSetIdentityAndCounts(t *testing.T) {
	runStatefulSetCases(t, []stsCase{
		{"valid", func(*v1beta1.StatefulSetSpec) {}, nil},
		{"defaults left empty", func(s *v1beta1.StatefulSetSpec) {
			s.Replicas, s.RevisionHistoryLimit, s.PodManagementPolicy = nil, nil, ""
			s.UpdateStrategy = v1beta1.StatefulSetUpdateStrategy{}
		}, nil},
		{"rollingUpdate with every field unset", func(s *v1beta1.StatefulSetSpec) {
			s.UpdateStrategy.RollingUpdate = &v1beta1.StatefulSetRollingUpdateStrategy{}
		}, nil},
		{"selector missing", func(s *v1beta1.StatefulSetSpec) { s.Selector = nil }, []want{{field.ErrorTypeRequired, "spec.selector"}}},
		{"selector empty", func(s *v1beta1.StatefulSetSpec) { s.Selector = &metav1.LabelSelector{} }, []want{{field.ErrorTypeInvalid, "spec.selector"}}},
		{"selector not matching the template", func(s *v1beta1.StatefulSetSpec) { s.Template.Labels = map[string]string{"app": "web"} },
			[]want{{field.ErrorTypeInvalid, "spec.template.metadata.labels"}}},
		{"replicas -1", func(s *v1beta1.StatefulSetSpec) { s.Replicas = ptr.To[int32](-1) }, []want{{field.ErrorTypeInvalid, "spec.replicas"}}},
		{"replicas 0", func(s *v1beta1.StatefulSetSpec) { s.Replicas = ptr.To[int32](0) }, nil},
		{"revisionHistoryLimit -1", func(s *v1beta1.StatefulSetSpec) { s.RevisionHistoryLimit = ptr.To[int32](-1) },
			[]want{{field.ErrorTypeInvalid, "spec.revisionHistoryLimit"}}},
		{"revisionHistoryLimit 0", func(s *v1beta1.StatefulSetSpec) { s.RevisionHistoryLimit = ptr.To[int32](0) }, nil},
		{"ordinals.start -1", func(s *v1beta1.StatefulSetSpec) { s.Ordinals = &appsv1.StatefulSetOrdinals{Start: -1} },
			[]want{{field.ErrorTypeInvalid, "spec.ordinals.start"}}},
		{"ordinals.start 5", func(s *v1beta1.StatefulSetSpec) { s.Ordinals = &appsv1.StatefulSetOrdinals{Start: 5} }, nil},
		{"serviceName unset", func(s *v1beta1.StatefulSetSpec) { s.ServiceName = "" }, nil},
		{"serviceName not a DNS label", func(s *v1beta1.StatefulSetSpec) { s.ServiceName = "db_headless" },
			[]want{{field.ErrorTypeInvalid, "spec.serviceName"}}},
		{"podManagementPolicy Parallel", parallel, nil},
		{"podManagementPolicy unknown", func(s *v1beta1.StatefulSetSpec) { s.PodManagementPolicy = "Sequential" },
			[]want{{field.ErrorTypeNotSupported, "spec.podManagementPolicy"}}},
		{"lifecycle hooks are not checked (as the CloneSet's)", func(s *v1beta1.StatefulSetSpec) {
			s.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{LabelsHandler: map[string]string{"a/b/c": "not ok"},
				FinalizersHandler: []string{"bad finalizer"}}}
		}, nil},
	})
}

func TestValidateStatefulSetReserveOrdinals(t *testing.T) {
	reserve := func(v ...intstr.IntOrString) func(*v1beta1.StatefulSetSpec) {
		return func(s *v1beta1.StatefulSetSpec) { s.ReserveOrdinals = v }
	}
	i, str := intstr.FromInt32, intstr.FromString
	const p = "spec.reserveOrdinals"
	cases := []stsCase{
		{"ordinals and ranges", reserve(i(0), i(1), str("3-5"), str("7-7"), str("08-09"), str("1-3"), i(math.MaxInt32)), nil},
		{"negative ordinal", reserve(i(2), i(-1)), []want{{field.ErrorTypeInvalid, p + "[1]"}}},
		{"range ending at the largest ordinal", reserve(str("2147383648-2147483647")), nil},
		{"range of 100000 ordinals", reserve(str("0-99999")), nil},
	}
	// OpenKruise accepts digits-dash-digits with first ≤ last only; Kruise also bounds the ordinals.
	for _, bad := range []string{"3", "5-3", "a-b", "-1-3", "1--3", " 1-3", "1-3 ", "1-3-5", "+1-3", "1-", "-", "", "1-2147483648", "0-100000", "١-٣"} {
		cases = append(cases, stsCase{"string " + bad, reserve(str(bad)), []want{{field.ErrorTypeInvalid, p + "[0]"}}})
	}
	runStatefulSetCases(t, cases)
}

func TestValidateStatefulSetUpdateStrategy(t *testing.T) {
	const pType = "spec.updateStrategy.type"
	runStatefulSetCases(t, []stsCase{
		{"type unknown", func(s *v1beta1.StatefulSetSpec) { s.UpdateStrategy.Type = "Recreate" },
			[]want{{field.ErrorTypeNotSupported, pType}}},
		{"OnDelete without rollingUpdate", func(s *v1beta1.StatefulSetSpec) {
			s.UpdateStrategy = v1beta1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
		}, nil},
		{"OnDelete with rollingUpdate", func(s *v1beta1.StatefulSetSpec) { s.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType },
			[]want{{field.ErrorTypeForbidden, pRolling}}},
		{"partition -1", func(s *v1beta1.StatefulSetSpec) { rolling(s).Partition = ptr.To[int32](-1) },
			[]want{{field.ErrorTypeInvalid, pRolling + ".partition"}}},
		{"partition above replicas", func(s *v1beta1.StatefulSetSpec) { rolling(s).Partition = ptr.To[int32](5) }, nil},
		{"minReadySeconds -1", func(s *v1beta1.StatefulSetSpec) { rolling(s).MinReadySeconds = ptr.To[int32](-1) },
			[]want{{field.ErrorTypeInvalid, pRolling + ".minReadySeconds"}}},
		{"minReadySeconds 300", func(s *v1beta1.StatefulSetSpec) { rolling(s).MinReadySeconds = ptr.To[int32](300) }, nil},
		{"minReadySeconds 301", func(s *v1beta1.StatefulSetSpec) { rolling(s).MinReadySeconds = ptr.To[int32](301) },
			[]want{{field.ErrorTypeInvalid, pRolling + ".minReadySeconds"}}},
		{"podUpdatePolicy unknown", func(s *v1beta1.StatefulSetSpec) { rolling(s).PodUpdatePolicy = "Rolling" },
			[]want{{field.ErrorTypeNotSupported, pRolling + ".podUpdatePolicy"}}},
		{"InPlaceIfPossible with the readiness gate", func(s *v1beta1.StatefulSetSpec) {
			rolling(s).PodUpdatePolicy = v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy
		}, nil},
		{"InPlaceOnly with the readiness gate", func(s *v1beta1.StatefulSetSpec) {
			rolling(s).PodUpdatePolicy = v1beta1.InPlaceOnlyStatefulSetPodUpdatePolicy
		}, nil},
		{"InPlaceIfPossible without the readiness gate", func(s *v1beta1.StatefulSetSpec) {
			rolling(s).PodUpdatePolicy = v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy
			s.Template.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "Other"}}
		}, []want{{field.ErrorTypeRequired, "spec.template.spec.readinessGates"}}},
		{"InPlaceOnly without the readiness gate", func(s *v1beta1.StatefulSetSpec) {
			rolling(s).PodUpdatePolicy = v1beta1.InPlaceOnlyStatefulSetPodUpdatePolicy
			s.Template.Spec.ReadinessGates = nil
		}, []want{{field.ErrorTypeRequired, "spec.template.spec.readinessGates"}}},
		{"ReCreate without the readiness gate", func(s *v1beta1.StatefulSetSpec) { s.Template.Spec.ReadinessGates = nil }, nil},
		{"gracePeriodSeconds -1", func(s *v1beta1.StatefulSetSpec) {
			rolling(s).InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: -1}
		}, []want{{field.ErrorTypeInvalid, pRolling + ".inPlaceUpdateStrategy.gracePeriodSeconds"}}},
		{"gracePeriodSeconds 10", func(s *v1beta1.StatefulSetSpec) {
			rolling(s).InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: 10}
		}, nil},
		{"unorderedUpdate with OrderedReady", func(s *v1beta1.StatefulSetSpec) {
			rolling(s).UnorderedUpdate = &v1beta1.StatefulSetUnorderedUpdateStrategy{}
		}, []want{{field.ErrorTypeForbidden, pRolling + ".unorderedUpdate"}}},
		{"unorderedUpdate with Parallel", func(s *v1beta1.StatefulSetSpec) {
			parallel(s)
			rolling(s).UnorderedUpdate = &v1beta1.StatefulSetUnorderedUpdateStrategy{PriorityStrategy: &appspub.UpdatePriorityStrategy{
				OrderPriority: []appspub.UpdatePriorityOrderTerm{{OrderedKey: "rank"}}}}
		}, nil},
		{"unorderedUpdate priorities checked as the CloneSet's", func(s *v1beta1.StatefulSetSpec) {
			parallel(s)
			rolling(s).UnorderedUpdate = &v1beta1.StatefulSetUnorderedUpdateStrategy{PriorityStrategy: &appspub.UpdatePriorityStrategy{
				WeightPriority: []appspub.UpdatePriorityWeightTerm{{Weight: 101, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}},
				OrderPriority:  []appspub.UpdatePriorityOrderTerm{{}}}}
		}, []want{{field.ErrorTypeForbidden, pRolling + ".unorderedUpdate.priorityStrategy"},
			{field.ErrorTypeInvalid, pRolling + ".unorderedUpdate.priorityStrategy.weightPriority[0].weight"},
			{field.ErrorTypeRequired, pRolling + ".unorderedUpdate.priorityStrategy.orderPriority[0].orderedKey"}}},
	})
}

func TestValidateStatefulSetMaxUnavailable(t *testing.T) {
	update := func(v *intstr.IntOrString, edits ...func(*v1beta1.StatefulSetSpec)) func(*v1beta1.StatefulSetSpec) {
		return func(s *v1beta1.StatefulSetSpec) {
			rolling(s).MaxUnavailable = v
			for _, e := range edits {
				e(s)
			}
		}
	}
	scale := func(v *intstr.IntOrString, edits ...func(*v1beta1.StatefulSetSpec)) func(*v1beta1.StatefulSetSpec) {
		return func(s *v1beta1.StatefulSetSpec) {
			s.ScaleStrategy = &v1beta1.StatefulSetScaleStrategy{MaxUnavailable: v}
			for _, e := range edits {
				e(s)
			}
		}
	}
	const pu, ps = pRolling + ".maxUnavailable", "spec.scaleStrategy.maxUnavailable"
	cases := []stsCase{
		{"update: absent (defaulted to 1)", update(nil), nil},
		{"update: 1%", update(strVal("1%")), nil},
		{"update: 100%", update(strVal("100%")), nil},
		// B1: Kruise accepts maxUnavailable > 1 with OrderedReady (OpenKruise refuses anything but 1).
		{"update: 3 with OrderedReady (B1)", update(intVal(3)), nil},
		{"update: 50% with OrderedReady (B1)", update(strVal("50%")), nil},
		{"update: 3 with Parallel", update(intVal(3), parallel), nil},
		{"scale: absent", func(s *v1beta1.StatefulSetSpec) { s.ScaleStrategy = &v1beta1.StatefulSetScaleStrategy{} }, nil},
		{"scale: 2 with Parallel", scale(intVal(2), parallel), nil},
		{"scale: 100% with Parallel", scale(strVal("100%"), parallel), nil},
		{"scale: 1 with OrderedReady", scale(intVal(1)), nil},
		{"scale: 2 with OrderedReady", scale(intVal(2)), []want{{field.ErrorTypeForbidden, ps}}},
		{"scale: 100% with OrderedReady", scale(strVal("100%")), []want{{field.ErrorTypeForbidden, ps}}},
		{"scale: 1% with OrderedReady (not the integer 1)", scale(strVal("1%")), []want{{field.ErrorTypeForbidden, ps}}},
	}
	for _, bad := range []*intstr.IntOrString{intVal(0), intVal(-1), intVal(math.MinInt32), strVal("0%"), strVal("101%"),
		strVal("99999999999999999999%"), strVal("50.5%"), strVal("+5%"), strVal(" 5%"), strVal("5"), strVal("%"), strVal(""), strVal("half")} {
		cases = append(cases,
			stsCase{"update: " + bad.String(), update(bad), []want{{field.ErrorTypeInvalid, pu}}},
			stsCase{"update: " + bad.String() + " with Parallel", update(bad, parallel), []want{{field.ErrorTypeInvalid, pu}}},
			stsCase{"scale: " + bad.String() + " with Parallel", scale(bad, parallel), []want{{field.ErrorTypeInvalid, ps}}})
	}
	runStatefulSetCases(t, cases)
}

func TestValidateStatefulSetTemplate(t *testing.T) {
	runStatefulSetCases(t, []stsCase{
		{"no container", func(s *v1beta1.StatefulSetSpec) { s.Template.Spec.Containers = nil },
			[]want{{field.ErrorTypeRequired, "spec.template.spec.containers"}}},
		{"container without an image", func(s *v1beta1.StatefulSetSpec) { s.Template.Spec.Containers[0].Image = "" },
			[]want{{field.ErrorTypeRequired, "spec.template.spec.containers[0].image"}}},
		{"restartPolicy Always", func(s *v1beta1.StatefulSetSpec) { s.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways }, nil},
		{"restartPolicy Never", func(s *v1beta1.StatefulSetSpec) { s.Template.Spec.RestartPolicy = corev1.RestartPolicyNever },
			[]want{{field.ErrorTypeNotSupported, "spec.template.spec.restartPolicy"}}},
		{"activeDeadlineSeconds", func(s *v1beta1.StatefulSetSpec) { s.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) },
			[]want{{field.ErrorTypeForbidden, "spec.template.spec.activeDeadlineSeconds"}}},
		{"mount of neither a volume nor a claim template", func(s *v1beta1.StatefulSetSpec) { s.VolumeClaimTemplates = nil },
			[]want{{field.ErrorTypeNotFound, "spec.template.spec.containers[0].volumeMounts[0].name"}}},
		{"claim template replaces a template volume of its name (as Kubernetes')", func(s *v1beta1.StatefulSetSpec) {
			s.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}, nil},
		{"claim template names twice", func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimTemplates = append(s.VolumeClaimTemplates, claimTemplate("data", "2Gi"))
		}, []want{{field.ErrorTypeDuplicate, pClaims + "[1].metadata.name"}}},
		{"claim template name not a DNS label", func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimTemplates = append(s.VolumeClaimTemplates, claimTemplate("Logs", "2Gi"))
		}, []want{{field.ErrorTypeInvalid, pClaims + "[1].metadata.name"}}},
	})
}

func TestValidateStatefulSetClaims(t *testing.T) {
	claim := func(edit func(*corev1.PersistentVolumeClaimSpec)) func(*v1beta1.StatefulSetSpec) {
		return func(s *v1beta1.StatefulSetSpec) { edit(&s.VolumeClaimTemplates[0].Spec) }
	}
	const sp = pClaims + "[0].spec"
	runStatefulSetCases(t, []stsCase{
		{"every access mode", claim(func(c *corev1.PersistentVolumeClaimSpec) {
			c.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany}
		}), nil},
		{"ReadWriteOncePod", claim(func(c *corev1.PersistentVolumeClaimSpec) {
			c.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}
		}), nil},
		{"no access mode", claim(func(c *corev1.PersistentVolumeClaimSpec) { c.AccessModes = nil }),
			[]want{{field.ErrorTypeRequired, sp + ".accessModes"}}},
		{"unknown access mode", claim(func(c *corev1.PersistentVolumeClaimSpec) {
			c.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadWriteAll"}
		}), []want{{field.ErrorTypeNotSupported, sp + ".accessModes[0]"}}},
		{"ReadWriteOncePod with another mode", claim(func(c *corev1.PersistentVolumeClaimSpec) {
			c.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadWriteOncePod}
		}), []want{{field.ErrorTypeForbidden, sp + ".accessModes[1]"}}},
		{"no storage request", claim(func(c *corev1.PersistentVolumeClaimSpec) { c.Resources.Requests = nil }),
			[]want{{field.ErrorTypeRequired, sp + ".resources.requests[storage]"}}},
		{"storage request 0", claim(func(c *corev1.PersistentVolumeClaimSpec) {
			c.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("0")
		}), []want{{field.ErrorTypeInvalid, sp + ".resources.requests[storage]"}}},
		{"volumeMode Block", claim(func(c *corev1.PersistentVolumeClaimSpec) { c.VolumeMode = ptr.To(corev1.PersistentVolumeBlock) }), nil},
		{"volumeMode unknown", claim(func(c *corev1.PersistentVolumeClaimSpec) { c.VolumeMode = ptr.To[corev1.PersistentVolumeMode]("Raw") }),
			[]want{{field.ErrorTypeNotSupported, sp + ".volumeMode"}}},
		{"storageClassName empty (no class)", claim(func(c *corev1.PersistentVolumeClaimSpec) { c.StorageClassName = ptr.To("") }), nil},
		{"storageClassName not a DNS subdomain", claim(func(c *corev1.PersistentVolumeClaimSpec) { c.StorageClassName = ptr.To("Fast_SSD") }),
			[]want{{field.ErrorTypeInvalid, sp + ".storageClassName"}}},
		{"selector invalid", claim(func(c *corev1.PersistentVolumeClaimSpec) {
			c.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key": "x"}}
		}), []want{{field.ErrorTypeInvalid, sp + ".selector.matchLabels"}}},
		{"retention Delete and Retain", func(s *v1beta1.StatefulSetSpec) {
			s.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType}
		}, nil},
		{"retention empty (defaulted to Retain)", func(s *v1beta1.StatefulSetSpec) {
			s.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
		}, nil},
		{"retention unknown", func(s *v1beta1.StatefulSetSpec) {
			s.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: "Keep", WhenScaled: "delete"}
		}, []want{{field.ErrorTypeNotSupported, "spec.persistentVolumeClaimRetentionPolicy.whenDeleted"},
			{field.ErrorTypeNotSupported, "spec.persistentVolumeClaimRetentionPolicy.whenScaled"}}},
		{"volumeClaimUpdateStrategy OnPodRollingUpdate", func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimUpdateStrategy.Type = v1beta1.OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy
		}, nil},
		{"volumeClaimUpdateStrategy OnPVCDelete", func(s *v1beta1.StatefulSetSpec) {
			s.VolumeClaimUpdateStrategy.Type = v1beta1.OnPVCDeleteStatefulSetVolumeClaimUpdateStrategy
		}, nil},
		{"volumeClaimUpdateStrategy unknown", func(s *v1beta1.StatefulSetSpec) { s.VolumeClaimUpdateStrategy.Type = "OnDelete" },
			[]want{{field.ErrorTypeNotSupported, "spec.volumeClaimUpdateStrategy.type"}}},
	})
}

// Every problem is reported at once, each at its own path.
func TestValidateStatefulSetReportsEveryProblem(t *testing.T) {
	runStatefulSetCases(t, []stsCase{{"several problems", func(s *v1beta1.StatefulSetSpec) {
		s.Replicas = ptr.To[int32](-1)
		s.ReserveOrdinals = []intstr.IntOrString{intstr.FromString("4-2")}
		rolling(s).MaxUnavailable = intVal(0)
		s.Template.Spec.Containers[0].Image = ""
		s.VolumeClaimTemplates[0].Spec.AccessModes = nil
	}, []want{
		{field.ErrorTypeInvalid, "spec.replicas"},
		{field.ErrorTypeInvalid, "spec.reserveOrdinals[0]"},
		{field.ErrorTypeInvalid, pRolling + ".maxUnavailable"},
		{field.ErrorTypeRequired, "spec.template.spec.containers[0].image"},
		{field.ErrorTypeRequired, pClaims + "[0].spec.accessModes"},
	}}})
}
