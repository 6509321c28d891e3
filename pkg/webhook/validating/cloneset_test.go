package validating

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// validCloneSet is a defaulted CloneSet every rule accepts.
func validCloneSet() *v1alpha1.CloneSet {
	return &v1alpha1.CloneSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: v1alpha1.CloneSetSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1"}}},
			},
			RevisionHistoryLimit: ptr.To[int32](10),
			UpdateStrategy: v1alpha1.CloneSetUpdateStrategy{
				Type:           v1alpha1.RecreateCloneSetUpdateStrategyType,
				MaxUnavailable: ptr.To(intstr.FromString("20%")),
			},
		},
	}
}

// want is one expected error: its type and its field path.
type want struct {
	typ  field.ErrorType
	path string
}

func (w want) String() string { return fmt.Sprintf("%s %s", w.path, w.typ) }

func checkErrors(t *testing.T, errs field.ErrorList, expect []want) {
	t.Helper()
	got := make([]string, len(errs))
	for i, e := range errs {
		got[i] = want{e.Type, e.Field}.String()
	}
	exp := make([]string, len(expect))
	for i, w := range expect {
		exp[i] = w.String()
	}
	if strings.Join(got, "\n") != strings.Join(exp, "\n") {
		t.Errorf("errors:\n got  %q\n want %q\n full: %v", got, exp, errs.ToAggregate())
	}
}

func intOrStr(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }

func TestValidateCloneSet(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*v1alpha1.CloneSetSpec)
		want   []want
	}{
		{"valid", func(*v1alpha1.CloneSetSpec) {}, nil},
		{"defaults left empty", func(s *v1alpha1.CloneSetSpec) {
			s.Replicas, s.RevisionHistoryLimit, s.UpdateStrategy = nil, nil, v1alpha1.CloneSetUpdateStrategy{}
		}, nil},

		// selector
		{"selector missing", func(s *v1alpha1.CloneSetSpec) { s.Selector = nil },
			[]want{{field.ErrorTypeRequired, "spec.selector"}}},
		{"selector empty", func(s *v1alpha1.CloneSetSpec) { s.Selector = &metav1.LabelSelector{} },
			[]want{{field.ErrorTypeInvalid, "spec.selector"}}},
		{"selector with an invalid label key", func(s *v1alpha1.CloneSetSpec) {
			s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key": "web"}}
		}, []want{{field.ErrorTypeInvalid, "spec.selector.matchLabels"}}},
		{"selector with an unknown operator", func(s *v1alpha1.CloneSetSpec) {
			s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near", Values: []string{"web"}}}}
		}, []want{{field.ErrorTypeInvalid, "spec.selector.matchExpressions[0].operator"}}},
		{"selector not matching the template labels", func(s *v1alpha1.CloneSetSpec) {
			s.Template.Labels = map[string]string{"app": "other"}
		}, []want{{field.ErrorTypeInvalid, "spec.template.metadata.labels"}}},
		{"selector expression matching the template labels", func(s *v1alpha1.CloneSetSpec) {
			s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front", "back"}}}}
		}, nil},

		// counts
		{"negative replicas", func(s *v1alpha1.CloneSetSpec) { s.Replicas = ptr.To[int32](-1) },
			[]want{{field.ErrorTypeInvalid, "spec.replicas"}}},
		{"zero replicas", func(s *v1alpha1.CloneSetSpec) { s.Replicas = ptr.To[int32](0) }, nil},
		// OpenKruise checks neither; Kruise's controller reads a negative limit as 0 and a negative
		// minReadySeconds as 0.
		{"negative revisionHistoryLimit", func(s *v1alpha1.CloneSetSpec) { s.RevisionHistoryLimit = ptr.To[int32](-1) }, nil},
		{"negative minReadySeconds", func(s *v1alpha1.CloneSetSpec) { s.MinReadySeconds = -5 }, nil},
		{"progressDeadlineSeconds not above minReadySeconds", func(s *v1alpha1.CloneSetSpec) {
			s.MinReadySeconds, s.ProgressDeadlineSeconds = 30, ptr.To[int32](30)
		}, []want{{field.ErrorTypeInvalid, "spec.progressDeadlineSeconds"}}},
		{"progressDeadlineSeconds above minReadySeconds", func(s *v1alpha1.CloneSetSpec) {
			s.MinReadySeconds, s.ProgressDeadlineSeconds = 30, ptr.To[int32](600)
		}, nil},

		// update strategy
		{"unknown update type", func(s *v1alpha1.CloneSetSpec) { s.UpdateStrategy.Type = "Rolling" },
			[]want{{field.ErrorTypeNotSupported, "spec.updateStrategy.type"}}},
		{"in-place types", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.Type = v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
		}, nil},
		{"negative partition", func(s *v1alpha1.CloneSetSpec) { s.UpdateStrategy.Partition = intOrStr("-1") },
			[]want{{field.ErrorTypeInvalid, "spec.updateStrategy.partition"}}},
		{"partition 100%", func(s *v1alpha1.CloneSetSpec) { s.UpdateStrategy.Partition = intOrStr("100%") }, nil},
		{"partition above 100% keeps every pod", func(s *v1alpha1.CloneSetSpec) { s.UpdateStrategy.Partition = intOrStr("101%") }, nil},
		{"maxUnavailable 120%", func(s *v1alpha1.CloneSetSpec) { s.UpdateStrategy.MaxUnavailable = intOrStr("120%") }, nil},
		{"partition a fractional percentage", func(s *v1alpha1.CloneSetSpec) { s.UpdateStrategy.Partition = intOrStr("50.5%") },
			[]want{{field.ErrorTypeInvalid, "spec.updateStrategy.partition"}}},
		{"maxUnavailable a word", func(s *v1alpha1.CloneSetSpec) { s.UpdateStrategy.MaxUnavailable = intOrStr("half") },
			[]want{{field.ErrorTypeInvalid, "spec.updateStrategy.maxUnavailable"}}},
		{"maxUnavailable a negative percentage", func(s *v1alpha1.CloneSetSpec) { s.UpdateStrategy.MaxUnavailable = intOrStr("-5%") },
			[]want{{field.ErrorTypeInvalid, "spec.updateStrategy.maxUnavailable"}}},
		{"maxUnavailable a number in a string", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.MaxUnavailable = &intstr.IntOrString{Type: intstr.String, StrVal: "3"}
		}, []want{{field.ErrorTypeInvalid, "spec.updateStrategy.maxUnavailable"}}},
		{"both priority kinds", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{
				OrderPriority:  []appspub.UpdatePriorityOrderTerm{{OrderedKey: "k"}},
				WeightPriority: []appspub.UpdatePriorityWeightTerm{{Weight: 1, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}}}
		}, []want{{field.ErrorTypeForbidden, "spec.updateStrategy.priorityStrategy"}}},
		{"priority weights and selectors", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{
				{Weight: 0, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
				{Weight: 101, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
				{Weight: 5},
				{Weight: 5, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"bad key": "b"}}}}}
		}, []want{{field.ErrorTypeInvalid, "spec.updateStrategy.priorityStrategy.weightPriority[1].weight"},
			{field.ErrorTypeRequired, "spec.updateStrategy.priorityStrategy.weightPriority[2].matchSelector"},
			{field.ErrorTypeInvalid, "spec.updateStrategy.priorityStrategy.weightPriority[3].matchSelector.matchLabels"}}},
		{"empty ordered key", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{OrderPriority: []appspub.UpdatePriorityOrderTerm{{OrderedKey: "k"}, {}}}
		}, []want{{field.ErrorTypeRequired, "spec.updateStrategy.priorityStrategy.orderPriority[1].orderedKey"}}},
		{"scatter terms", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.ScatterStrategy = v1alpha1.UpdateScatterStrategy{{Key: "zone", Value: "a"}, {Key: "zone", Value: "b"},
				{Key: "", Value: "x"}, {Key: "zone", Value: "a"}}
		}, []want{{field.ErrorTypeRequired, "spec.updateStrategy.scatterStrategy[2].key"},
			{field.ErrorTypeDuplicate, "spec.updateStrategy.scatterStrategy[3]"}}},
		{"negative grace period means none", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: -1}
		}, nil},
		{"grace period", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: 10}
		}, nil},
		{"negative maxSurge with maxUnavailable 1", func(s *v1alpha1.CloneSetSpec) { s.UpdateStrategy.MaxSurge = intOrStr("-2") }, nil},
		{"maxSurge and maxUnavailable both 0", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.MaxSurge, s.UpdateStrategy.MaxUnavailable = intOrStr("0"), intOrStr("0%")
		}, []want{{field.ErrorTypeInvalid, "spec.updateStrategy.maxUnavailable"}}},
		{"maxSurge 1 and maxUnavailable 0", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.MaxSurge, s.UpdateStrategy.MaxUnavailable = intOrStr("1"), intOrStr("0")
		}, nil},
		{"InPlaceOnly with maxSurge", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.Type, s.UpdateStrategy.MaxSurge = v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType, intOrStr("1")
		}, []want{{field.ErrorTypeForbidden, "spec.updateStrategy.maxSurge"}}},
		{"InPlaceOnly with a maxSurge percentage", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.Type, s.UpdateStrategy.MaxSurge = v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType, intOrStr("10%")
		}, []want{{field.ErrorTypeForbidden, "spec.updateStrategy.maxSurge"}}},
		{"InPlaceOnly with maxSurge 0", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.Type, s.UpdateStrategy.MaxSurge = v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType, intOrStr("0%")
		}, nil},
		{"InPlaceIfPossible with maxSurge", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.Type, s.UpdateStrategy.MaxSurge = v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, intOrStr("2")
		}, nil},

		// scale strategy
		// OpenKruise does not check scaleStrategy.maxUnavailable: both controllers read a value they
		// cannot use as 0.
		{"scale maxUnavailable above 100%", func(s *v1alpha1.CloneSetSpec) { s.ScaleStrategy.MaxUnavailable = intOrStr("200%") }, nil},
		{"scale maxUnavailable negative", func(s *v1alpha1.CloneSetSpec) { s.ScaleStrategy.MaxUnavailable = intOrStr("-1") }, nil},
		{"podsToDelete in a new CloneSet", func(s *v1alpha1.CloneSetSpec) {
			s.ScaleStrategy.PodsToDelete = []string{"web-abcde", "Web_1"}
		}, []want{{field.ErrorTypeInvalid, "spec.scaleStrategy.podsToDelete[0]"},
			{field.ErrorTypeInvalid, "spec.scaleStrategy.podsToDelete[1]"}}},
		{"podsToDelete duplicated", func(s *v1alpha1.CloneSetSpec) {
			s.ScaleStrategy.PodsToDelete = []string{"web-abcde", "web-abcde"}
		}, []want{{field.ErrorTypeDuplicate, "spec.scaleStrategy.podsToDelete[1]"}}},

		// template basics
		{"no container", func(s *v1alpha1.CloneSetSpec) { s.Template.Spec.Containers = nil },
			[]want{{field.ErrorTypeRequired, "spec.template.spec.containers"}}},
		{"duplicate container names", func(s *v1alpha1.CloneSetSpec) {
			s.Template.Spec.Containers = append(s.Template.Spec.Containers, corev1.Container{Name: "main", Image: "busybox"})
		}, []want{{field.ErrorTypeDuplicate, "spec.template.spec.containers[1].name"}}},
		{"container without a name", func(s *v1alpha1.CloneSetSpec) { s.Template.Spec.Containers[0].Name = "" },
			[]want{{field.ErrorTypeRequired, "spec.template.spec.containers[0].name"}}},
		{"container name not a DNS label", func(s *v1alpha1.CloneSetSpec) { s.Template.Spec.Containers[0].Name = "Main" },
			[]want{{field.ErrorTypeInvalid, "spec.template.spec.containers[0].name"}}},
		{"container without an image", func(s *v1alpha1.CloneSetSpec) { s.Template.Spec.Containers[0].Image = "" },
			[]want{{field.ErrorTypeRequired, "spec.template.spec.containers[0].image"}}},
		{"container image blank: a template may have it (pods may not)", func(s *v1alpha1.CloneSetSpec) { s.Template.Spec.Containers[0].Image = " " }, nil},
		{"invalid template label value", func(s *v1alpha1.CloneSetSpec) { s.Template.Labels["tier"] = "front end" },
			[]want{{field.ErrorTypeInvalid, "spec.template.metadata.labels"}}},
		{"restartPolicy Always is fine", func(s *v1alpha1.CloneSetSpec) { s.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways }, nil},
		{"restartPolicy OnFailure", func(s *v1alpha1.CloneSetSpec) { s.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
			[]want{{field.ErrorTypeNotSupported, "spec.template.spec.restartPolicy"}}},
		{"activeDeadlineSeconds", func(s *v1alpha1.CloneSetSpec) { s.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) },
			[]want{{field.ErrorTypeForbidden, "spec.template.spec.activeDeadlineSeconds"}}},

		// lifecycle: OpenKruise does not check the hooks (a label or finalizer no pod can carry never
		// matches: the hook holds nothing, or never releases, in both)
		{"valid hooks", func(s *v1alpha1.CloneSetSpec) {
			h := &appspub.LifecycleHook{LabelsHandler: map[string]string{"example.io/block": "true"}, FinalizersHandler: []string{"example.io/unready-blocker"}}
			s.Lifecycle = &appspub.Lifecycle{PreDelete: h, InPlaceUpdate: h, PreNormal: h}
		}, nil},
		{"hook label key and finalizer not valid names", func(s *v1alpha1.CloneSetSpec) {
			s.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{LabelsHandler: map[string]string{"a/b/c": "not ok"},
				FinalizersHandler: []string{"bad finalizer"}}}
		}, nil},

		// volumeClaimTemplates
		{"claim template mounted", func(s *v1alpha1.CloneSetSpec) {
			s.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
			s.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		}, nil},
		{"claim template named like a template volume", func(s *v1alpha1.CloneSetSpec) {
			s.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
			s.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}, []want{{field.ErrorTypeDuplicate, "spec.volumeClaimTemplates[0].metadata.name"}}},
		{"mount of no volume", func(s *v1alpha1.CloneSetSpec) {
			s.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		}, []want{{field.ErrorTypeNotFound, "spec.template.spec.containers[0].volumeMounts[0].name"}}},

		// several problems are all reported
		{"several problems", func(s *v1alpha1.CloneSetSpec) {
			s.Replicas = ptr.To[int32](-1)
			s.UpdateStrategy.MaxUnavailable = intOrStr("half")
			s.Template.Spec.Containers[0].Image = ""
		}, []want{
			{field.ErrorTypeInvalid, "spec.replicas"},
			{field.ErrorTypeInvalid, "spec.updateStrategy.maxUnavailable"},
			{field.ErrorTypeRequired, "spec.template.spec.containers[0].image"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := validCloneSet()
			tc.mutate(&cs.Spec)
			checkErrors(t, ValidateCloneSet(cs), tc.want)
		})
	}
}

func TestValidateCloneSetUpdate(t *testing.T) {
	cases := []struct {
		name   string
		old    func(*v1alpha1.CloneSetSpec)
		mutate func(*v1alpha1.CloneSetSpec)
		want   []want
	}{
		{"scale and new image", nil, func(s *v1alpha1.CloneSetSpec) {
			s.Replicas = ptr.To[int32](10)
			s.Template.Spec.Containers[0].Image = "nginx:2"
		}, nil},
		{"selector changed", nil, func(s *v1alpha1.CloneSetSpec) {
			s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "front"}}
		}, []want{{field.ErrorTypeInvalid, "spec.selector"}}},
		{"new object invalid", nil, func(s *v1alpha1.CloneSetSpec) { s.Replicas = ptr.To[int32](-1) },
			[]want{{field.ErrorTypeInvalid, "spec.replicas"}}},
		{"volumeClaimTemplates changed", nil, func(s *v1alpha1.CloneSetSpec) {
			s.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
		}, nil},
		{"InPlaceOnly: image and labels change in place", inPlaceOnly, func(s *v1alpha1.CloneSetSpec) {
			s.Template.Spec.Containers[0].Image = "nginx:2"
			s.Template.Labels["version"] = "2"
			s.Template.Annotations = map[string]string{"note": "v2"}
		}, nil},
		{"InPlaceOnly: env change cannot be made in place", inPlaceOnly, func(s *v1alpha1.CloneSetSpec) {
			s.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
		}, []want{{field.ErrorTypeForbidden, "spec.template"}}},
		{"InPlaceOnly: resources cannot change, even where the controller could resize in place", inPlaceOnly, func(s *v1alpha1.CloneSetSpec) {
			s.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}, []want{{field.ErrorTypeForbidden, "spec.template"}}},
		{"InPlaceOnly: added container cannot be made in place", inPlaceOnly, func(s *v1alpha1.CloneSetSpec) {
			s.Template.Spec.Containers = append(s.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "envoy"})
		}, []want{{field.ErrorTypeForbidden, "spec.template"}}},
		{"switching to ReCreate with the same change is allowed", inPlaceOnly, func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.Type = v1alpha1.RecreateCloneSetUpdateStrategyType
			s.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
		}, nil},
		{"switching to InPlaceOnly with a recreate-only change", nil, func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.Type = v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
			s.Template.Spec.NodeSelector = map[string]string{"zone": "a"}
		}, []want{{field.ErrorTypeForbidden, "spec.template"}}},
		{"InPlaceIfPossible: any template change", func(s *v1alpha1.CloneSetSpec) {
			s.UpdateStrategy.Type = v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
		}, func(s *v1alpha1.CloneSetSpec) {
			s.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := validCloneSet()
			if tc.old != nil {
				tc.old(&old.Spec)
			}
			cs := old.DeepCopy()
			tc.mutate(&cs.Spec)
			checkErrors(t, ValidateCloneSetUpdate(cs, old), tc.want)
		})
	}
}

func inPlaceOnly(s *v1alpha1.CloneSetSpec) {
	s.UpdateStrategy.Type = v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
}

// The forbidden in-place change names what rules it out, so the user knows what to revert.
func TestValidateCloneSetUpdateInPlaceOnlyGivesReasons(t *testing.T) {
	old := validCloneSet()
	inPlaceOnly(&old.Spec)
	cs := old.DeepCopy()
	cs.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
	errs := ValidateCloneSetUpdate(cs, old)
	if len(errs) != 1 || !strings.Contains(errs[0].Detail, "spec.template.spec.containers[0].env") {
		t.Fatalf("want one error naming spec.template.spec.containers[0].env, got %v", errs)
	}
}

// A metadata-only update is accepted even when the stored spec would now be rejected (it was stored
// before this validation existed), so such objects can still be relabelled and finalized.
func TestValidateCloneSetUpdateAcceptsMetadataOnlyChanges(t *testing.T) {
	old := validCloneSet()
	old.Spec.UpdateStrategy.MaxUnavailable = intOrStr("half")
	cs := old.DeepCopy()
	cs.Labels = map[string]string{"team": "a"}
	cs.Finalizers = nil
	checkErrors(t, ValidateCloneSetUpdate(cs, old), nil)
	cs.Spec.Replicas = ptr.To[int32](4)
	checkErrors(t, ValidateCloneSetUpdate(cs, old), []want{{field.ErrorTypeInvalid, "spec.updateStrategy.maxUnavailable"}})
}

// The pre-download annotations are not validated on a CloneSet (OpenKruise does not validate them on
// a v1alpha1 CloneSet; Kruise's controller falls back to its defaults for a value it cannot use).
func TestValidateCloneSetIgnoresPreDownloadAnnotations(t *testing.T) {
	cs := validCloneSet()
	cs.Annotations = map[string]string{v1alpha1.ImagePreDownloadMinUpdatedReadyPods: "150%",
		v1alpha1.ImagePreDownloadParallelismKey: "0", v1alpha1.ImagePreDownloadTimeoutSecondsKey: "ten"}
	checkErrors(t, ValidateCloneSet(cs), nil)
}
