package validating

// Parity of the CloneSet webhook with OpenKruise v1.9.0's, rule by rule. Each case is named after
// the OpenKruise function whose rule it mirrors (file:function, the files being, in OpenKruise's
// tree):
//
//	validation.go               pkg/webhook/cloneset/validating/validation.go
//	cloneset_core.go            pkg/controller/cloneset/core/cloneset_core.go
//	update_priority.go          apis/apps/pub/update_priority.go
//	scatter_strategy.go         apis/apps/v1alpha1/scatter_strategy.go
//	tools.go                    pkg/util/tools.go (GetScaledValueFromIntOrPercent, CheckDuplicate)
//	core/validation.go          Kubernetes pkg/apis/core/validation/validation.go (v1.32)
//
// and each expects OpenKruise's answer: nil for accepted, else the field paths of Kruise's errors.
// The objects are as the validating webhook sees them, after defaulting (an absent field is
// validated as its default). TestParityDeliberateDifferences lists where Kruise answers otherwise.

import (
	"context"
	"math"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

// parityCase is one spec and OpenKruise's answer for it.
type parityCase struct {
	name   string // "file:function: what"
	mutate func(*v1alpha1.CloneSet)
	want   []string // paths of the errors; nil: accepted
}

// parityUpdate is one change of a stored CloneSet and OpenKruise's answer for it.
type parityUpdate struct {
	name string
	old  func(*v1alpha1.CloneSet) // the stored object (from defaultedCloneSet); nil: as is
	cur  func(*v1alpha1.CloneSet) // the new object, from the stored one
	want []string
}

// defaultedCloneSet is a valid CloneSet as both defaulting webhooks store it.
func defaultedCloneSet() *v1alpha1.CloneSet {
	cs := validCloneSet()
	cs.UID = "uid-web"
	us := &cs.Spec.UpdateStrategy
	us.Partition, us.MaxSurge = ptr.To(intstr.FromInt32(0)), ptr.To(intstr.FromInt32(0))
	cs.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	return cs
}

func errorPaths(errs field.ErrorList) []string {
	if len(errs) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var paths []string
	for _, e := range errs {
		if !seen[e.Field] {
			seen[e.Field] = true
			paths = append(paths, e.Field)
		}
	}
	sort.Strings(paths)
	return paths
}

func checkPaths(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	want = append([]string(nil), want...)
	sort.Strings(want)
	if got := errorPaths(errs); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("error paths %q, want %q (OpenKruise's answer); errors: %v", got, want, errs.ToAggregate())
	}
	for _, e := range errs {
		if e.Field == "" || !strings.HasPrefix(e.Error(), e.Field+":") {
			t.Errorf("error %q does not start with its field path", e.Error())
		}
	}
}

func runCreates(t *testing.T, cases []parityCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cs := defaultedCloneSet()
			c.mutate(cs)
			checkPaths(t, ValidateCloneSet(cs), c.want)
		})
	}
}

func runUpdates(t *testing.T, cases []parityUpdate) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := defaultedCloneSet()
			if c.old != nil {
				c.old(old)
			}
			cur := old.DeepCopy()
			c.cur(cur)
			checkPaths(t, ValidateCloneSetUpdate(cur, old), c.want)
		})
	}
}

func strVal(s string) *intstr.IntOrString { return &intstr.IntOrString{Type: intstr.String, StrVal: s} }
func intVal(i int32) *intstr.IntOrString  { return ptr.To(intstr.FromInt32(i)) }

const (
	pSelector       = "spec.selector"
	pTemplateLabels = "spec.template.metadata.labels"
	pReplicas       = "spec.replicas"
	pDeadline       = "spec.progressDeadlineSeconds"
	pType           = "spec.updateStrategy.type"
	pPartition      = "spec.updateStrategy.partition"
	pMaxUnavailable = "spec.updateStrategy.maxUnavailable"
	pMaxSurge       = "spec.updateStrategy.maxSurge"
	pPodsToDelete   = "spec.scaleStrategy.podsToDelete"
)

func TestParitySelector(t *testing.T) {
	const rule = "validation.go:validateCloneSetSpec: selector "
	sel := func(s *metav1.LabelSelector) func(*v1alpha1.CloneSet) {
		return func(cs *v1alpha1.CloneSet) { cs.Spec.Selector = s }
	}
	expr := func(key string, op metav1.LabelSelectorOperator, values ...string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}
	}
	runCreates(t, []parityCase{
		{rule + "absent", sel(nil), []string{pSelector}},
		{rule + "empty", sel(&metav1.LabelSelector{}), []string{pSelector}},
		{rule + "empty matchLabels map", sel(&metav1.LabelSelector{MatchLabels: map[string]string{}}), []string{pSelector}},
		{rule + "matchLabels key not a label key", sel(&metav1.LabelSelector{MatchLabels: map[string]string{"bad key": "web"}}), []string{pSelector + ".matchLabels"}},
		{rule + "matchLabels value not a label value", sel(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "w e b"}}), []string{pSelector + ".matchLabels"}},
		{rule + "unknown operator", sel(expr("app", "Near", "web")), []string{pSelector + ".matchExpressions[0].operator"}},
		{rule + "In without values", sel(expr("app", metav1.LabelSelectorOpIn)), []string{pSelector + ".matchExpressions[0].values"}},
		{rule + "Exists with values", sel(expr("app", metav1.LabelSelectorOpExists, "web")), []string{pSelector + ".matchExpressions[0].values"}},
		{rule + "Exists matching the template", sel(expr("tier", metav1.LabelSelectorOpExists)), nil},
		{rule + "NotIn matching the template", sel(expr("tier", metav1.LabelSelectorOpNotIn, "back")), nil},
		{rule + "DoesNotExist matching the template", sel(expr("canary", metav1.LabelSelectorOpDoesNotExist)), nil},
		{rule + "not matching the template labels", sel(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}), []string{pTemplateLabels}},
		{rule + "template without labels", func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Labels = nil }, []string{pTemplateLabels}},
	})
}

func TestParityCounts(t *testing.T) {
	const spec = "validation.go:validateCloneSetSpec: "
	runCreates(t, []parityCase{
		{spec + "replicas -1", func(cs *v1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](-1) }, []string{pReplicas}},
		{spec + "replicas MinInt32", func(cs *v1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](math.MinInt32) }, []string{pReplicas}},
		{spec + "replicas 0", func(cs *v1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](0) }, nil},
		{spec + "replicas MaxInt32", func(cs *v1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](math.MaxInt32) }, nil},
		{spec + "replicas absent (defaulted to 1)", func(cs *v1alpha1.CloneSet) { cs.Spec.Replicas = nil }, nil},

		// Not checked by OpenKruise; Kruise's controller reads a negative history limit as 0.
		{spec + "revisionHistoryLimit -1 (not checked)", func(cs *v1alpha1.CloneSet) { cs.Spec.RevisionHistoryLimit = ptr.To[int32](-1) }, nil},
		{spec + "revisionHistoryLimit MinInt32 (not checked)", func(cs *v1alpha1.CloneSet) { cs.Spec.RevisionHistoryLimit = ptr.To[int32](math.MinInt32) }, nil},
		{spec + "revisionHistoryLimit 0", func(cs *v1alpha1.CloneSet) { cs.Spec.RevisionHistoryLimit = ptr.To[int32](0) }, nil},
		{spec + "revisionHistoryLimit MaxInt32", func(cs *v1alpha1.CloneSet) { cs.Spec.RevisionHistoryLimit = ptr.To[int32](math.MaxInt32) }, nil},

		// Not checked by OpenKruise (only against progressDeadlineSeconds).
		{spec + "minReadySeconds -1 (not checked)", func(cs *v1alpha1.CloneSet) { cs.Spec.MinReadySeconds = -1 }, nil},
		{spec + "minReadySeconds MinInt32 (not checked)", func(cs *v1alpha1.CloneSet) { cs.Spec.MinReadySeconds = math.MinInt32 }, nil},
		{spec + "minReadySeconds MaxInt32", func(cs *v1alpha1.CloneSet) { cs.Spec.MinReadySeconds = math.MaxInt32 }, nil},
	})
}

func TestParityProgressDeadline(t *testing.T) {
	const rule = "validation.go:validateCloneSetSpec: progressDeadlineSeconds "
	pd := func(deadline, minReady int32) func(*v1alpha1.CloneSet) {
		return func(cs *v1alpha1.CloneSet) {
			cs.Spec.ProgressDeadlineSeconds, cs.Spec.MinReadySeconds = ptr.To(deadline), minReady
		}
	}
	runCreates(t, []parityCase{
		{rule + "absent", func(cs *v1alpha1.CloneSet) { cs.Spec.ProgressDeadlineSeconds = nil }, nil},
		{rule + "0 with minReadySeconds 0", pd(0, 0), []string{pDeadline}},
		{rule + "1 with minReadySeconds 0", pd(1, 0), nil},
		{rule + "600 with minReadySeconds 600", pd(600, 600), []string{pDeadline}},
		{rule + "599 with minReadySeconds 600", pd(599, 600), []string{pDeadline}},
		{rule + "601 with minReadySeconds 600", pd(601, 600), nil},
		{rule + "MaxInt32 with minReadySeconds MaxInt32 (no deadline)", pd(math.MaxInt32, math.MaxInt32), nil},
		{rule + "MaxInt32-1 with minReadySeconds MaxInt32", pd(math.MaxInt32-1, math.MaxInt32), []string{pDeadline}},
		{rule + "0 with minReadySeconds -1", pd(0, -1), nil},
		{rule + "-1 with minReadySeconds -5 (negative)", pd(-1, -5), []string{pDeadline}},
		{rule + "MinInt32", pd(math.MinInt32, 0), []string{pDeadline}},
	})
}

func TestParityUpdateStrategyType(t *testing.T) {
	const rule = "validation.go:validateUpdateStrategy: type "
	typ := func(v v1alpha1.CloneSetUpdateStrategyType) func(*v1alpha1.CloneSet) {
		return func(cs *v1alpha1.CloneSet) { cs.Spec.UpdateStrategy.Type = v }
	}
	runCreates(t, []parityCase{
		{rule + "ReCreate", typ(v1alpha1.RecreateCloneSetUpdateStrategyType), nil},
		{rule + "InPlaceIfPossible", typ(v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType), nil},
		{rule + "InPlaceOnly", typ(v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType), nil},
		{rule + "absent (defaulted to ReCreate)", typ(""), nil},
		{rule + "OnDelete", typ("OnDelete"), []string{pType}},
		{rule + "RollingUpdate", typ("RollingUpdate"), []string{pType}},
		{rule + "recreate (case matters)", typ("recreate"), []string{pType}},
	})
}

func TestParityPartition(t *testing.T) {
	const rule = "validation.go:validateUpdateStrategy+tools.go:GetScaledValueFromIntOrPercent: partition "
	part := func(replicas int32, v *intstr.IntOrString) func(*v1alpha1.CloneSet) {
		return func(cs *v1alpha1.CloneSet) { cs.Spec.Replicas, cs.Spec.UpdateStrategy.Partition = ptr.To(replicas), v }
	}
	runCreates(t, []parityCase{
		{rule + "absent (defaulted to 0)", part(3, nil), nil},
		{rule + "int 0", part(3, intVal(0)), nil},
		{rule + "int equal to replicas", part(3, intVal(3)), nil},
		{rule + "int above replicas", part(3, intVal(4)), nil},
		{rule + "int MaxInt32", part(3, intVal(math.MaxInt32)), nil},
		{rule + "int -1", part(3, intVal(-1)), []string{pPartition}},
		{rule + "int MinInt32", part(3, intVal(math.MinInt32)), []string{pPartition}},
		{rule + "0%", part(3, strVal("0%")), nil},
		{rule + "50%", part(3, strVal("50%")), nil},
		{rule + "100%", part(3, strVal("100%")), nil},
		{rule + "101% (no upper bound)", part(3, strVal("101%")), nil},
		{rule + "1000%", part(3, strVal("1000%")), nil},
		{rule + "+5% (sign allowed)", part(3, strVal("+5%")), nil},
		{rule + "050% (leading zero)", part(3, strVal("050%")), nil},
		{rule + "-1% of 3 rounds up to 0", part(3, strVal("-1%")), nil},
		{rule + "-33% of 3 rounds up to 0", part(3, strVal("-33%")), nil},
		{rule + "-34% of 3 rounds up to -1", part(3, strVal("-34%")), []string{pPartition}},
		{rule + "-1% of 100 is -1", part(100, strVal("-1%")), []string{pPartition}},
		{rule + "-1% of 0 replicas is 0", part(0, strVal("-1%")), nil},
		{rule + "50% of MaxInt32 replicas", part(math.MaxInt32, strVal("50%")), nil},
		{rule + "string 3 without %", part(3, strVal("3")), []string{pPartition}},
		{rule + "empty string", part(3, strVal("")), []string{pPartition}},
		{rule + "% alone", part(3, strVal("%")), []string{pPartition}},
		{rule + "word%", part(3, strVal("half%")), []string{pPartition}},
		{rule + "space before the number", part(3, strVal(" 5%")), []string{pPartition}},
		{rule + "5%%", part(3, strVal("5%%")), []string{pPartition}},
	})
}

func TestParityMaxUnavailableMaxSurge(t *testing.T) {
	const rule = "validation.go:validateUpdateStrategy: "
	both := func(replicas int32, mu, ms *intstr.IntOrString) func(*v1alpha1.CloneSet) {
		return func(cs *v1alpha1.CloneSet) {
			cs.Spec.Replicas = ptr.To(replicas)
			cs.Spec.UpdateStrategy.MaxUnavailable, cs.Spec.UpdateStrategy.MaxSurge = mu, ms
		}
	}
	runCreates(t, []parityCase{
		{rule + "maxUnavailable and maxSurge absent (20% and 0)", both(3, nil, nil), nil},
		{rule + "maxUnavailable absent, 20% of 1 rounds up to 1", both(1, nil, intVal(0)), nil},
		{rule + "maxUnavailable 1", both(3, intVal(1), intVal(0)), nil},
		{rule + "maxUnavailable 0 and maxSurge 0", both(3, intVal(0), intVal(0)), []string{pMaxUnavailable}},
		{rule + "maxUnavailable 0% and maxSurge 0%", both(3, strVal("0%"), strVal("0%")), []string{pMaxUnavailable}},
		{rule + "maxUnavailable 1% of 3 rounds up to 1", both(3, strVal("1%"), intVal(0)), nil},
		{rule + "maxUnavailable 1% of MaxInt32", both(math.MaxInt32, strVal("1%"), intVal(0)), nil},
		{rule + "maxUnavailable 100%", both(3, strVal("100%"), intVal(0)), nil},
		{rule + "maxUnavailable 120% (no upper bound)", both(3, strVal("120%"), intVal(0)), nil},
		{rule + "maxUnavailable MaxInt32", both(3, intVal(math.MaxInt32), intVal(0)), nil},
		{rule + "maxUnavailable -1 and maxSurge 0", both(3, intVal(-1), intVal(0)), []string{pMaxUnavailable}},
		{rule + "maxUnavailable -1% and maxSurge 0", both(3, strVal("-1%"), intVal(0)), []string{pMaxUnavailable}},
		{rule + "maxUnavailable -1 and maxSurge 1 (negative accepted)", both(3, intVal(-1), intVal(1)), nil},
		{rule + "maxUnavailable MinInt32 and maxSurge 1", both(3, intVal(math.MinInt32), intVal(1)), nil},
		{rule + "maxUnavailable 0 and maxSurge 1", both(3, intVal(0), intVal(1)), nil},
		{rule + "maxUnavailable 0 and maxSurge 1% of 3", both(3, intVal(0), strVal("1%")), nil},
		{rule + "maxUnavailable 0 and maxSurge 100%", both(3, intVal(0), strVal("100%")), nil},
		{rule + "maxUnavailable 0 and maxSurge 200%", both(3, intVal(0), strVal("200%")), nil},
		{rule + "maxUnavailable 1 and maxSurge -5 (negative accepted)", both(3, intVal(1), intVal(-5)), nil},
		{rule + "maxUnavailable 1 and maxSurge MinInt32", both(3, intVal(1), intVal(math.MinInt32)), nil},
		{rule + "both -1", both(3, intVal(-1), intVal(-1)), []string{pMaxUnavailable}},
		{rule + "both 0 with 0 replicas", both(0, intVal(0), intVal(0)), nil},
		{rule + "both 0% with 0 replicas", both(0, strVal("0%"), strVal("0%")), nil},
		{rule + "maxUnavailable string 3 without %", both(3, strVal("3"), intVal(0)), []string{pMaxUnavailable}},
		{rule + "maxUnavailable empty string", both(3, strVal(""), intVal(1)), []string{pMaxUnavailable}},
		{rule + "maxSurge string 5 without %", both(3, intVal(2), strVal("5")), []string{pMaxSurge}},
		{rule + "maxSurge word", both(3, intVal(2), strVal("some")), []string{pMaxSurge}},
	})
}

func TestParityInPlaceOnlyMaxSurge(t *testing.T) {
	const rule = "validation.go:validateUpdateStrategy: maxSurge with "
	surge := func(typ v1alpha1.CloneSetUpdateStrategyType, replicas int32, ms *intstr.IntOrString, paused bool) func(*v1alpha1.CloneSet) {
		return func(cs *v1alpha1.CloneSet) {
			cs.Spec.Replicas = ptr.To(replicas)
			us := &cs.Spec.UpdateStrategy
			us.Type, us.MaxSurge, us.Paused = typ, ms, paused
			us.MaxUnavailable = intVal(1)
		}
	}
	only, possible, recreate := v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType, v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType,
		v1alpha1.RecreateCloneSetUpdateStrategyType
	runCreates(t, []parityCase{
		{rule + "InPlaceOnly: 0", surge(only, 3, intVal(0), false), nil},
		{rule + "InPlaceOnly: 0%", surge(only, 3, strVal("0%"), false), nil},
		{rule + "InPlaceOnly: absent", surge(only, 3, nil, false), nil},
		{rule + "InPlaceOnly: 1", surge(only, 3, intVal(1), false), []string{pMaxSurge}},
		{rule + "InPlaceOnly: 1% of 3 rounds up to 1", surge(only, 3, strVal("1%"), false), []string{pMaxSurge}},
		{rule + "InPlaceOnly: 10% of 0 replicas is 0", surge(only, 0, strVal("10%"), false), nil},
		{rule + "InPlaceOnly: -1", surge(only, 3, intVal(-1), false), nil},
		{rule + "InPlaceOnly: 1 while paused", surge(only, 3, intVal(1), true), []string{pMaxSurge}},
		{rule + "InPlaceIfPossible: 1", surge(possible, 3, intVal(1), false), nil},
		{rule + "ReCreate: 100%", surge(recreate, 3, strVal("100%"), false), nil},
		{rule + "ReCreate: paused with maxUnavailable 0 and maxSurge 0", func(cs *v1alpha1.CloneSet) {
			surge(recreate, 3, intVal(0), true)(cs)
			cs.Spec.UpdateStrategy.MaxUnavailable = intVal(0)
		}, []string{pMaxUnavailable}},
	})
}

func TestParityPriorityStrategy(t *testing.T) {
	const rule = "update_priority.go:FieldsValidation: "
	const p = "spec.updateStrategy.priorityStrategy"
	labelsSel := metav1.LabelSelector{MatchLabels: map[string]string{"tier": "front"}}
	weight := func(terms ...appspub.UpdatePriorityWeightTerm) func(*v1alpha1.CloneSet) {
		return func(cs *v1alpha1.CloneSet) {
			cs.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{WeightPriority: terms}
		}
	}
	order := func(keys ...string) func(*v1alpha1.CloneSet) {
		return func(cs *v1alpha1.CloneSet) {
			s := &appspub.UpdatePriorityStrategy{}
			for _, k := range keys {
				s.OrderPriority = append(s.OrderPriority, appspub.UpdatePriorityOrderTerm{OrderedKey: k})
			}
			cs.Spec.UpdateStrategy.PriorityStrategy = s
		}
	}
	runCreates(t, []parityCase{
		{rule + "absent", func(cs *v1alpha1.CloneSet) { cs.Spec.UpdateStrategy.PriorityStrategy = nil }, nil},
		{rule + "empty", func(cs *v1alpha1.CloneSet) {
			cs.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{}
		}, nil},
		{rule + "weight 0", weight(appspub.UpdatePriorityWeightTerm{Weight: 0, MatchSelector: labelsSel}), nil},
		{rule + "weight 100", weight(appspub.UpdatePriorityWeightTerm{Weight: 100, MatchSelector: labelsSel}), nil},
		{rule + "weight 101", weight(appspub.UpdatePriorityWeightTerm{Weight: 101, MatchSelector: labelsSel}), []string{p + ".weightPriority[0].weight"}},
		{rule + "weight -1", weight(appspub.UpdatePriorityWeightTerm{Weight: -1, MatchSelector: labelsSel}), []string{p + ".weightPriority[0].weight"}},
		{rule + "weight MaxInt32", weight(appspub.UpdatePriorityWeightTerm{Weight: math.MaxInt32, MatchSelector: labelsSel}), []string{p + ".weightPriority[0].weight"}},
		{rule + "empty selector", weight(appspub.UpdatePriorityWeightTerm{Weight: 5}), []string{p + ".weightPriority[0].matchSelector"}},
		{rule + "empty matchLabels map", weight(appspub.UpdatePriorityWeightTerm{Weight: 5,
			MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{}}}), []string{p + ".weightPriority[0].matchSelector"}},
		{rule + "selector key not a label key", weight(appspub.UpdatePriorityWeightTerm{Weight: 5,
			MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a/b/c": "x"}}}), []string{p + ".weightPriority[0].matchSelector.matchLabels"}},
		{rule + "selector with an unknown operator", weight(appspub.UpdatePriorityWeightTerm{Weight: 5,
			MatchSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Gt", Values: []string{"1"}}}}}),
			[]string{p + ".weightPriority[0].matchSelector.matchExpressions[0].operator"}},
		{rule + "selector expression Exists", weight(appspub.UpdatePriorityWeightTerm{Weight: 5,
			MatchSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: metav1.LabelSelectorOpExists}}}}), nil},
		{rule + "orderedKey set", order("example.io/priority"), nil},
		{rule + "orderedKey empty", order("example.io/priority", ""), []string{p + ".orderPriority[1].orderedKey"}},
		{rule + "weightPriority and orderPriority", func(cs *v1alpha1.CloneSet) {
			cs.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{
				WeightPriority: []appspub.UpdatePriorityWeightTerm{{Weight: 1, MatchSelector: labelsSel}},
				OrderPriority:  []appspub.UpdatePriorityOrderTerm{{OrderedKey: "k"}}}
		}, []string{p}},
	})
}

func TestParityScatterStrategy(t *testing.T) {
	const rule = "scatter_strategy.go:FieldsValidation: "
	const p = "spec.updateStrategy.scatterStrategy"
	scatter := func(terms ...v1alpha1.UpdateScatterTerm) func(*v1alpha1.CloneSet) {
		return func(cs *v1alpha1.CloneSet) { cs.Spec.UpdateStrategy.ScatterStrategy = terms }
	}
	runCreates(t, []parityCase{
		{rule + "one term", scatter(v1alpha1.UpdateScatterTerm{Key: "zone", Value: "a"}), nil},
		{rule + "empty value", scatter(v1alpha1.UpdateScatterTerm{Key: "zone"}), nil},
		{rule + "same key, two values", scatter(v1alpha1.UpdateScatterTerm{Key: "zone", Value: "a"}, v1alpha1.UpdateScatterTerm{Key: "zone", Value: "b"}), nil},
		{rule + "empty key", scatter(v1alpha1.UpdateScatterTerm{Value: "a"}), []string{p + "[0].key"}},
		{rule + "term twice", scatter(v1alpha1.UpdateScatterTerm{Key: "zone", Value: "a"}, v1alpha1.UpdateScatterTerm{Key: "zone", Value: "a"}), []string{p + "[1]"}},
		{rule + "terms equal as key:value", scatter(v1alpha1.UpdateScatterTerm{Key: "a:b", Value: "c"}, v1alpha1.UpdateScatterTerm{Key: "a", Value: "b:c"}), []string{p + "[1]"}},
	})
}

func TestParityUnvalidatedFields(t *testing.T) {
	const rule = "validation.go:validateCloneSetSpec: not checked: "
	hook := &appspub.LifecycleHook{LabelsHandler: map[string]string{"a/b/c": "not a value"}, FinalizersHandler: []string{"not a finalizer", ""},
		MarkPodNotReady: true}
	runCreates(t, []parityCase{
		{rule + "inPlaceUpdateStrategy.gracePeriodSeconds -1", func(cs *v1alpha1.CloneSet) {
			cs.Spec.UpdateStrategy.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: -1}
		}, nil},
		{rule + "inPlaceUpdateStrategy.gracePeriodSeconds MinInt32", func(cs *v1alpha1.CloneSet) {
			cs.Spec.UpdateStrategy.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: math.MinInt32}
		}, nil},
		{rule + "inPlaceUpdateStrategy.gracePeriodSeconds MaxInt32", func(cs *v1alpha1.CloneSet) {
			cs.Spec.UpdateStrategy.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: math.MaxInt32}
		}, nil},
		{rule + "lifecycle hooks with names no pod can carry", func(cs *v1alpha1.CloneSet) {
			cs.Spec.Lifecycle = &appspub.Lifecycle{PreDelete: hook, InPlaceUpdate: hook, PreNormal: hook}
		}, nil},
		{rule + "scaleStrategy.maxUnavailable word", func(cs *v1alpha1.CloneSet) { cs.Spec.ScaleStrategy.MaxUnavailable = strVal("abc") }, nil},
		{rule + "scaleStrategy.maxUnavailable string without %", func(cs *v1alpha1.CloneSet) { cs.Spec.ScaleStrategy.MaxUnavailable = strVal("3") }, nil},
		{rule + "scaleStrategy.maxUnavailable -1", func(cs *v1alpha1.CloneSet) { cs.Spec.ScaleStrategy.MaxUnavailable = intVal(-1) }, nil},
		{rule + "scaleStrategy.maxUnavailable 200%", func(cs *v1alpha1.CloneSet) { cs.Spec.ScaleStrategy.MaxUnavailable = strVal("200%") }, nil},
		{rule + "scaleStrategy.maxUnavailable 50.5%", func(cs *v1alpha1.CloneSet) { cs.Spec.ScaleStrategy.MaxUnavailable = strVal("50.5%") }, nil},
		{rule + "scaleStrategy.maxUnavailable 0", func(cs *v1alpha1.CloneSet) { cs.Spec.ScaleStrategy.MaxUnavailable = intVal(0) }, nil},
		{rule + "scaleStrategy.disablePVCReuse", func(cs *v1alpha1.CloneSet) { cs.Spec.ScaleStrategy.DisablePVCReuse = true }, nil},
		{rule + "updateStrategy.paused", func(cs *v1alpha1.CloneSet) { cs.Spec.UpdateStrategy.Paused = true }, nil},
		{rule + "image pre-download annotations out of range", func(cs *v1alpha1.CloneSet) {
			cs.Annotations = map[string]string{v1alpha1.ImagePreDownloadParallelismKey: "-3", v1alpha1.ImagePreDownloadTimeoutSecondsKey: "0",
				v1alpha1.ImagePreDownloadMinUpdatedReadyPods: "many"}
		}, nil},
	})
}

func TestParityPodsToDeleteOnCreate(t *testing.T) {
	const rule = "validation.go:validateScaleStrategy+tools.go:CheckDuplicate: podsToDelete on create "
	pods := func(names ...string) func(*v1alpha1.CloneSet) {
		return func(cs *v1alpha1.CloneSet) { cs.Spec.ScaleStrategy.PodsToDelete = names }
	}
	runCreates(t, []parityCase{
		{rule + "empty", pods(), nil},
		{rule + "a name (no pod is a new CloneSet's)", pods("web-abcde"), []string{pPodsToDelete + "[0]"}},
		{rule + "not a pod name", pods("Web_1"), []string{pPodsToDelete + "[0]"}},
		{rule + "empty name", pods(""), []string{pPodsToDelete + "[0]"}},
		{rule + "duplicate", pods("web-abcde", "web-x", "web-abcde"), []string{pPodsToDelete + "[2]"}},
	})
}

func TestParityPodsToDeleteOnUpdate(t *testing.T) {
	const rule = "validation.go:validateScaleStrategy: podsToDelete on update "
	owned := func(name string, uid types.UID) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web", UID: uid, Controller: ptr.To(true)}}}}
	}
	terminating := owned("web-going", "uid-web")
	terminating.DeletionTimestamp, terminating.Finalizers = ptr.To(metav1.Now()), []string{"example.io/hold"}
	notController := owned("web-ref", "uid-web")
	notController.OwnerReferences[0].Controller = nil
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(owned("web-a", "uid-web"), owned("web-b", "uid-web"),
		owned("other-a", "uid-other"), terminating, notController).Build()

	cases := []struct {
		name        string
		before, now []string
		want        []string
	}{
		{rule + "unchanged list naming a pod now gone (not checked again)", []string{"web-gone"}, []string{"web-gone"}, nil},
		{rule + "added pod of this CloneSet", []string{"web-gone"}, []string{"web-gone", "web-a"}, nil},
		{rule + "added pods of this CloneSet", nil, []string{"web-a", "web-b"}, nil},
		{rule + "added pod that does not exist", nil, []string{"web-a", "web-zzz"}, []string{pPodsToDelete + "[1]"}},
		{rule + "added pod of another CloneSet", nil, []string{"other-a"}, []string{pPodsToDelete + "[0]"}},
		{rule + "added pod without a controller", nil, []string{"web-ref"}, []string{pPodsToDelete + "[0]"}},
		{rule + "added terminating pod", nil, []string{"web-going"}, []string{pPodsToDelete + "[0]"}},
		{rule + "added name that is no pod name", nil, []string{"Web_A"}, []string{pPodsToDelete + "[0]"}},
		{rule + "duplicate", []string{"web-a"}, []string{"web-a", "web-a"}, []string{pPodsToDelete + "[1]"}},
		{rule + "entries removed", []string{"web-a", "web-b"}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := defaultedCloneSet()
			old.Spec.ScaleStrategy.PodsToDelete = tc.before
			cur := old.DeepCopy()
			cur.Spec.ScaleStrategy.PodsToDelete = tc.now
			errs := ValidateCloneSetUpdate(cur, old)
			errs = append(errs, ValidatePodsToDelete(context.Background(), c, cur, old)...)
			checkPaths(t, errs, tc.want)
		})
	}
}

func TestParityTemplate(t *testing.T) {
	const spec = "validation.go:validateCloneSetSpec: template "
	const pod = "core/validation.go:ValidatePodTemplateSpec: "
	runCreates(t, []parityCase{
		{spec + "restartPolicy Always", func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways }, nil},
		{spec + "restartPolicy unset", func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Spec.RestartPolicy = "" }, nil},
		{spec + "restartPolicy OnFailure", func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
			[]string{"spec.template.spec.restartPolicy"}},
		{spec + "restartPolicy Never", func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever },
			[]string{"spec.template.spec.restartPolicy"}},
		{spec + "activeDeadlineSeconds 1", func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](1) },
			[]string{"spec.template.spec.activeDeadlineSeconds"}},
		{spec + "activeDeadlineSeconds MaxInt64", func(cs *v1alpha1.CloneSet) {
			cs.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](math.MaxInt64)
		}, []string{"spec.template.spec.activeDeadlineSeconds"}},
		{pod + "no container", func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers = nil }, []string{"spec.template.spec.containers"}},
		{pod + "container without an image", func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = "" },
			[]string{"spec.template.spec.containers[0].image"}},
		{pod + "container image with spaces (a template may have it)", func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = " nginx " }, nil},
		{pod + "container name not a DNS label", func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Name = "Main" },
			[]string{"spec.template.spec.containers[0].name"}},
		{pod + "template label value invalid", func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Labels["tier"] = "front end" }, []string{pTemplateLabels}},
	})
}

func TestParityVolumeClaimTemplates(t *testing.T) {
	const rule = "validation.go:validateCloneSetSpec+core/validation.go:ValidateVolumes: volumeClaimTemplates "
	claim := func(name, size string) corev1.PersistentVolumeClaim {
		return corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}
	}
	claims := func(names ...string) func(*v1alpha1.CloneSet) {
		return func(cs *v1alpha1.CloneSet) {
			for _, n := range names {
				cs.Spec.VolumeClaimTemplates = append(cs.Spec.VolumeClaimTemplates, claim(n, "1Gi"))
			}
		}
	}
	mount := func(cs *v1alpha1.CloneSet, name string) {
		cs.Spec.Template.Spec.Containers[0].VolumeMounts = append(cs.Spec.Template.Spec.Containers[0].VolumeMounts,
			corev1.VolumeMount{Name: name, MountPath: "/" + name})
	}
	const vct = "spec.volumeClaimTemplates"
	runCreates(t, []parityCase{
		{rule + "one, mounted", func(cs *v1alpha1.CloneSet) { claims("data")(cs); mount(cs, "data") }, nil},
		{rule + "one, not mounted", claims("data"), nil},
		{rule + "two", claims("data", "logs"), nil},
		{rule + "mounted by an init container and used as a block device", func(cs *v1alpha1.CloneSet) {
			claims("data", "raw")(cs)
			cs.Spec.Template.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox",
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}}
			cs.Spec.Template.Spec.Containers[0].VolumeDevices = []corev1.VolumeDevice{{Name: "raw", DevicePath: "/dev/raw"}}
		}, nil},
		{rule + "name empty", claims(""), []string{vct + "[0].metadata.name"}},
		{rule + "name not a DNS label", claims("Data"), []string{vct + "[0].metadata.name"}},
		{rule + "name of 63 characters", claims(strings.Repeat("d", 63)), nil},
		{rule + "name of 64 characters", claims(strings.Repeat("d", 64)), []string{vct + "[0].metadata.name"}},
		{rule + "name twice", claims("data", "data"), []string{vct + "[1].metadata.name"}},
		{rule + "name of a template volume", func(cs *v1alpha1.CloneSet) {
			claims("data")(cs)
			cs.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}, []string{vct + "[0].metadata.name"}},
		{rule + "mount of neither a volume nor a claim template", func(cs *v1alpha1.CloneSet) { claims("data")(cs); mount(cs, "logs") },
			[]string{"spec.template.spec.containers[0].volumeMounts[0].name"}},
		{rule + "device of neither a volume nor a claim template", func(cs *v1alpha1.CloneSet) {
			cs.Spec.Template.Spec.Containers[0].VolumeDevices = []corev1.VolumeDevice{{Name: "raw", DevicePath: "/dev/raw"}}
		}, []string{"spec.template.spec.containers[0].volumeDevices[0].name"}},
	})
	runUpdates(t, []parityUpdate{
		{rule + "update: storage request changed", func(cs *v1alpha1.CloneSet) { claims("data")(cs); mount(cs, "data") },
			func(cs *v1alpha1.CloneSet) { cs.Spec.VolumeClaimTemplates[0] = claim("data", "20Gi") }, nil},
		{rule + "update: claim template added", nil, claims("data"), nil},
		{rule + "update: mounted claim template removed", func(cs *v1alpha1.CloneSet) { claims("data")(cs); mount(cs, "data") },
			func(cs *v1alpha1.CloneSet) { cs.Spec.VolumeClaimTemplates = nil },
			[]string{"spec.template.spec.containers[0].volumeMounts[0].name"}},
		{rule + "update: claim template renamed to an invalid name", claims("data"),
			func(cs *v1alpha1.CloneSet) { cs.Spec.VolumeClaimTemplates[0].Name = "data_1" }, []string{vct + "[0].metadata.name"}},
	})
}

func TestParityUpdateImmutability(t *testing.T) {
	const rule = "validation.go:validateCloneSetUpdate: "
	runUpdates(t, []parityUpdate{
		{rule + "selector changed", nil, func(cs *v1alpha1.CloneSet) {
			cs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "front"}}
		}, []string{pSelector}},
		{rule + "selector extended", nil, func(cs *v1alpha1.CloneSet) { cs.Spec.Selector.MatchLabels["tier"] = "front" }, []string{pSelector}},
		{rule + "selector: empty and absent values are the same", func(cs *v1alpha1.CloneSet) {
			cs.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "canary", Operator: metav1.LabelSelectorOpDoesNotExist}}
		}, func(cs *v1alpha1.CloneSet) {
			cs.Spec.Selector.MatchExpressions[0].Values = []string{}
			cs.Spec.Replicas = ptr.To[int32](4)
		}, nil},
		{rule + "every other field changed", nil, func(cs *v1alpha1.CloneSet) {
			s := &cs.Spec
			s.Replicas, s.MinReadySeconds, s.RevisionHistoryLimit = ptr.To[int32](7), 5, ptr.To[int32](3)
			s.ProgressDeadlineSeconds = ptr.To[int32](600)
			s.Template.Spec.Containers[0].Image = "nginx:2"
			s.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "b"}}
			s.ScaleStrategy = v1alpha1.CloneSetScaleStrategy{DisablePVCReuse: true, MaxUnavailable: intVal(1)}
			s.UpdateStrategy = v1alpha1.CloneSetUpdateStrategy{Type: v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType,
				Partition: strVal("50%"), MaxUnavailable: intVal(2), MaxSurge: intVal(1), Paused: true}
			s.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"example.io/x"}}}
			s.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
		}, nil},
		{rule + "the new object is validated", nil, func(cs *v1alpha1.CloneSet) { cs.Spec.UpdateStrategy.Partition = intVal(-1) },
			[]string{pPartition}},
	})
}

func TestParityInPlaceOnlyTemplateUpdate(t *testing.T) {
	const rule = "cloneset_core.go:ValidateCloneSetUpdate: InPlaceOnly "
	only := func(cs *v1alpha1.CloneSet) {
		cs.Spec.UpdateStrategy.Type = v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
	}
	twoContainers := func(cs *v1alpha1.CloneSet) {
		only(cs)
		cs.Spec.Template.Spec.Containers = append(cs.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "envoy:1"})
	}
	withMemory := func(q string) func(*v1alpha1.CloneSet) {
		return func(cs *v1alpha1.CloneSet) {
			cs.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}
		}
	}
	const tmpl = "spec.template"
	runUpdates(t, []parityUpdate{
		{rule + "image changed", only, func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = "nginx:2" }, nil},
		{rule + "both images changed", twoContainers, func(cs *v1alpha1.CloneSet) {
			cs.Spec.Template.Spec.Containers[0].Image, cs.Spec.Template.Spec.Containers[1].Image = "nginx:2", "envoy:2"
		}, nil},
		{rule + "image digest", only, func(cs *v1alpha1.CloneSet) {
			cs.Spec.Template.Spec.Containers[0].Image = "nginx@sha256:" + strings.Repeat("a", 64)
		}, nil},
		{rule + "image, labels and annotations changed", only, func(cs *v1alpha1.CloneSet) {
			cs.Spec.Template.Spec.Containers[0].Image = "nginx:2"
			cs.Spec.Template.Labels["version"] = "2"
			cs.Spec.Template.Annotations = map[string]string{"note": "v2", inplace.RestartedAtAnnotation: "now"}
		}, nil},
		{rule + "env added", only, func(cs *v1alpha1.CloneSet) {
			cs.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
		}, []string{tmpl}},
		{rule + "resources changed", only, withMemory("1Gi"), []string{tmpl}},
		{rule + "resources spelt otherwise", func(cs *v1alpha1.CloneSet) { only(cs); withMemory("1Gi")(cs) }, withMemory("1073741824"), []string{tmpl}},
		{rule + "container added", only, func(cs *v1alpha1.CloneSet) {
			cs.Spec.Template.Spec.Containers = append(cs.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "envoy:1"})
		}, []string{tmpl}},
		{rule + "container removed", twoContainers, func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers = cs.Spec.Template.Spec.Containers[:1] },
			[]string{tmpl}},
		{rule + "containers reordered", twoContainers, func(cs *v1alpha1.CloneSet) {
			c := cs.Spec.Template.Spec.Containers
			c[0], c[1] = c[1], c[0]
		}, []string{tmpl}},
		{rule + "init container image changed", func(cs *v1alpha1.CloneSet) {
			only(cs)
			cs.Spec.Template.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox:1"}}
		}, func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Spec.InitContainers[0].Image = "busybox:2" }, []string{tmpl}},
		{rule + "nodeSelector added", only, func(cs *v1alpha1.CloneSet) { cs.Spec.Template.Spec.NodeSelector = map[string]string{"zone": "a"} },
			[]string{tmpl}},
		{rule + "switched to from ReCreate with an image change", nil, func(cs *v1alpha1.CloneSet) {
			only(cs)
			cs.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		}, nil},
		{rule + "switched to from ReCreate with an env change", nil, func(cs *v1alpha1.CloneSet) {
			only(cs)
			cs.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
		}, []string{tmpl}},
		{rule + "switched from, to ReCreate, with an env change", only, func(cs *v1alpha1.CloneSet) {
			cs.Spec.UpdateStrategy.Type = v1alpha1.RecreateCloneSetUpdateStrategyType
			cs.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
		}, nil},
		{rule + "InPlaceIfPossible: env change", func(cs *v1alpha1.CloneSet) {
			cs.Spec.UpdateStrategy.Type = v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
		}, func(cs *v1alpha1.CloneSet) {
			cs.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
		}, nil},
		{rule + "metadata only", only, func(cs *v1alpha1.CloneSet) { cs.Labels = map[string]string{"team": "a"} }, nil},
	})
}

// TestParityDeliberateDifferences pins where Kruise answers otherwise than OpenKruise v1.9.0, and why.
func TestParityDeliberateDifferences(t *testing.T) {
	// A percentage must be a whole number. OpenKruise's webhook parses it as a float
	// (tools.go:GetScaledValueFromIntOrPercent) and accepts these; Kruise's controller, like
	// Kubernetes' intstr, reads only whole numbers and would replace the value by the default,
	// e.g. partition 0: every pod updated at once.
	const rule = "validation.go:validateUpdateStrategy (OpenKruise accepts): "
	var cases []parityCase
	for _, v := range []string{"50.5%", "0.5%", ".5%", "5.%", "1e1%", "1_0%", "0x1p3%", "99999999999999999999%"} {
		cases = append(cases,
			parityCase{rule + "partition " + v, func(cs *v1alpha1.CloneSet) { cs.Spec.UpdateStrategy.Partition = strVal(v) }, []string{pPartition}},
			parityCase{rule + "maxUnavailable " + v, func(cs *v1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.MaxUnavailable, cs.Spec.UpdateStrategy.MaxSurge = strVal(v), intVal(1)
			}, []string{pMaxUnavailable}},
			parityCase{rule + "maxSurge " + v, func(cs *v1alpha1.CloneSet) { cs.Spec.UpdateStrategy.MaxSurge = strVal(v) }, []string{pMaxSurge}})
	}
	runCreates(t, cases)

	// A metadata-only update is accepted even when the stored spec would now be refused (OpenKruise
	// validates the whole object on every update and refuses it), so that such an object can still
	// lose its finalizers.
	runUpdates(t, []parityUpdate{
		{"validation.go:validateCloneSetUpdate (OpenKruise refuses): metadata-only update of a spec now refused",
			func(cs *v1alpha1.CloneSet) { cs.Spec.UpdateStrategy.MaxUnavailable = intVal(0) },
			func(cs *v1alpha1.CloneSet) { cs.Finalizers = nil; cs.Labels = map[string]string{"team": "a"} }, nil},
	})
}
