package subset

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func req(key string, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
}

func required(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
	}}
}

func TestApplyToTemplate(t *testing.T) {
	zoneA := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{req("zone", "a")}}
	tol := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists}
	cases := []struct {
		name   string
		tpl    corev1.PodSpec
		subset appsv1alpha1.UnitedDeploymentSubset
		want   corev1.PodSpec
	}{{
		name:   "no affinity: one term is created (takeover fixture shape)",
		subset: appsv1alpha1.UnitedDeploymentSubset{Name: "a", NodeSelectorTerm: zoneA},
		want:   corev1.PodSpec{Affinity: required(zoneA)},
	}, {
		name: "expressions ANDed into every existing term",
		tpl: corev1.PodSpec{Affinity: required(
			corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{req("disk", "ssd")}},
			corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{req("metadata.name", "n1")}},
		)},
		subset: appsv1alpha1.UnitedDeploymentSubset{NodeSelectorTerm: zoneA},
		want: corev1.PodSpec{Affinity: required(
			corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{req("disk", "ssd"), req("zone", "a")}},
			corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{req("zone", "a")},
				MatchFields: []corev1.NodeSelectorRequirement{req("metadata.name", "n1")}},
		)},
	}, {
		name:   "matchFields of the subset are ignored, as OpenKruise does",
		subset: appsv1alpha1.UnitedDeploymentSubset{NodeSelectorTerm: corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{req("metadata.name", "n1")}}},
		want:   corev1.PodSpec{},
	}, {
		name:   "tolerations appended",
		tpl:    corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "x", Operator: corev1.TolerationOpExists}}},
		subset: appsv1alpha1.UnitedDeploymentSubset{Tolerations: []corev1.Toleration{tol}},
		want:   corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "x", Operator: corev1.TolerationOpExists}, tol}},
	}, {
		name: "patch merges containers by name and wins over subset fields",
		tpl:  corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "v1"}, {Name: "side", Image: "s1"}}},
		subset: appsv1alpha1.UnitedDeploymentSubset{
			Tolerations: []corev1.Toleration{tol},
			Patch:       runtime.RawExtension{Raw: []byte(`{"spec":{"containers":[{"name":"app","image":"v2"}],"tolerations":null}}`)},
		},
		want: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "v2"}, {Name: "side", Image: "s1"}}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tpl := &corev1.PodTemplateSpec{Spec: tc.tpl}
			before := tpl.DeepCopy()
			got, err := ApplyToTemplate(tpl, &tc.subset)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(tc.want, got.Spec) {
				t.Errorf("spec (-want +got):\n%s", diff.Diff(tc.want, got.Spec))
			}
			if !equality.Semantic.DeepEqual(before, tpl) {
				t.Errorf("input modified:\n%s", diff.Diff(before, tpl))
			}
		})
	}
}

func TestApplyToTemplatePatchLabels(t *testing.T) {
	tpl := &corev1.PodTemplateSpec{}
	tpl.Labels = map[string]string{"app": "ud"}
	got, err := ApplyToTemplate(tpl, &appsv1alpha1.UnitedDeploymentSubset{
		Patch: runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"zone":"a"}}}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(map[string]string{"app": "ud", "zone": "a"}, got.Labels) {
		t.Errorf("labels (-want +got):\n%s", diff.Diff(map[string]string{"app": "ud", "zone": "a"}, got.Labels))
	}
	if _, err := ApplyToTemplate(tpl, &appsv1alpha1.UnitedDeploymentSubset{Patch: runtime.RawExtension{Raw: []byte(`{`)}}); err == nil {
		t.Error("invalid patch accepted")
	}
}

func TestApplyToPod(t *testing.T) {
	zone := &corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{req("zone", "a")},
		MatchFields:      []corev1.NodeSelectorRequirement{req("metadata.name", "n1")},
	}
	pref := corev1.PreferredSchedulingTerm{Weight: 10, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{req("ssd", "true")}}}
	cases := []struct {
		name   string
		pod    corev1.PodSpec
		subset appsv1alpha1.WorkloadSpreadSubset
		want   corev1.PodSpec
	}{{
		name:   "empty subset still gives an empty node affinity",
		subset: appsv1alpha1.WorkloadSpreadSubset{Name: "a"},
		want:   corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}},
	}, {
		name:   "required term becomes the only term",
		subset: appsv1alpha1.WorkloadSpreadSubset{RequiredNodeSelectorTerm: zone},
		want:   corev1.PodSpec{Affinity: required(*zone)},
	}, {
		name: "required term ANDed (expressions and fields) into each term; preferred appended",
		pod: corev1.PodSpec{Affinity: required(
			corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{req("disk", "ssd")}},
			corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{req("disk", "hdd")}},
		)},
		subset: appsv1alpha1.WorkloadSpreadSubset{RequiredNodeSelectorTerm: zone, PreferredNodeSelectorTerms: []corev1.PreferredSchedulingTerm{pref}},
		want: func() corev1.PodSpec {
			a := required(
				corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{req("disk", "ssd"), req("zone", "a")}, MatchFields: zone.MatchFields},
				corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{req("disk", "hdd"), req("zone", "a")}, MatchFields: zone.MatchFields},
			)
			a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.PreferredSchedulingTerm{pref}
			return corev1.PodSpec{Affinity: a}
		}(),
	}, {
		name: "patch changing priorityClassName clears priority",
		pod:  corev1.PodSpec{PriorityClassName: "low", Priority: ptr.To[int32](1)},
		subset: appsv1alpha1.WorkloadSpreadSubset{
			Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}},
			Patch:       runtime.RawExtension{Raw: []byte(`{"spec":{"priorityClassName":"high"}}`)},
		},
		want: corev1.PodSpec{PriorityClassName: "high", Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: tc.pod}
			before := pod.DeepCopy()
			got, err := ApplyToPod(pod, &tc.subset)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(tc.want, got.Spec) {
				t.Errorf("spec (-want +got):\n%s", diff.Diff(tc.want, got.Spec))
			}
			if !equality.Semantic.DeepEqual(before, pod) {
				t.Errorf("input modified:\n%s", diff.Diff(before, pod))
			}
		})
	}
}
