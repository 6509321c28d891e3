package validating

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/webhook/internal/webhookfuzz"
)

// validBudget is a budget every rule accepts: the pods labelled app=web, one of them unavailable
// at a time.
func validBudget(name string) *policyv1alpha1.PodUnavailableBudget {
	return &policyv1alpha1.PodUnavailableBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
		},
	}
}

// targetBudget is a valid budget of the pods of CloneSet name, at least half of them available.
func targetBudget(name, apiVersion, kind, workload string) *policyv1alpha1.PodUnavailableBudget {
	pub := validBudget(name)
	pub.Spec.Selector, pub.Spec.MaxUnavailable = nil, nil
	pub.Spec.TargetReference = &policyv1alpha1.PodUnavailableBudgetTargetReference{APIVersion: apiVersion, Kind: kind, Name: workload}
	pub.Spec.MinAvailable = ptr.To(intstr.FromString("50%"))
	return pub
}

func TestValidatePodUnavailableBudget(t *testing.T) {
	ops := field.NewPath("metadata", "annotations").Key(policyv1alpha1.PubProtectOperationAnnotation).String()
	total := field.NewPath("metadata", "annotations").Key(policyv1alpha1.PubProtectTotalReplicasAnnotation).String()
	annotate := func(key, value string) func(*policyv1alpha1.PodUnavailableBudget) {
		return func(p *policyv1alpha1.PodUnavailableBudget) { p.Annotations = map[string]string{key: value} }
	}
	maxUnavailable := func(v intstr.IntOrString) func(*policyv1alpha1.PodUnavailableBudget) {
		return func(p *policyv1alpha1.PodUnavailableBudget) { p.Spec.MaxUnavailable = &v }
	}
	minAvailable := func(v intstr.IntOrString) func(*policyv1alpha1.PodUnavailableBudget) {
		return func(p *policyv1alpha1.PodUnavailableBudget) { p.Spec.MaxUnavailable, p.Spec.MinAvailable = nil, &v }
	}
	target := func(apiVersion, kind, name string) func(*policyv1alpha1.PodUnavailableBudget) {
		return func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Spec.Selector = nil
			p.Spec.TargetReference = &policyv1alpha1.PodUnavailableBudgetTargetReference{APIVersion: apiVersion, Kind: kind, Name: name}
		}
	}
	cases := []struct {
		name   string
		mutate func(*policyv1alpha1.PodUnavailableBudget)
		want   []want
	}{
		{"selector and maxUnavailable", func(*policyv1alpha1.PodUnavailableBudget) {}, nil},
		{"targetRef and minAvailable", target("apps/v1", "Deployment", "web"), nil},
		{"targetRef of a group only (OpenKruise's own samples)", target("apps", "Deployment", "web"), nil},
		{"selector of expressions", func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpExists}}}
		}, nil},

		// Exactly one of selector and targetRef.
		{"neither selector nor targetRef", func(p *policyv1alpha1.PodUnavailableBudget) { p.Spec.Selector = nil },
			[]want{{field.ErrorTypeRequired, "spec.selector"}}},
		{"both selector and targetRef", func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Spec.TargetReference = &policyv1alpha1.PodUnavailableBudgetTargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
		}, []want{{field.ErrorTypeForbidden, "spec.targetRef"}}},
		{"empty selector", func(p *policyv1alpha1.PodUnavailableBudget) { p.Spec.Selector = &metav1.LabelSelector{} },
			[]want{{field.ErrorTypeInvalid, "spec.selector"}}},
		{"selector with an unknown operator", func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
		}, []want{{field.ErrorTypeInvalid, "spec.selector.matchExpressions[0].operator"}}},
		{"selector In without values", func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn}}}
		}, []want{{field.ErrorTypeRequired, "spec.selector.matchExpressions[0].values"}}},
		{"selector label value invalid", func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "-web-"}}
		}, []want{{field.ErrorTypeInvalid, "spec.selector.matchLabels"}}},
		{"empty targetRef", target("", "", ""), []want{{field.ErrorTypeRequired, "spec.targetRef.apiVersion"},
			{field.ErrorTypeRequired, "spec.targetRef.kind"}, {field.ErrorTypeRequired, "spec.targetRef.name"}}},
		{"targetRef apiVersion not a group/version", target("apps/v1/x", "Deployment", "web"),
			[]want{{field.ErrorTypeInvalid, "spec.targetRef.apiVersion"}}},
		{"targetRef without a name", target("apps.kruise.io/v1alpha1", "CloneSet", ""),
			[]want{{field.ErrorTypeRequired, "spec.targetRef.name"}}},

		// Exactly one of maxUnavailable and minAvailable: an integer ≥ 0 or a percentage ≤ 100%.
		{"neither maxUnavailable nor minAvailable", func(p *policyv1alpha1.PodUnavailableBudget) { p.Spec.MaxUnavailable = nil },
			[]want{{field.ErrorTypeRequired, "spec.maxUnavailable"}}},
		{"both maxUnavailable and minAvailable", func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Spec.MinAvailable = ptr.To(intstr.FromInt32(2))
		}, []want{{field.ErrorTypeForbidden, "spec.minAvailable"}}},
		{"maxUnavailable 0", maxUnavailable(intstr.FromInt32(0)), nil},
		{"maxUnavailable 0%", maxUnavailable(intstr.FromString("0%")), nil},
		{"maxUnavailable 100%", maxUnavailable(intstr.FromString("100%")), nil},
		{"maxUnavailable negative", maxUnavailable(intstr.FromInt32(-1)), []want{{field.ErrorTypeInvalid, "spec.maxUnavailable"}}},
		{"maxUnavailable 101%", maxUnavailable(intstr.FromString("101%")), []want{{field.ErrorTypeInvalid, "spec.maxUnavailable"}}},
		{"maxUnavailable a huge percentage", maxUnavailable(intstr.FromString("99999999999999999999%")),
			[]want{{field.ErrorTypeInvalid, "spec.maxUnavailable"}}},
		{"maxUnavailable a number in a string", maxUnavailable(intstr.FromString("5")), []want{{field.ErrorTypeInvalid, "spec.maxUnavailable"}}},
		{"maxUnavailable a negative percentage", maxUnavailable(intstr.FromString("-5%")), []want{{field.ErrorTypeInvalid, "spec.maxUnavailable"}}},
		{"minAvailable above the replicas", minAvailable(intstr.FromInt32(1000)), nil},
		{"minAvailable 100%", minAvailable(intstr.FromString("100%")), nil},
		{"minAvailable negative", minAvailable(intstr.FromInt32(-3)), []want{{field.ErrorTypeInvalid, "spec.minAvailable"}}},
		{"minAvailable 150%", minAvailable(intstr.FromString("150%")), []want{{field.ErrorTypeInvalid, "spec.minAvailable"}}},
		{"minAvailable not a number", minAvailable(intstr.FromString("half")), []want{{field.ErrorTypeInvalid, "spec.minAvailable"}}},

		// The annotations.
		{"every operation", annotate(policyv1alpha1.PubProtectOperationAnnotation, "DELETE,UPDATE,EVICT,RESIZE"), nil},
		{"one operation", annotate(policyv1alpha1.PubProtectOperationAnnotation, "EVICT"), nil},
		{"an unknown operation", annotate(policyv1alpha1.PubProtectOperationAnnotation, "DELETE,PATCH"), []want{{field.ErrorTypeInvalid, ops}}},
		{"an operation in lower case", annotate(policyv1alpha1.PubProtectOperationAnnotation, "delete"), []want{{field.ErrorTypeInvalid, ops}}},
		{"operations with a space", annotate(policyv1alpha1.PubProtectOperationAnnotation, "DELETE, EVICT"), []want{{field.ErrorTypeInvalid, ops}}},
		{"no operation", annotate(policyv1alpha1.PubProtectOperationAnnotation, ""), []want{{field.ErrorTypeInvalid, ops}}},
		{"total replicas", annotate(policyv1alpha1.PubProtectTotalReplicasAnnotation, "10"), nil},
		{"total replicas 0", annotate(policyv1alpha1.PubProtectTotalReplicasAnnotation, "0"), nil},
		{"total replicas negative", annotate(policyv1alpha1.PubProtectTotalReplicasAnnotation, "-1"), []want{{field.ErrorTypeInvalid, total}}},
		{"total replicas not a number", annotate(policyv1alpha1.PubProtectTotalReplicasAnnotation, "ten"), []want{{field.ErrorTypeInvalid, total}}},
		{"total replicas empty", annotate(policyv1alpha1.PubProtectTotalReplicasAnnotation, ""), []want{{field.ErrorTypeInvalid, total}}},
		{"total replicas beyond 32 bits", annotate(policyv1alpha1.PubProtectTotalReplicasAnnotation, "4294967296"),
			[]want{{field.ErrorTypeInvalid, total}}},

		{"every problem at once", func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Annotations = map[string]string{policyv1alpha1.PubProtectOperationAnnotation: "X", policyv1alpha1.PubProtectTotalReplicasAnnotation: "y"}
			p.Spec = policyv1alpha1.PodUnavailableBudgetSpec{}
		}, []want{{field.ErrorTypeInvalid, ops}, {field.ErrorTypeInvalid, total},
			{field.ErrorTypeRequired, "spec.selector"}, {field.ErrorTypeRequired, "spec.maxUnavailable"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pub := validBudget("web")
			c.mutate(pub)
			checkErrors(t, ValidatePodUnavailableBudget(pub), c.want)
		})
	}
}

func TestValidatePodUnavailableBudgetUpdate(t *testing.T) {
	total := field.NewPath("metadata", "annotations").Key(policyv1alpha1.PubProtectTotalReplicasAnnotation).String()
	cases := []struct {
		name     string
		old, obj func(*policyv1alpha1.PodUnavailableBudget)
		want     []want
	}{
		{"maxUnavailable changed", nil, func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Spec.MaxUnavailable = ptr.To(intstr.FromString("30%"))
		}, nil},
		{"maxUnavailable changed to minAvailable", nil, func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Spec.MaxUnavailable, p.Spec.MinAvailable = nil, ptr.To(intstr.FromInt32(2))
		}, nil},
		{"selector changed", nil, func(p *policyv1alpha1.PodUnavailableBudget) { p.Spec.Selector.MatchLabels["app"] = "api" },
			[]want{{field.ErrorTypeForbidden, "spec.selector"}}},
		{"selector extended", nil, func(p *policyv1alpha1.PodUnavailableBudget) { p.Spec.Selector.MatchLabels["tier"] = "front" },
			[]want{{field.ErrorTypeForbidden, "spec.selector"}}},
		{"selector replaced by a targetRef", nil, func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Spec.Selector = nil
			p.Spec.TargetReference = &policyv1alpha1.PodUnavailableBudgetTargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
		}, []want{{field.ErrorTypeForbidden, "spec.selector"}, {field.ErrorTypeForbidden, "spec.targetRef"}}},
		{"targetRef renamed", func(p *policyv1alpha1.PodUnavailableBudget) {
			*p = *targetBudget(p.Name, "apps/v1", "Deployment", "web")
		}, func(p *policyv1alpha1.PodUnavailableBudget) {
			*p = *targetBudget(p.Name, "apps/v1", "Deployment", "api")
		}, []want{{field.ErrorTypeForbidden, "spec.targetRef"}}},
		{"targetRef apiVersion changed", func(p *policyv1alpha1.PodUnavailableBudget) {
			*p = *targetBudget(p.Name, "apps.kruise.io/v1alpha1", "StatefulSet", "db")
		}, func(p *policyv1alpha1.PodUnavailableBudget) {
			*p = *targetBudget(p.Name, "apps.kruise.io/v1beta1", "StatefulSet", "db")
		}, []want{{field.ErrorTypeForbidden, "spec.targetRef"}}},
		{"a changed update is validated whole", nil, func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(-1))
		}, []want{{field.ErrorTypeInvalid, "spec.maxUnavailable"}}},
		{"invalid stored budget, labels changed only", func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Spec.Selector = &metav1.LabelSelector{}
			p.Spec.MinAvailable = ptr.To(intstr.FromString("200%"))
			p.Annotations = map[string]string{policyv1alpha1.PubProtectOperationAnnotation: "ALL"}
		}, func(p *policyv1alpha1.PodUnavailableBudget) { p.Labels = map[string]string{"team": "a"} }, nil},
		{"stored negative total replicas kept", func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Annotations = map[string]string{policyv1alpha1.PubProtectTotalReplicasAnnotation: "-1"}
		}, func(p *policyv1alpha1.PodUnavailableBudget) { p.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(2)) }, nil},
		{"total replicas changed to a negative value", func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Annotations = map[string]string{policyv1alpha1.PubProtectTotalReplicasAnnotation: "-1"}
		}, func(p *policyv1alpha1.PodUnavailableBudget) {
			p.Annotations[policyv1alpha1.PubProtectTotalReplicasAnnotation] = "-2"
		}, []want{{field.ErrorTypeInvalid, total}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := validBudget("web")
			if c.old != nil {
				c.old(old)
			}
			obj := old.DeepCopy()
			c.obj(obj)
			checkErrors(t, ValidatePodUnavailableBudgetUpdate(obj, old), c.want)
		})
	}
}

// budgetValidator is the webhook's validator over a fake cluster holding others.
func budgetValidator(t *testing.T, others ...client.Object) (podUnavailableBudgetValidator, client.Client) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(webhookfuzz.NewScheme(t)).WithObjects(others...).Build()
	return podUnavailableBudgetValidator{budgets: c}, c
}

// A budget whose pods another budget of its namespace guards is refused, on create and on an update
// that changes it, at its selector or targetRef, naming the other budget; the API error is that of
// policy.kruise.io PodUnavailableBudget.
func TestPodUnavailableBudgetWebhookConflict(t *testing.T) {
	ctx := context.Background()
	other := validBudget("web-old")
	other.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}}}
	elsewhere := validBudget("web-elsewhere")
	elsewhere.Namespace = "other"
	v, c := budgetValidator(t, other, elsewhere)

	pub := validBudget("web")
	_, err := v.ValidateCreate(ctx, pub)
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeForbidden, "spec.selector"}})
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details.Group != "policy.kruise.io" || status.Status().Details.Kind != "PodUnavailableBudget" ||
		status.Status().Details.Name != "web" || !strings.Contains(err.Error(), "PodUnavailableBudget web-old") {
		t.Errorf("want an Invalid PodUnavailableBudget web of policy.kruise.io naming web-old, got %#v", err)
	}

	// An update that changes the budget meets the conflict again; one that changes neither the spec
	// nor the annotations (a finalizer removed) passes.
	changed := pub.DeepCopy()
	changed.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	_, err = v.ValidateUpdate(ctx, pub, changed)
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeForbidden, "spec.selector"}})
	relabelled := pub.DeepCopy()
	relabelled.Labels, relabelled.Finalizers = map[string]string{"team": "a"}, nil
	pub.Finalizers = []string{"example.com/hold"}
	_, err = v.ValidateUpdate(ctx, pub, relabelled)
	checkErrors(t, causes(t, err), nil)

	// The other budget itself (same name) is not a conflict: its own updates pass.
	otherChanged := other.DeepCopy()
	otherChanged.Spec.MaxUnavailable = ptr.To(intstr.FromString("10%"))
	_, err = v.ValidateUpdate(ctx, other, otherChanged)
	checkErrors(t, causes(t, err), nil)

	// Once the other selects other pods, the budget is accepted.
	other.Spec.Selector.MatchExpressions[0].Values = []string{"api"}
	if err := c.Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	_, err = v.ValidateCreate(ctx, pub)
	checkErrors(t, causes(t, err), nil)

	// Without a reader, conflicts are not checked.
	_, err = podUnavailableBudgetValidator{}.ValidateCreate(ctx, validBudget("web-old"))
	checkErrors(t, causes(t, err), nil)

	// An invalid budget is refused for its fields, before any conflict.
	bad := validBudget("web-old-2")
	bad.Spec.MaxUnavailable = ptr.To(intstr.FromString("x"))
	bad.Spec.Selector = other.Spec.Selector
	_, err = v.ValidateCreate(ctx, bad)
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeInvalid, "spec.maxUnavailable"}})
}

func TestPodUnavailableBudgetConflicts(t *testing.T) {
	selector := func(name string, sel *metav1.LabelSelector) *policyv1alpha1.PodUnavailableBudget {
		p := validBudget(name)
		p.Spec.Selector = sel
		return p
	}
	app := func(v string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": v}}
	}
	cases := []struct {
		name   string
		pub    *policyv1alpha1.PodUnavailableBudget
		others []client.Object
		want   []want
		named  string
	}{
		{"targetRefs of the same workload", targetBudget("a", "apps/v1", "Deployment", "web"),
			[]client.Object{targetBudget("b", "apps/v1", "Deployment", "web")}, []want{{field.ErrorTypeForbidden, "spec.targetRef"}}, "b"},
		{"targetRefs of the same group in another version", targetBudget("a", "apps.kruise.io/v1alpha1", "StatefulSet", "db"),
			[]client.Object{targetBudget("b", "apps.kruise.io/v1beta1", "StatefulSet", "db")}, []want{{field.ErrorTypeForbidden, "spec.targetRef"}}, "b"},
		{"targetRefs of another group", targetBudget("a", "apps/v1", "StatefulSet", "db"),
			[]client.Object{targetBudget("b", "apps.kruise.io/v1beta1", "StatefulSet", "db")}, nil, ""},
		{"targetRefs of another kind", targetBudget("a", "apps/v1", "Deployment", "web"),
			[]client.Object{targetBudget("b", "apps/v1", "StatefulSet", "web")}, nil, ""},
		{"targetRefs of another name", targetBudget("a", "apps/v1", "Deployment", "web"),
			[]client.Object{targetBudget("b", "apps/v1", "Deployment", "api")}, nil, ""},
		{"a selector and a targetRef are not compared", validBudget("a"),
			[]client.Object{targetBudget("b", "apps/v1", "Deployment", "web")}, nil, ""},
		{"a targetRef and a selector are not compared", targetBudget("a", "apps/v1", "Deployment", "web"),
			[]client.Object{validBudget("b")}, nil, ""},
		{"selectors of other keys", validBudget("a"),
			[]client.Object{selector("b", &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "front"}})}, nil, ""},
		{"a selector of more keys (OpenKruise's loose test)", validBudget("a"),
			[]client.Object{selector("b", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "front"}})}, nil, ""},
		{"the first conflicting budget by name", validBudget("a"),
			[]client.Object{selector("d", app("web")), selector("c", app("web")), selector("b", app("api"))},
			[]want{{field.ErrorTypeForbidden, "spec.selector"}}, "c"},
		{"a budget of another namespace", validBudget("a"), []client.Object{func() client.Object {
			p := validBudget("b")
			p.Namespace = "other"
			return p
		}()}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, _ := budgetValidator(t, c.others...)
			_, err := v.ValidateCreate(context.Background(), c.pub)
			checkErrors(t, causes(t, err), c.want)
			if c.named != "" && !strings.Contains(fmt.Sprint(err), "PodUnavailableBudget "+c.named+" guards") {
				t.Errorf("want the conflict with %s, got %v", c.named, err)
			}
		})
	}
}

// A budget is refused, at spec, when the budgets cannot be listed.
func TestPodUnavailableBudgetConflictListError(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(webhookfuzz.NewScheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return errors.New("cache down")
		},
	}).Build()
	_, err := podUnavailableBudgetValidator{budgets: c}.ValidateCreate(context.Background(), validBudget("web"))
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeInternal, "spec"}})
}

func TestSelectorsLooselyOverlap(t *testing.T) {
	req := func(key string, op metav1.LabelSelectorOperator, values ...string) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: values}
	}
	exprs := func(rs ...metav1.LabelSelectorRequirement) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: rs}
	}
	labels := func(kv ...string) *metav1.LabelSelector {
		s := &metav1.LabelSelector{MatchLabels: map[string]string{}}
		for i := 0; i < len(kv); i += 2 {
			s.MatchLabels[kv[i]] = kv[i+1]
		}
		return s
	}
	in, notIn, exists, absent := metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist
	cases := []struct {
		name string
		a, b *metav1.LabelSelector
		want bool
	}{
		{"same label", labels("a", "b"), labels("a", "b"), true},
		{"same key, other value", labels("a", "b"), labels("a", "c"), false},
		{"other keys", labels("a", "b"), labels("c", "d"), false},
		{"one more key", labels("a", "b"), labels("a", "b", "c", "d"), false},
		{"same two labels", labels("a", "b", "c", "d"), labels("c", "d", "a", "b"), true},
		{"two keys, one differs", labels("a", "b", "c", "d"), labels("a", "x", "c", "d"), false},
		{"In and a label among its values", exprs(req("a", in, "b", "c")), labels("a", "c"), true},
		{"In and In sharing a value", exprs(req("a", in, "b", "c")), exprs(req("a", in, "c", "d")), true},
		{"In and In disjoint", exprs(req("a", in, "b")), exprs(req("a", in, "c")), false},
		{"In and Exists", exprs(req("a", in, "b")), exprs(req("a", exists)), true},
		{"In and NotIn leaving a value", exprs(req("a", in, "b", "c")), exprs(req("a", notIn, "b")), true},
		{"In and NotIn of all its values", exprs(req("a", in, "b", "c")), exprs(req("a", notIn, "b", "c", "d")), false},
		{"In and DoesNotExist", exprs(req("a", in, "b")), exprs(req("a", absent)), false},
		{"Exists and Exists", exprs(req("a", exists)), exprs(req("a", exists)), true},
		{"Exists and NotIn", exprs(req("a", exists)), exprs(req("a", notIn, "b")), true},
		{"Exists and DoesNotExist", exprs(req("a", exists)), exprs(req("a", absent)), false},
		{"NotIn and NotIn", exprs(req("a", notIn, "b")), exprs(req("a", notIn, "c")), true},
		{"NotIn and DoesNotExist", exprs(req("a", notIn, "b")), exprs(req("a", absent)), true},
		{"DoesNotExist and DoesNotExist", exprs(req("a", absent)), exprs(req("a", absent)), true},
		{"an unknown operator", exprs(req("a", "Near", "b")), exprs(req("a", exists)), false},
		{"a label replaces an expression on its key", &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"},
			MatchExpressions: []metav1.LabelSelectorRequirement{req("a", in, "c")}}, labels("a", "c"), false},
		{"the label that replaced the expression", &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"},
			MatchExpressions: []metav1.LabelSelectorRequirement{req("a", in, "c")}}, labels("a", "b"), true},
		{"the last expression on a key counts", exprs(req("a", in, "b"), req("a", in, "c")), labels("a", "b"), false},
		{"empty selectors", &metav1.LabelSelector{}, &metav1.LabelSelector{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := selectorsLooselyOverlap(c.a, c.b); got != c.want {
				t.Errorf("selectorsLooselyOverlap(a, b) = %v, want %v", got, c.want)
			}
			if got := selectorsLooselyOverlap(c.b, c.a); got != c.want {
				t.Errorf("selectorsLooselyOverlap(b, a) = %v, want %v", got, c.want)
			}
		})
	}
}

// Register serves the PodUnavailableBudget webhook at its path, for policy.kruise.io/v1alpha1.
func TestPodUnavailableBudgetWebhookRegistered(t *testing.T) {
	scheme := webhookfuzz.NewScheme(t)
	targets := webhookfuzz.Targets(t, scheme, func(srv webhook.Server) {
		Register(srv, scheme, nil, nil, SidecarSetOptions{}, nil, ResourceDistributionOptions{}, Gates{}, nil)
	})
	for _, tg := range targets {
		if tg.Path == PodUnavailableBudgetPath {
			if tg.Kind != policyv1alpha1.GroupVersion.WithKind("PodUnavailableBudget") {
				t.Errorf("%s serves %s", tg.Path, tg.Kind)
			}
			return
		}
	}
	t.Errorf("Register does not serve %s", PodUnavailableBudgetPath)
}
