package validating

import (
	"context"
	"errors"
	"testing"

	"github.com/kruise-ng/kruise/pkg/platform/kruisescheme"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
)

func sidecarSetScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s, err := kruisescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// causes returns the field errors of a webhook's answer (nil: allowed).
func causes(t *testing.T, err error) field.ErrorList {
	t.Helper()
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) || status.Status().Details == nil {
		t.Fatalf("want an Invalid answer, got %v", err)
	}
	var out field.ErrorList
	for _, c := range status.Status().Details.Causes {
		out = append(out, &field.Error{Type: field.ErrorType(c.Type), Field: c.Field})
	}
	return out
}

func v1beta1SidecarSetValidator(templates PodTemplateChecker, opts SidecarSetOptions) sidecarSetValidator[*v1beta1.SidecarSet] {
	return sidecarSetValidator[*v1beta1.SidecarSet]{templates: templates, opts: opts,
		toV1beta1: func(o *v1beta1.SidecarSet) (*v1beta1.SidecarSet, error) { return o, nil }}
}

// A SidecarSet that injects a container of the name another SidecarSet injects into the same pods
// is refused at that container's name, on create and on update; once the other one selects other
// pods, it is accepted.
func TestSidecarSetWebhookConflict(t *testing.T) {
	ctx := context.Background()
	other := validSidecarSet()
	other.Name = "log-agent-v2"
	other.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}}}
	c := fake.NewClientBuilder().WithScheme(sidecarSetScheme(t)).WithObjects(other).Build()
	v := v1beta1SidecarSetValidator(nil, SidecarSetOptions{Reader: c, Namespace: "kruise-system"})

	set := validSidecarSet()
	_, err := v.ValidateCreate(ctx, set)
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeForbidden, "spec.initContainers[0].name"},
		{field.ErrorTypeForbidden, "spec.containers[0].name"}})

	updated := set.DeepCopy()
	updated.Spec.Containers[0].Image = "log:v2"
	_, err = v.ValidateUpdate(ctx, set, updated)
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeForbidden, "spec.initContainers[0].name"},
		{field.ErrorTypeForbidden, "spec.containers[0].name"}})

	other.Spec.Selector.MatchExpressions[0].Values = []string{"api"}
	if err := c.Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	_, err = v.ValidateCreate(ctx, set)
	checkErrors(t, causes(t, err), nil)
}

func TestSidecarSetConflicts(t *testing.T) {
	named := func(name string, mutate func(*v1beta1.SidecarSet)) v1beta1.SidecarSet {
		s := validSidecarSet()
		s.Name = name
		if mutate != nil {
			mutate(s)
		}
		return *s
	}
	selector := func(kv ...string) *metav1.LabelSelector {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return &metav1.LabelSelector{MatchLabels: m}
	}
	patch := func(policy v1beta1.SidecarSetPatchPolicyType) func(*v1beta1.SidecarSet) {
		return func(s *v1beta1.SidecarSet) {
			s.Spec.PatchPodMetadata = []v1beta1.SidecarSetPatchPodMetadata{{Annotations: map[string]string{"example.com/a": "{}"}, PatchPolicy: policy}}
		}
	}
	onlyVolume := func(s *v1beta1.SidecarSet) {
		s.Spec.Containers, s.Spec.InitContainers = []v1beta1.SidecarSetContainer{sidecar("other")}, nil
	}
	namespaces := map[string]map[string]string{"prod": {"env": "prod"}, "dev": {"env": "dev"}}
	namespaceLabels := func(name string) (map[string]string, bool) { l, ok := namespaces[name]; return l, ok }
	nsSel := func(env string) func(*v1beta1.SidecarSet) {
		return func(s *v1beta1.SidecarSet) { s.Spec.NamespaceSelector = selector("env", env) }
	}
	const (
		cName = "spec.containers[0].name"
		iName = "spec.initContainers[0].name"
	)
	cases := []struct {
		name  string
		set   func(*v1beta1.SidecarSet) // the new SidecarSet, from validSidecarSet
		other v1beta1.SidecarSet
		want  []want
	}{
		{"same containers, same selector", nil, named("b", nil),
			[]want{{field.ErrorTypeForbidden, iName}, {field.ErrorTypeForbidden, cName}}},
		{"itself (by name)", nil, named("log-agent", nil), nil},
		{"selectors on other labels overlap", nil, named("b", func(s *v1beta1.SidecarSet) { s.Spec.Selector = selector("tier", "web") }),
			[]want{{field.ErrorTypeForbidden, iName}, {field.ErrorTypeForbidden, cName}}},
		{"disjoint selectors", nil, named("b", func(s *v1beta1.SidecarSet) { s.Spec.Selector = selector("app", "api") }), nil},
		{"the other's selector unset", nil, named("b", func(s *v1beta1.SidecarSet) { s.Spec.Selector = nil }), nil},
		{"a container named as the other's init container", func(s *v1beta1.SidecarSet) { s.Spec.InitContainers = nil },
			named("b", func(s *v1beta1.SidecarSet) {
				s.Spec.InitContainers, s.Spec.Containers = []v1beta1.SidecarSetContainer{initSidecar("log")}, []v1beta1.SidecarSetContainer{sidecar("x")}
			}), nil},
		{"same volume", nil, named("b", onlyVolume), nil},
		{"same volume name, other definition", nil, named("b", func(s *v1beta1.SidecarSet) {
			onlyVolume(s)
			s.Spec.Volumes[0].VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log"}}
		}), []want{{field.ErrorTypeForbidden, "spec.volumes[0]"}}},
		{"annotation: Overwrite and MergePatchJson", patch(v1beta1.SidecarSetOverwritePatchPolicy),
			named("b", func(s *v1beta1.SidecarSet) { onlyVolume(s); patch(v1beta1.SidecarSetMergePatchJSONPatchPolicy)(s) }),
			[]want{{field.ErrorTypeForbidden, "spec.patchPodMetadata[0].annotations[example.com/a]"}}},
		{"annotation: MergePatchJson and Overwrite", patch(v1beta1.SidecarSetMergePatchJSONPatchPolicy),
			named("b", func(s *v1beta1.SidecarSet) { onlyVolume(s); patch(v1beta1.SidecarSetOverwritePatchPolicy)(s) }),
			[]want{{field.ErrorTypeForbidden, "spec.patchPodMetadata[0].annotations[example.com/a]"}}},
		{"annotation: MergePatchJson twice", patch(v1beta1.SidecarSetMergePatchJSONPatchPolicy),
			named("b", func(s *v1beta1.SidecarSet) { onlyVolume(s); patch(v1beta1.SidecarSetMergePatchJSONPatchPolicy)(s) }), nil},
		{"annotation: Retain and Overwrite", patch(v1beta1.SidecarSetRetainPatchPolicy),
			named("b", func(s *v1beta1.SidecarSet) { onlyVolume(s); patch(v1beta1.SidecarSetOverwritePatchPolicy)(s) }), nil},
		{"different v1alpha1 namespaces", func(s *v1beta1.SidecarSet) { withNamespace(s, "prod") },
			named("b", func(s *v1beta1.SidecarSet) { withNamespace(s, "dev") }), nil},
		{"same v1alpha1 namespace", func(s *v1beta1.SidecarSet) { withNamespace(s, "prod") },
			named("b", func(s *v1beta1.SidecarSet) { withNamespace(s, "prod") }),
			[]want{{field.ErrorTypeForbidden, iName}, {field.ErrorTypeForbidden, cName}}},
		{"disjoint namespaceSelectors", nsSel("prod"), named("b", nsSel("dev")), nil},
		{"same namespaceSelector", nsSel("prod"), named("b", nsSel("prod")),
			[]want{{field.ErrorTypeForbidden, iName}, {field.ErrorTypeForbidden, cName}}},
		{"a namespace the other's namespaceSelector selects", func(s *v1beta1.SidecarSet) { withNamespace(s, "prod") },
			named("b", nsSel("prod")), []want{{field.ErrorTypeForbidden, iName}, {field.ErrorTypeForbidden, cName}}},
		{"a namespace the other's namespaceSelector does not select", func(s *v1beta1.SidecarSet) { withNamespace(s, "dev") },
			named("b", nsSel("prod")), nil},
		{"a namespace that cannot be read", func(s *v1beta1.SidecarSet) { withNamespace(s, "gone") },
			named("b", nsSel("prod")), nil},
		{"a namespaceSelector against the other's namespace (never found to overlap, as in OpenKruise)", nsSel("prod"),
			named("b", func(s *v1beta1.SidecarSet) { withNamespace(s, "prod") }), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := validSidecarSet()
			if tc.set != nil {
				tc.set(set)
			}
			checkErrors(t, conflictsWith(set, []v1beta1.SidecarSet{tc.other}, namespaceLabels), tc.want)
		})
	}
}

// OpenKruise's selector overlap, including its quirk: an Exists of a key the other selector does
// not constrain makes them disjoint.
func TestSelectorsOverlap(t *testing.T) {
	ml := func(kv ...string) *metav1.LabelSelector {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return &metav1.LabelSelector{MatchLabels: m}
	}
	expr := func(key string, op metav1.LabelSelectorOperator, values ...string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}
	}
	cases := []struct {
		name string
		a, b *metav1.LabelSelector
		want bool
	}{
		{"same label", ml("a", "h"), ml("a", "h"), true},
		{"same key, other value", ml("a", "h"), ml("a", "i"), false},
		{"other keys", ml("a", "h"), ml("b", "i"), true},
		{"one of three values differs", ml("a", "h", "b", "i", "c", "j"), ml("a", "h", "b", "x", "c", "j"), false},
		{"In with the value", ml("a", "h"), expr("a", metav1.LabelSelectorOpIn, "h", "i"), true},
		{"In without the value", ml("a", "h"), expr("a", metav1.LabelSelectorOpIn, "i", "j"), false},
		{"NotIn of every value", expr("a", metav1.LabelSelectorOpIn, "h", "i"), expr("a", metav1.LabelSelectorOpNotIn, "h", "i", "j"), false},
		{"NotIn of some values", expr("a", metav1.LabelSelectorOpIn, "h", "i"), expr("a", metav1.LabelSelectorOpNotIn, "h"), true},
		{"Exists and a value", ml("a", "h"), expr("a", metav1.LabelSelectorOpExists), true},
		{"Exists of an unconstrained key", ml("a", "h"), expr("b", metav1.LabelSelectorOpExists), false},
		{"DoesNotExist of a constrained key", ml("a", "h"), expr("a", metav1.LabelSelectorOpDoesNotExist), false},
		{"DoesNotExist of another key", ml("a", "h"), expr("b", metav1.LabelSelectorOpDoesNotExist), true},
		{"nil", nil, ml("a", "h"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := selectorsOverlap(tc.a, tc.b); got != tc.want {
				t.Errorf("selectorsOverlap = %t, want %t", got, tc.want)
			}
			if got := selectorsOverlap(tc.b, tc.a); got != tc.want {
				t.Errorf("selectorsOverlap (swapped) = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestSidecarSetPatchWhitelist(t *testing.T) {
	ctx := context.Background()
	whitelist := func(data string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: KruiseConfigurationName, Namespace: "kruise-system"},
			Data: map[string]string{PatchWhitelistKey: data}}
	}
	teamA := `{"rules":[{"selector":{"matchLabels":{"team":"a"}},"allowedAnnotationKeyExprs":["^example\\.com/"]}]}`
	const p = "spec.patchPodMetadata"
	cases := []struct {
		name     string
		config   []client.Object
		defaults bool
		labels   map[string]string
		keys     []string // nil: no patchPodMetadata
		want     []want
	}{
		{"no patchPodMetadata, no whitelist", nil, false, nil, nil, nil},
		{"no whitelist", nil, false, nil, []string{"example.com/a"}, []want{{field.ErrorTypeForbidden, p}}},
		{"no whitelist, defaults allowed", nil, true, nil, []string{"example.com/a"}, nil},
		{"the ConfigMap without the entry", []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: KruiseConfigurationName, Namespace: "kruise-system"}}}, false, nil, []string{"example.com/a"},
			[]want{{field.ErrorTypeForbidden, p}}},
		{"allowed keys", []client.Object{whitelist(teamA)}, false, map[string]string{"team": "a"},
			[]string{"example.com/a", "example.com/b"}, nil},
		{"a key not allowed", []client.Object{whitelist(teamA)}, false, map[string]string{"team": "a"},
			[]string{"example.com/a", "other.io/b"}, []want{{field.ErrorTypeForbidden, p + "[0].annotations[other.io/b]"}}},
		{"no rule for this SidecarSet", []client.Object{whitelist(teamA)}, false, map[string]string{"team": "b"},
			[]string{"example.com/a"}, []want{{field.ErrorTypeForbidden, p + "[0].annotations[example.com/a]"}}},
		{"no rule for this SidecarSet, defaults allowed", []client.Object{whitelist(teamA)}, true, map[string]string{"team": "b"},
			[]string{"example.com/a"}, nil},
		{"a whitelist that is not JSON", []client.Object{whitelist("{")}, true, nil, []string{"example.com/a"},
			[]want{{field.ErrorTypeInternal, p}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithObjects(tc.config...).Build()
			set := validSidecarSet()
			set.Labels = tc.labels
			if tc.keys != nil {
				a := map[string]string{}
				for _, k := range tc.keys {
					a[k] = "v"
				}
				set.Spec.PatchPodMetadata = []v1beta1.SidecarSetPatchPodMetadata{{Annotations: a, PatchPolicy: v1beta1.SidecarSetOverwritePatchPolicy}}
			}
			opts := SidecarSetOptions{Config: c, Namespace: "kruise-system", PatchDefaultsAllowed: tc.defaults}
			checkErrors(t, checkPatchWhitelist(ctx, opts, set), tc.want)
		})
	}
}

func TestSidecarSetInjectionRevision(t *testing.T) {
	ctx := context.Background()
	rev := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "log-agent-abc", Namespace: "kruise-system",
		Labels: map[string]string{sidecarrules.RevisionOwnerLabel: "log-agent", sidecarrules.CustomVersionLabel: "v1"}}}
	elsewhere := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "log-agent-def", Namespace: "default",
		Labels: map[string]string{sidecarrules.RevisionOwnerLabel: "log-agent", sidecarrules.CustomVersionLabel: "v2"}}}
	c := fake.NewClientBuilder().WithObjects(rev, elsewhere).Build()
	const p = "spec.injectionStrategy.revision"
	cases := []struct {
		name string
		ref  *v1beta1.SidecarSetInjectRevision
		want []want
	}{
		{"none", nil, nil},
		{"revisionName", &v1beta1.SidecarSetInjectRevision{RevisionName: ptr.To("log-agent-abc")}, nil},
		{"revisionName not found", &v1beta1.SidecarSetInjectRevision{RevisionName: ptr.To("log-agent-xyz")},
			[]want{{field.ErrorTypeNotFound, p + ".revisionName"}}},
		{"revisionName in another namespace", &v1beta1.SidecarSetInjectRevision{RevisionName: ptr.To("log-agent-def")},
			[]want{{field.ErrorTypeNotFound, p + ".revisionName"}}},
		{"customVersion", &v1beta1.SidecarSetInjectRevision{CustomVersion: ptr.To("v1")}, nil},
		{"customVersion not found", &v1beta1.SidecarSetInjectRevision{CustomVersion: ptr.To("v2")},
			[]want{{field.ErrorTypeNotFound, p + ".customVersion"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := validSidecarSet()
			set.Spec.InjectionStrategy.Revision = tc.ref
			checkErrors(t, checkInjectionRevision(ctx, c, "kruise-system", set), tc.want)
		})
	}
	other := validSidecarSet()
	other.Name = "other"
	other.Spec.InjectionStrategy.Revision = &v1beta1.SidecarSetInjectRevision{CustomVersion: ptr.To("v1")}
	checkErrors(t, checkInjectionRevision(ctx, c, "kruise-system", other), []want{{field.ErrorTypeNotFound, p + ".customVersion"}})
}

// podChecker records the pods the webhook asks about and answers with errs, at paths under the
// given path as the dry run does.
type podChecker struct {
	seen []*corev1.PodTemplateSpec
	errs []string // pod field paths
}

func (c *podChecker) Check(_ context.Context, namespace string, tmpl *corev1.PodTemplateSpec, path *field.Path) field.ErrorList {
	c.seen = append(c.seen, tmpl)
	var out field.ErrorList
	for _, f := range c.errs {
		out = append(out, &field.Error{Type: field.ErrorTypeInvalid, Field: path.String() + "." + f, BadValue: field.OmitValueType{}, Detail: "bad"})
	}
	return out
}

// The containers, init containers and volumes are checked as a pod, on create and when they
// change; the API server's errors are reported at the same paths in the SidecarSet.
func TestSidecarSetWebhookPodCheck(t *testing.T) {
	ctx := context.Background()
	checker := &podChecker{errs: []string{"spec.containers[0].ports[0].containerPort", "spec.volumes[0].emptyDir.sizeLimit", "spec.hostNetwork"}}
	v := v1beta1SidecarSetValidator(checker, SidecarSetOptions{})
	set := validSidecarSet()
	_, err := v.ValidateCreate(ctx, set)
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeInvalid, "spec.containers[0].ports[0].containerPort"},
		{field.ErrorTypeInvalid, "spec.volumes[0].emptyDir.sizeLimit"}, {field.ErrorTypeInvalid, "spec"}})
	if len(checker.seen) != 1 {
		t.Fatalf("%d pods checked, want 1", len(checker.seen))
	}
	pod := checker.seen[0].Spec
	if len(pod.Containers) != 1 || pod.Containers[0].Name != "log" || len(pod.InitContainers) != 1 || pod.InitContainers[0].Name != "setup" ||
		len(pod.Volumes) != 1 || pod.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("checked pod: %+v", pod)
	}

	checker.errs = nil
	updated := set.DeepCopy()
	updated.Spec.UpdateStrategy.Paused = true
	if _, err := v.ValidateUpdate(ctx, set, updated); err != nil {
		t.Fatal(err)
	}
	if len(checker.seen) != 1 {
		t.Errorf("a change of the update strategy had the pod checked again")
	}
	updated.Spec.Containers[0].Image = "log:v2"
	if _, err := v.ValidateUpdate(ctx, set, updated); err != nil {
		t.Fatal(err)
	}
	if len(checker.seen) != 2 || checker.seen[1].Spec.Containers[0].Image != "log:v2" {
		t.Errorf("a change of a container was not checked")
	}

	// Init containers only: the pod gets a placeholder container, whose errors are not the SidecarSet's.
	checker.errs = []string{"spec.containers[0].name", "spec.initContainers[0].image"}
	initOnly := validSidecarSet()
	initOnly.Spec.Containers = nil
	_, err = v.ValidateCreate(ctx, initOnly)
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeInvalid, "spec.initContainers[0].image"}})
	if pod := checker.seen[2].Spec; len(pod.Containers) != 1 || pod.Containers[0].Name != sidecarPlaceholderName {
		t.Errorf("no placeholder container: %+v", pod.Containers)
	}
}

// The v1alpha1 webhook validates the object as v1beta1: spec.namespace (kept in the conversion
// annotation) against spec.namespaceSelector, and an unreadable v1beta1-only annotation.
func TestSidecarSetWebhookV1alpha1(t *testing.T) {
	ctx := context.Background()
	v := sidecarSetValidator[*v1alpha1.SidecarSet]{
		toV1beta1: func(o *v1alpha1.SidecarSet) (*v1beta1.SidecarSet, error) {
			out := &v1beta1.SidecarSet{}
			return out, o.ConvertTo(out)
		}}
	alpha := &v1alpha1.SidecarSet{}
	if err := alpha.ConvertFrom(validSidecarSet()); err != nil {
		t.Fatal(err)
	}
	alpha.Spec.Namespace = "ns"
	if _, err := v.ValidateCreate(ctx, alpha); err != nil {
		t.Fatalf("valid v1alpha1 SidecarSet refused: %v", err)
	}
	both := alpha.DeepCopy()
	both.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	_, err := v.ValidateCreate(ctx, both)
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeForbidden, "spec.namespaceSelector"}})
	_, err = v.ValidateUpdate(ctx, alpha, both)
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeForbidden, "spec.namespaceSelector"}})

	bad := alpha.DeepCopy()
	bad.Annotations = map[string]string{v1alpha1.ConversionV1beta1OnlyAnnotation: "{"}
	_, err = v.ValidateCreate(ctx, bad)
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeInvalid, "metadata.annotations[apps.kruise.io/conversion-v1beta1-only]"}})
}
