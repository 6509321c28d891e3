package deletionprotection

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/platform/openkruisemetrics"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// Path is where the webhook is served; every entry below calls it.
const Path = "/validate-deletion-protection"

// One entry per API group, DELETE only, each version matched exactly (no conversion is needed to
// read the stored object). ScopeEntry adds the object selector the marker cannot express.
//
// +kubebuilder:webhook:path=/validate-deletion-protection,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups="",resources=namespaces;services,verbs=delete,versions=v1,name=vdeletionprotection-core.kruise.io,admissionReviewVersions=v1,timeoutSeconds=10
// +kubebuilder:webhook:path=/validate-deletion-protection,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=networking.k8s.io,resources=ingresses,verbs=delete,versions=v1,name=vdeletionprotection-networking.kruise.io,admissionReviewVersions=v1,timeoutSeconds=10
// +kubebuilder:webhook:path=/validate-deletion-protection,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=delete,versions=v1,name=vdeletionprotection-apiextensions.kruise.io,admissionReviewVersions=v1,timeoutSeconds=10
// +kubebuilder:webhook:path=/validate-deletion-protection,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps,resources=deployments;replicasets;statefulsets,verbs=delete,versions=v1,name=vdeletionprotection-apps.kruise.io,admissionReviewVersions=v1,timeoutSeconds=10
// +kubebuilder:webhook:path=/validate-deletion-protection,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=clonesets;statefulsets;uniteddeployments,verbs=delete,versions=v1alpha1;v1beta1,name=vdeletionprotection-apps-kruise-io.kruise.io,admissionReviewVersions=v1,timeoutSeconds=10

// A Cascading namespace's pods and claims are read from the manager's cache; a Cascading CRD's
// custom resources, of any group, are listed (metadata only, uncached: no informer is left
// watching a resource about to go away).
//
// +kubebuilder:rbac:groups="",resources=pods;persistentvolumeclaims,verbs=list;watch
// +kubebuilder:rbac:groups="*",resources="*",verbs=list

// WebhookNames are the webhook's entries in the ValidatingWebhookConfiguration.
var WebhookNames = []string{
	"vdeletionprotection-core.kruise.io",
	"vdeletionprotection-networking.kruise.io",
	"vdeletionprotection-apiextensions.kruise.io",
	"vdeletionprotection-apps.kruise.io",
	"vdeletionprotection-apps-kruise-io.kruise.io",
}

// Selector selects the objects the webhook is called for: those labelled Always or Cascading.
func Selector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key:      policyv1alpha1.DeletionProtectionKey,
		Operator: metav1.LabelSelectorOpIn,
		Values:   []string{policyv1alpha1.DeletionProtectionTypeAlways, policyv1alpha1.DeletionProtectionTypeCascading},
	}}}
}

// ScopeEntry gives hook, an entry of a rendered ValidatingWebhookConfiguration, the object
// selector (Selector) when it is one of WebhookNames, so that no other object ever calls the
// webhook; other entries are left as they are.
func ScopeEntry(hook map[string]any) error {
	if name, _ := hook["name"].(string); !slices.Contains(WebhookNames, name) {
		return nil
	}
	sel, err := runtime.DefaultUnstructuredConverter.ToUnstructured(Selector())
	if err != nil {
		return err
	}
	hook["objectSelector"] = sel
	return nil
}

// Options configure the webhook.
type Options struct {
	// Enabled is the feature gate ResourcesDeletionProtection: when off every deletion is allowed.
	Enabled bool
	Policy
	// Reader lists pods and PersistentVolumeClaims (the manager's cache).
	Reader client.Reader
	// Metadata lists custom resources; made from Config when nil.
	Metadata metadata.Interface
	Config   *rest.Config
}

// Register serves the webhook on srv.
func Register(srv webhook.Server, o Options) error {
	if o.Metadata == nil {
		m, err := metadata.NewForConfig(o.Config)
		if err != nil {
			return fmt.Errorf("deletion protection: %w", err)
		}
		o.Metadata = m
	}
	mount.Admission(srv, Path, &Handler{Options: o})
	return nil
}

// Handler decides the deletions the webhook is called for.
type Handler struct{ Options }

// Handle allows or refuses one deletion.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if !h.Enabled || req.Operation != admissionv1.Delete || req.SubResource != "" {
		return admission.Allowed("")
	}
	kind, ok := kindOf(req.Kind)
	if !ok {
		return admission.Allowed("")
	}
	if len(req.OldObject.Raw) == 0 {
		// Every API server Kruise supports sends it; without it nothing can be checked.
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("deletion of %s %s: no stored object in the request", req.Kind.Kind, req.Name))
	}
	var old struct {
		metav1.ObjectMeta `json:"metadata"`
		Spec              struct {
			Replicas *int32 `json:"replicas"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(req.OldObject.Raw, &old); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	name := old.Name
	if old.Namespace != "" {
		name = old.Namespace + "/" + old.Name
	}
	s := Subject{Kind: kind, Describe: req.Kind.Kind + " " + name,
		Value: old.Labels[policyv1alpha1.DeletionProtectionKey], Deleting: old.DeletionTimestamp != nil}
	d := Dependents{Replicas: old.Spec.Replicas}
	if h.NeedsDependents(s) {
		var err error
		switch kind {
		case Namespace:
			d, err = h.namespaceDependents(ctx, old.Name)
		case CustomResourceDefinition:
			crd := &apiextv1.CustomResourceDefinition{}
			if err := json.Unmarshal(req.OldObject.Raw, crd); err != nil {
				return admission.Errored(http.StatusBadRequest, err)
			}
			d, err = h.customResources(ctx, crd)
		}
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, fmt.Errorf("deletion protection of %s: %w", s.Describe, err))
		}
	}
	if err := h.Decide(s, d); err != nil {
		logf.FromContext(ctx).Info("deletion refused", "object", s.Describe, "user", req.UserInfo.Username, "reason", err.Error())
		countRefusal(kind, req.Kind.Kind, old.Namespace, old.Name, req.UserInfo.Username)
		return admission.Denied(err.Error())
	}
	return admission.Allowed("")
}

// kindOf says what a requested kind is protected as.
func kindOf(gvk metav1.GroupVersionKind) (Kind, bool) {
	switch gvk.Group + "/" + gvk.Kind {
	case "/Namespace":
		return Namespace, true
	case "/Service", "networking.k8s.io/Ingress":
		return AlwaysOnly, true
	case "apiextensions.k8s.io/CustomResourceDefinition":
		return CustomResourceDefinition, true
	case "apps/Deployment", "apps/ReplicaSet", "apps/StatefulSet",
		"apps.kruise.io/CloneSet", "apps.kruise.io/StatefulSet", "apps.kruise.io/UnitedDeployment":
		return Workload, true
	}
	return 0, false
}

// namespaceDependents counts the namespace's active pods and bound claims.
func (h *Handler) namespaceDependents(ctx context.Context, ns string) (Dependents, error) {
	var d Dependents
	pods := &corev1.PodList{}
	if err := h.Reader.List(ctx, pods, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return d, fmt.Errorf("list pods: %w", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			d.ActivePods++
		}
	}
	claims := &corev1.PersistentVolumeClaimList{}
	if err := h.Reader.List(ctx, claims, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return d, fmt.Errorf("list PersistentVolumeClaims: %w", err)
	}
	for i := range claims.Items {
		c := &claims.Items[i]
		if c.DeletionTimestamp == nil && c.Status.Phase == corev1.ClaimBound {
			d.BoundClaims++
		}
	}
	return d, nil
}

// listPage is how many custom resources one list request reads.
const listPage = 500

// customResources counts the CRD's custom resources not being deleted, in every namespace,
// through the storage version (or another served one when it is not served). Counting stops at
// the end of the first page holding one.
func (h *Handler) customResources(ctx context.Context, crd *apiextv1.CustomResourceDefinition) (Dependents, error) {
	version := ""
	for _, v := range crd.Spec.Versions {
		if v.Served && (version == "" || v.Storage) {
			version = v.Name
		}
	}
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: version, Resource: crd.Spec.Names.Plural}
	d := Dependents{Resource: gvr.GroupResource().String()}
	if version == "" {
		return d, fmt.Errorf("%s serves no version to list its custom resources through", crd.Name)
	}
	opts := metav1.ListOptions{Limit: listPage}
	for {
		list, err := h.Metadata.Resource(gvr).List(ctx, opts)
		if apierrors.IsNotFound(err) {
			return d, nil // not served (names not accepted): no custom resource can exist
		}
		if err != nil {
			return d, fmt.Errorf("list %s: %w", d.Resource, err)
		}
		for i := range list.Items {
			if list.Items[i].DeletionTimestamp == nil {
				d.CustomResources++
			}
		}
		if list.Continue == "" {
			return d, nil
		}
		if d.CustomResources > 0 {
			d.CustomResourcesAtLeast = true
			return d, nil
		}
		opts.Continue = list.Continue
	}
}

// countRefusal counts a refused deletion in OpenKruise's metric for its kind.
func countRefusal(kind Kind, reqKind, namespace, name, user string) {
	switch kind {
	case Namespace:
		openkruisemetrics.NamespaceDeletionRefused(name, user)
	case CustomResourceDefinition:
		openkruisemetrics.CRDDeletionRefused(name, user)
	default:
		openkruisemetrics.WorkloadDeletionRefused(reqKind, namespace, name, user)
	}
}
