package deletionprotection

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
)

func labelled(v string) map[string]string {
	return map[string]string{policyv1alpha1.DeletionProtectionKey: v, "team": "a"}
}

func pod(ns, name string, phase corev1.PodPhase, deleting bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: corev1.PodStatus{Phase: phase}}
	if deleting {
		p.DeletionTimestamp = ptr.To(metav1.Now())
		p.Finalizers = []string{"test"}
	}
	return p
}

func claim(ns, name string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
}

func widget(ns, name string, deleting bool) *metav1.PartialObjectMetadata {
	w := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "example.com/v2", Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if deleting {
		w.DeletionTimestamp = ptr.To(metav1.Now())
		w.Finalizers = []string{"test"}
	}
	return w
}

func widgetCRD(v string) *apiextv1.CustomResourceDefinition {
	return &apiextv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com", Labels: labelled(v)},
		Spec: apiextv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true},
				{Name: "v2", Served: true, Storage: true},
			}},
	}
}

// deletion is the admission request of deleting obj, as requested through gvk.
func deletion(t *testing.T, gvk schema.GroupVersionKind, obj metav1.Object) admission.Request {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Delete, Kind: metav1.GroupVersionKind(gvk),
		Namespace: obj.GetNamespace(), Name: obj.GetName(), OldObject: runtime.RawExtension{Raw: raw}}}
}

func handler(t *testing.T, p Policy, objs ...runtime.Object) *Handler {
	t.Helper()
	var cached, crs []runtime.Object
	for _, o := range objs {
		if _, ok := o.(*metav1.PartialObjectMetadata); ok {
			crs = append(crs, o)
		} else {
			cached = append(cached, o)
		}
	}
	s := runtime.NewScheme()
	if err := scheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	metaScheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(metaScheme); err != nil {
		t.Fatal(err)
	}
	return &Handler{Options{Enabled: true, Policy: p,
		Reader:   fake.NewClientBuilder().WithScheme(s).WithRuntimeObjects(cached...).Build(),
		Metadata: metadatafake.NewSimpleMetadataClient(metaScheme, crs...)}}
}

// check runs req through h and compares the answer with want ("" allowed, else a substring of the
// denial's message).
func check(t *testing.T, h *Handler, req admission.Request, want string) {
	t.Helper()
	resp := h.Handle(context.Background(), req)
	switch {
	case want == "" && !resp.Allowed:
		t.Errorf("%s %s refused: %s", req.Kind.Kind, req.Name, resp.Result.Message)
	case want != "" && resp.Allowed:
		t.Errorf("%s %s allowed; want refused with %q", req.Kind.Kind, req.Name, want)
	case want != "" && (resp.Result.Code != http.StatusForbidden || !strings.Contains(resp.Result.Message, want) ||
		!strings.HasPrefix(resp.Result.Message, Refusal)):
		t.Errorf("%s %s: %d %q; want 403 with %q", req.Kind.Kind, req.Name, resp.Result.Code, resp.Result.Message, want)
	}
}

var (
	nsKind  = corev1.SchemeGroupVersion.WithKind("Namespace")
	crdKind = apiextv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")
)

func TestNamespace(t *testing.T) {
	ns := func(name, v string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labelled(v)}}
	}
	h := handler(t, Policy{},
		pod("busy", "a", corev1.PodRunning, false), pod("busy", "b", corev1.PodPending, false),
		pod("busy", "done", corev1.PodSucceeded, false), pod("busy", "failed", corev1.PodFailed, false),
		pod("busy", "going", corev1.PodRunning, true),
		pod("finished", "done", corev1.PodSucceeded, false), pod("finished", "going", corev1.PodRunning, true),
		claim("finished", "pending", corev1.ClaimPending), claim("finished", "lost", corev1.ClaimLost),
		claim("claims", "bound", corev1.ClaimBound),
		pod("other", "a", corev1.PodRunning, false))
	check(t, h, deletion(t, nsKind, ns("busy", "Cascading")), "Namespace busy has policy.kruise.io/delete-protection=Cascading and still contains 2 active pods")
	check(t, h, deletion(t, nsKind, ns("finished", "Cascading")), "")
	check(t, h, deletion(t, nsKind, ns("claims", "Cascading")), "still contains 1 bound PersistentVolumeClaim")
	check(t, h, deletion(t, nsKind, ns("empty", "Cascading")), "")
	check(t, h, deletion(t, nsKind, ns("empty", "Always")), "Namespace empty has policy.kruise.io/delete-protection=Always")
	check(t, h, deletion(t, nsKind, ns("busy", "cascading")), "")
	terminating := ns("busy", "Always")
	terminating.DeletionTimestamp = ptr.To(metav1.Now())
	check(t, h, deletion(t, nsKind, terminating), "")

	// The gate ResourcesDeletionProtection off: nothing is refused.
	h.Enabled = false
	check(t, h, deletion(t, nsKind, ns("busy", "Always")), "")
}

func TestWorkloads(t *testing.T) {
	h := handler(t, Policy{})
	meta := func(v string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "ns", Name: "w", Labels: labelled(v)}
	}
	for _, tc := range []struct {
		gvk  schema.GroupVersionKind
		obj  func(v string, replicas *int32) metav1.Object
		kind string
	}{
		{appsv1.SchemeGroupVersion.WithKind("Deployment"), func(v string, r *int32) metav1.Object {
			return &appsv1.Deployment{ObjectMeta: meta(v), Spec: appsv1.DeploymentSpec{Replicas: r}}
		}, "Deployment"},
		{appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), func(v string, r *int32) metav1.Object {
			return &appsv1.ReplicaSet{ObjectMeta: meta(v), Spec: appsv1.ReplicaSetSpec{Replicas: r}}
		}, "ReplicaSet"},
		{appsv1.SchemeGroupVersion.WithKind("StatefulSet"), func(v string, r *int32) metav1.Object {
			return &appsv1.StatefulSet{ObjectMeta: meta(v), Spec: appsv1.StatefulSetSpec{Replicas: r}}
		}, "StatefulSet"},
		{appsv1alpha1.GroupVersion.WithKind("CloneSet"), func(v string, r *int32) metav1.Object {
			return &appsv1alpha1.CloneSet{ObjectMeta: meta(v), Spec: appsv1alpha1.CloneSetSpec{Replicas: r}}
		}, "CloneSet"},
		{appsv1alpha1.GroupVersion.WithKind("StatefulSet"), func(v string, r *int32) metav1.Object {
			return &appsv1alpha1.StatefulSet{ObjectMeta: meta(v), Spec: appsv1alpha1.StatefulSetSpec{Replicas: r}}
		}, "StatefulSet"},
		{appsv1beta1.GroupVersion.WithKind("StatefulSet"), func(v string, r *int32) metav1.Object {
			return &appsv1beta1.StatefulSet{ObjectMeta: meta(v), Spec: appsv1beta1.StatefulSetSpec{Replicas: r}}
		}, "StatefulSet"},
		{appsv1alpha1.GroupVersion.WithKind("UnitedDeployment"), func(v string, r *int32) metav1.Object {
			return &appsv1alpha1.UnitedDeployment{ObjectMeta: meta(v), Spec: appsv1alpha1.UnitedDeploymentSpec{Replicas: r}}
		}, "UnitedDeployment"},
	} {
		check(t, h, deletion(t, tc.gvk, tc.obj("Cascading", ptr.To[int32](2))),
			tc.kind+" ns/w has policy.kruise.io/delete-protection=Cascading and spec.replicas is 2: scale it to 0 first")
		check(t, h, deletion(t, tc.gvk, tc.obj("Cascading", ptr.To[int32](0))), "")
		check(t, h, deletion(t, tc.gvk, tc.obj("Always", ptr.To[int32](0))), tc.kind+" ns/w has policy.kruise.io/delete-protection=Always")
		check(t, h, deletion(t, tc.gvk, tc.obj("", ptr.To[int32](2))), "")
	}
	// Another kind, should an entry send one: not this webhook's.
	check(t, h, deletion(t, appsv1.SchemeGroupVersion.WithKind("DaemonSet"), &appsv1.DaemonSet{ObjectMeta: meta("Always")}), "")
}

func TestServiceAndIngress(t *testing.T) {
	h := handler(t, Policy{})
	svc := func(v string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api", Labels: labelled(v)}}
	}
	ing := func(v string) *networkingv1.Ingress {
		return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Labels: labelled(v)}}
	}
	svcKind, ingKind := corev1.SchemeGroupVersion.WithKind("Service"), networkingv1.SchemeGroupVersion.WithKind("Ingress")
	check(t, h, deletion(t, svcKind, svc("Always")), "Service ns/api has policy.kruise.io/delete-protection=Always")
	check(t, h, deletion(t, svcKind, svc("Cascading")), "")
	check(t, h, deletion(t, ingKind, ing("Always")), "Ingress ns/web has policy.kruise.io/delete-protection=Always")
	check(t, h, deletion(t, ingKind, ing("Cascading")), "")
}

func TestCustomResourceDefinition(t *testing.T) {
	off := handler(t, Policy{}, widget("a", "one", false))
	check(t, off, deletion(t, crdKind, widgetCRD("Cascading")), "needs the feature gate DeletionProtectionForCRDCascadingGate")
	check(t, off, deletion(t, crdKind, widgetCRD("Always")), "=Always")
	if n := len(off.Metadata.(*metadatafake.FakeMetadataClient).Actions()); n != 0 {
		t.Errorf("without the gate, %d lists of custom resources; want none", n)
	}

	on := Policy{CRDCascading: true}
	h := handler(t, on, widget("a", "one", false), widget("b", "two", false), widget("b", "going", true))
	check(t, h, deletion(t, crdKind, widgetCRD("Cascading")),
		"CustomResourceDefinition widgets.example.com has policy.kruise.io/delete-protection=Cascading and still has 2 custom resources (widgets.example.com)")
	actions := h.Metadata.(*metadatafake.FakeMetadataClient).Actions()
	if len(actions) != 1 || actions[0].GetResource() != (schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "widgets"}) ||
		actions[0].GetNamespace() != "" {
		t.Errorf("lists %v; want one of widgets.example.com/v2 (the storage version) in every namespace", actions)
	}
	check(t, handler(t, on, widget("b", "going", true)), deletion(t, crdKind, widgetCRD("Cascading")), "")
	check(t, handler(t, on), deletion(t, crdKind, widgetCRD("Cascading")), "")

	// The storage version not served: another served one is listed.
	unserved := widgetCRD("Cascading")
	unserved.Spec.Versions[1].Served = false
	h = handler(t, on)
	check(t, h, deletion(t, crdKind, unserved), "")
	if a := h.Metadata.(*metadatafake.FakeMetadataClient).Actions(); len(a) != 1 || a[0].GetResource().Version != "v1" {
		t.Errorf("lists %v; want one of v1", a)
	}

	// Pages: counting stops at the first page holding a custom resource.
	paged := &Handler{Options{Enabled: true, Policy: on, Metadata: pages{{widget("a", "gone", true)}, {widget("a", "x", false)}, {widget("a", "y", false)}}}}
	check(t, paged, deletion(t, crdKind, widgetCRD("Cascading")), "still has at least 1 custom resource (widgets.example.com)")
	paged.Metadata = pages{{widget("a", "gone", true)}, {widget("a", "x", false), widget("a", "y", false)}}
	check(t, paged, deletion(t, crdKind, widgetCRD("Cascading")), "still has 2 custom resources")
}

// pages is a metadata client whose every resource lists as these pages, in order.
type pages [][]*metav1.PartialObjectMetadata

func (p pages) Resource(schema.GroupVersionResource) metadata.Getter { return pagedResource{pages: p} }

// pagedResource lists pages; the rest of the interface is not used (nil).
type pagedResource struct {
	metadata.ResourceInterface
	pages pages
}

func (r pagedResource) Namespace(string) metadata.ResourceInterface { return r }

func (r pagedResource) List(_ context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	i := 0
	if opts.Continue != "" {
		i = int(opts.Continue[0] - '0')
	}
	list := &metav1.PartialObjectMetadataList{}
	for _, o := range r.pages[i] {
		list.Items = append(list.Items, *o)
	}
	if i+1 < len(r.pages) {
		list.Continue = string(rune('0' + i + 1))
	}
	return list, nil
}

func TestRequestsLeftAlone(t *testing.T) {
	h := handler(t, Policy{})
	req := deletion(t, nsKind, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: labelled("Always")}})
	req.Operation = admissionv1.Update
	check(t, h, req, "")
	req = deletion(t, nsKind, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: labelled("Always")}})
	req.SubResource = "status"
	check(t, h, req, "")
	req = deletion(t, nsKind, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x"}})
	req.OldObject.Raw = nil
	if resp := h.Handle(context.Background(), req); resp.Allowed {
		t.Errorf("a deletion without the stored object was allowed")
	}
}

func TestScopeEntry(t *testing.T) {
	for _, name := range WebhookNames {
		hook := map[string]any{"name": name}
		if err := ScopeEntry(hook); err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(hook["objectSelector"])
		sel := &metav1.LabelSelector{}
		if err := json.Unmarshal(raw, sel); err != nil {
			t.Fatal(err)
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			t.Fatal(err)
		}
		for v, want := range map[string]bool{"Always": true, "Cascading": true, "": false, "always": false, "Never": false} {
			set := labels.Set{}
			if v != "" {
				set[policyv1alpha1.DeletionProtectionKey] = v
			}
			if s.Matches(set) != want {
				t.Errorf("%s: selector %s matches %v: %t, want %t", name, s, set, !want, want)
			}
		}
	}
	other := map[string]any{"name": "vcloneset-v1alpha1.apps.kruise.io"}
	if err := ScopeEntry(other); err != nil || other["objectSelector"] != nil {
		t.Errorf("another entry scoped: %v, %v", other, err)
	}
}
