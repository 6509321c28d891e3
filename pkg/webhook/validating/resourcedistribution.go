package validating

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/distributionrules"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// ResourceDistributionPath is where the ResourceDistribution validating webhook is served.
const ResourceDistributionPath = "/validate-apps-kruise-io-v1alpha1-resourcedistribution"

// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-resourcedistribution,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=resourcedistributions,verbs=create;update,versions=v1alpha1,name=vresourcedistribution-v1alpha1.apps.kruise.io,admissionReviewVersions=v1

// ResourceDistributionOptions are what the ResourceDistribution webhook reads and writes.
type ResourceDistributionOptions struct {
	// Reader lists namespaces (the manager's cache) and, uncached, the objects of the resource's
	// kind and name (their metadata) for conflicts; nil: neither checked.
	Reader, Live client.Reader
	// DryRun creates the resource in Namespace as a dry run, so that the API server validates its
	// content; nil: not checked.
	DryRun    client.Writer
	Namespace string
}

// registerResourceDistributions adds the ResourceDistribution validating webhook.
func registerResourceDistributions(srv webhook.Server, scheme *runtime.Scheme, opts ResourceDistributionOptions) {
	mount.Admission(srv, ResourceDistributionPath, admission.WithValidator[*v1alpha1.ResourceDistribution](scheme, resourceDistributionValidator{opts}))
}

// ValidateResourceDistribution reports the problems of a ResourceDistribution that need nothing but
// the object (and, for an update, the old one), each at its field's path, as OpenKruise v1.9.0
// decides them: spec.resource is a v1 Secret or ConfigMap whose metadata is valid (its name a DNS
// subdomain); on update its apiVersion, kind and name do not change. Kruise's additions: the
// namespaces of the target lists are valid namespace names, and the label selector is valid.
func ValidateResourceDistribution(obj, old *v1alpha1.ResourceDistribution) field.ErrorList {
	path := field.NewPath("spec", "resource")
	res, err := distributionrules.Decode(obj.Spec.Resource.Raw)
	if err != nil {
		return field.ErrorList{field.Invalid(path, "", err.Error())}
	}
	errs := apimachineryvalidation.ValidateObjectMeta(metaOf(res), false, apimachineryvalidation.NameIsDNSSubdomain, path.Child("metadata"))
	if old != nil {
		if was, err := distributionrules.Decode(old.Spec.Resource.Raw); err == nil &&
			(was.GetName() != res.GetName() || !apiequality.Semantic.DeepEqual(was.GroupVersionKind(), res.GroupVersionKind())) {
			errs = append(errs, field.Invalid(path, fmt.Sprintf("%s %s", res.GetKind(), res.GetName()),
				fmt.Sprintf("apiVersion, kind and name are immutable (was %s %s %s)", was.GetAPIVersion(), was.GetKind(), was.GetName())))
		}
	}
	targets := field.NewPath("spec", "targets")
	for _, l := range []struct {
		name string
		list []v1alpha1.ResourceDistributionNamespace
	}{{"includedNamespaces", obj.Spec.Targets.IncludedNamespaces.List}, {"excludedNamespaces", obj.Spec.Targets.ExcludedNamespaces.List}} {
		for i, ns := range l.list {
			for _, msg := range apimachineryvalidation.ValidateNamespaceName(ns.Name, false) {
				errs = append(errs, field.Invalid(targets.Child(l.name, "list").Index(i).Child("name"), ns.Name, msg))
			}
		}
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(&obj.Spec.Targets.NamespaceLabelSelector,
		metav1validation.LabelSelectorValidationOptions{}, targets.Child("namespaceLabelSelector"))...)
	return errs
}

// metaOf is the resource's metadata as the API server would validate it (no namespace).
func metaOf(res *unstructured.Unstructured) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Name: res.GetName(), GenerateName: res.GetGenerateName(), Labels: res.GetLabels(),
		Annotations: res.GetAnnotations(), Finalizers: res.GetFinalizers(), OwnerReferences: res.GetOwnerReferences()}
}

type resourceDistributionValidator struct{ opts ResourceDistributionOptions }

func (v resourceDistributionValidator) ValidateCreate(ctx context.Context, obj *v1alpha1.ResourceDistribution) (admission.Warnings, error) {
	return nil, v.validate(ctx, obj, nil)
}

func (v resourceDistributionValidator) ValidateUpdate(ctx context.Context, old, obj *v1alpha1.ResourceDistribution) (admission.Warnings, error) {
	return nil, v.validate(ctx, obj, old)
}

func (resourceDistributionValidator) ValidateDelete(context.Context, *v1alpha1.ResourceDistribution) (admission.Warnings, error) {
	return nil, nil
}

// validate adds to ValidateResourceDistribution what needs the cluster: OpenKruise's refusal of a
// resource that objects of the same kind and name not controlled by the distribution already hold
// in its target namespaces, and (Kruise's) the API server's validation of the resource's content,
// by a dry-run creation.
func (v resourceDistributionValidator) validate(ctx context.Context, obj, old *v1alpha1.ResourceDistribution) error {
	errs := ValidateResourceDistribution(obj, old)
	if len(errs) > 0 {
		return errs.ToAggregate()
	}
	res, _ := distributionrules.Decode(obj.Spec.Resource.Raw)
	if v.opts.Reader != nil && v.opts.Live != nil {
		conflicts, err := v.conflicts(ctx, obj, res)
		if err != nil {
			return err
		}
		if len(conflicts) > 0 {
			errs = append(errs, field.Invalid(field.NewPath("spec", "targets"), conflicts,
				fmt.Sprintf("a %s named %s not controlled by this ResourceDistribution already exists in namespaces %v", res.GetKind(), res.GetName(), conflicts)))
		}
	}
	if v.opts.DryRun != nil {
		probe := res.DeepCopy()
		probe.SetNamespace(v.opts.Namespace)
		probe.SetName(fmt.Sprintf("%.240s-%s", res.GetName(), utilrand.String(5)))
		if err := v.opts.DryRun.Create(ctx, probe, client.DryRunAll); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("spec", "resource"), res.GetName(), fmt.Sprintf("the API server refuses it: %v", err)))
		}
	}
	return errs.ToAggregate()
}

// conflicts are the target namespaces holding an object of the resource's kind and name that the
// distribution does not control.
func (v resourceDistributionValidator) conflicts(ctx context.Context, obj *v1alpha1.ResourceDistribution, res *unstructured.Unstructured) ([]string, error) {
	namespaces := &corev1.NamespaceList{}
	if err := v.opts.Reader.List(ctx, namespaces); err != nil {
		return nil, err
	}
	targets, _, err := distributionrules.Targets(obj.Spec.Targets, namespaces.Items)
	if err != nil {
		return nil, err
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(res.GroupVersionKind().GroupVersion().WithKind(res.GetKind() + "List"))
	if err := v.opts.Live.List(ctx, list, client.MatchingFields{"metadata.name": res.GetName()}); err != nil {
		return nil, err
	}
	var out []string
	for i := range list.Items {
		m := &list.Items[i]
		if slices.Contains(targets, m.Namespace) && !distributionrules.ControlledBy(m, obj) {
			out = append(out, m.Namespace)
		}
	}
	slices.Sort(out)
	return out, nil
}
