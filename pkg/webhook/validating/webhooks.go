package validating

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/webhook/access"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// CloneSetPath is where the CloneSet validating webhook is served.
const CloneSetPath = "/validate-apps-kruise-io-v1alpha1-cloneset"

// Each kind and version has its own webhook, matched exactly (matchPolicy Exact), like the
// defaulting ones: a request is validated in the version it was made in, after defaulting.
//
// +kubebuilder:webhookconfiguration:mutating=false,name=kruise-validating-webhook-configuration
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-cloneset,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=clonesets,verbs=create;update,versions=v1alpha1,name=vcloneset-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-statefulset,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=statefulsets,verbs=create;update,versions=v1alpha1,name=vstatefulset-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1beta1-statefulset,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=statefulsets,verbs=create;update,versions=v1beta1,name=vstatefulset-v1beta1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-sidecarset,mutating=false,failurePolicy=fail,sideEffects=NoneOnDryRun,matchPolicy=Exact,groups=apps.kruise.io,resources=sidecarsets,verbs=create;update,versions=v1alpha1,name=vsidecarset-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1beta1-sidecarset,mutating=false,failurePolicy=fail,sideEffects=NoneOnDryRun,matchPolicy=Exact,groups=apps.kruise.io,resources=sidecarsets,verbs=create;update,versions=v1beta1,name=vsidecarset-v1beta1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-daemonset,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=daemonsets,verbs=create;update,versions=v1alpha1,name=vdaemonset-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1beta1-daemonset,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=daemonsets,verbs=create;update,versions=v1beta1,name=vdaemonset-v1beta1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-broadcastjob,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=broadcastjobs,verbs=create;update,versions=v1alpha1,name=vbroadcastjob-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1beta1-broadcastjob,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=broadcastjobs,verbs=create;update,versions=v1beta1,name=vbroadcastjob-v1beta1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-advancedcronjob,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=advancedcronjobs,verbs=create;update,versions=v1alpha1,name=vadvancedcronjob-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1beta1-advancedcronjob,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=advancedcronjobs,verbs=create;update,versions=v1beta1,name=vadvancedcronjob-v1beta1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-uniteddeployment,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=uniteddeployments,verbs=create;update,versions=v1alpha1,name=vuniteddeployment-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-workloadspread,mutating=false,failurePolicy=fail,sideEffects=NoneOnDryRun,matchPolicy=Exact,groups=apps.kruise.io,resources=workloadspreads,verbs=create;update,versions=v1alpha1,name=vworkloadspread-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-persistentpodstate,mutating=false,failurePolicy=fail,sideEffects=NoneOnDryRun,matchPolicy=Exact,groups=apps.kruise.io,resources=persistentpodstates,verbs=create;update,versions=v1alpha1,name=vpersistentpodstate-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-policy-kruise-io-v1alpha1-podunavailablebudget,mutating=false,failurePolicy=fail,sideEffects=NoneOnDryRun,matchPolicy=Exact,groups=policy.kruise.io,resources=podunavailablebudgets,verbs=create;update,versions=v1alpha1,name=vpodunavailablebudget-v1alpha1.policy.kruise.io,admissionReviewVersions=v1

// Register adds every validating webhook but the ContainerRecreateRequest's
// (RegisterContainerRecreateRequests) to srv; templates checks pod templates (nil: not checked
// beyond the rules of this package); cache reads, normally from the manager's cache, the pods a
// CloneSet's podsToDelete names, the WorkloadSpreads and PersistentPodStates of a namespace (for
// their conflicts) and the workload a WorkloadSpread targets (nil: none of it looked up);
// sidecarSets says what the SidecarSet webhooks read (its zero value: nothing), and its Config and
// Namespace also give the WorkloadSpread and PersistentPodState webhooks the kruise-configuration
// whitelists of custom workloads; budgets lists the PodUnavailableBudgets of a namespace, for
// their conflicts (nil: not checked); distributions says what the ResourceDistribution webhook
// reads and dry-runs; gates register the entries of the SidecarSets, budgets, WorkloadSpreads and
// PersistentPodStates about to be stored.
func Register(srv webhook.Server, scheme *runtime.Scheme, templates PodTemplateChecker, cache client.Reader, sidecarSets SidecarSetOptions,
	budgets client.Reader, distributions ResourceDistributionOptions, gates Gates, checker *access.Checker) {
	mount.Admission(srv, CloneSetPath, admission.WithValidator[*v1alpha1.CloneSet](scheme, cloneSetValidator{templates: templates, pods: cache}))
	registerStatefulSets(srv, scheme, templates, cache, checker)
	registerDaemonSets(srv, scheme, templates)
	registerSidecarSets(srv, scheme, templates, sidecarSets, gates.SidecarSet)
	registerPullJobs(srv, scheme)
	registerNodeImages(srv, scheme)
	registerBroadcastJobs(srv, scheme, templates)
	registerAdvancedCronJobs(srv, scheme, templates)
	registerPodUnavailableBudgets(srv, scheme, budgets, gates.Budget)
	registerUnitedDeployments(srv, scheme, templates)
	registerWorkloadSpreads(srv, scheme, WorkloadSpreadOptions{Reader: cache, Config: sidecarSets.Config,
		Namespace: sidecarSets.Namespace, Templates: templates, Gate: gates.WorkloadSpread, Access: checker})
	registerPersistentPodStates(srv, scheme, PersistentPodStateOptions{Reader: cache, Config: sidecarSets.Config,
		Namespace: sidecarSets.Namespace, Gate: gates.PersistentPodState})
	registerResourceDistributions(srv, scheme, distributions)
	registerPodProbeMarkers(srv, scheme, checker)
	registerEphemeralJobs(srv, scheme, checker)
}

// cloneSetValidator adapts ValidateCloneSet and ValidateCloneSetUpdate to controller-runtime, and
// checks the pod template as the API server would check its pods.
type cloneSetValidator struct {
	templates PodTemplateChecker
	pods      client.Reader
}

// ValidateCreate rejects an invalid new CloneSet.
func (v cloneSetValidator) ValidateCreate(ctx context.Context, obj *v1alpha1.CloneSet) (admission.Warnings, error) {
	errs := ValidateCloneSet(obj)
	if len(errs) == 0 && v.templates != nil {
		errs = v.templates.Check(ctx, obj.Namespace, withClaimVolumes(&obj.Spec.Template, obj.Spec.VolumeClaimTemplates, obj.Name), field.NewPath("spec", "template"))
	}
	return nil, invalid("CloneSet", obj.Name, errs)
}

// ValidateUpdate rejects an invalid CloneSet or a forbidden change; the template is checked again
// only when it changed.
func (v cloneSetValidator) ValidateUpdate(ctx context.Context, oldObj, newObj *v1alpha1.CloneSet) (admission.Warnings, error) {
	errs := ValidateCloneSetUpdate(newObj, oldObj)
	if len(errs) == 0 && v.pods != nil {
		errs = ValidatePodsToDelete(ctx, v.pods, newObj, oldObj)
	}
	if len(errs) == 0 && v.templates != nil && !apiequality.Semantic.DeepEqual(oldObj.Spec.Template, newObj.Spec.Template) {
		errs = v.templates.Check(ctx, newObj.Namespace, withClaimVolumes(&newObj.Spec.Template, newObj.Spec.VolumeClaimTemplates, newObj.Name), field.NewPath("spec", "template"))
	}
	return nil, invalid("CloneSet", newObj.Name, errs)
}

// ValidateDelete allows every deletion (the webhook is not registered for DELETE).
func (cloneSetValidator) ValidateDelete(context.Context, *v1alpha1.CloneSet) (admission.Warnings, error) {
	return nil, nil
}

// Paths of the Advanced StatefulSet validating webhooks, one per served version.
const (
	StatefulSetV1alpha1Path = "/validate-apps-kruise-io-v1alpha1-statefulset"
	StatefulSetV1beta1Path  = "/validate-apps-kruise-io-v1beta1-statefulset"
)

// registerStatefulSets adds the Advanced StatefulSet validating webhooks: a v1alpha1 object is
// converted to v1beta1 (the stored version) and validated as such, so the rules exist once.
func registerStatefulSets(srv webhook.Server, scheme *runtime.Scheme, templates PodTemplateChecker, classes client.Reader, checker *access.Checker) {
	mount.Admission(srv, StatefulSetV1beta1Path, admission.WithValidator[*v1beta1.StatefulSet](scheme,
		statefulSetValidator[*v1beta1.StatefulSet]{templates: templates, classes: classes, access: checker, toV1beta1: same[*v1beta1.StatefulSet]}))
	mount.Admission(srv, StatefulSetV1alpha1Path, admission.WithValidator[*v1alpha1.StatefulSet](scheme,
		statefulSetValidator[*v1alpha1.StatefulSet]{templates: templates, classes: classes, access: checker,
			toV1beta1: toHub[*v1alpha1.StatefulSet, v1beta1.StatefulSet]}))
}

// same is the conversion of a stored-version object to itself.
func same[T any](o T) (T, error) { return o, nil }

// toHub converts a v1alpha1 object to its v1beta1 hub H (the stored version).
func toHub[S interface{ ConvertTo(*H) error }, H any](o S) (*H, error) {
	out := new(H)
	return out, o.ConvertTo(out)
}

// statefulSetValidator adapts ValidateStatefulSet and ValidateStatefulSetUpdate to
// controller-runtime for one version of the StatefulSet, and checks the pod template as the API
// server would check its pods.
type statefulSetValidator[T client.Object] struct {
	templates PodTemplateChecker
	// classes reads StorageClasses, to refuse a claim template that grows under
	// volumeClaimUpdateStrategy OnPodRollingUpdate when its class cannot expand (nil: not checked).
	classes client.Reader
	// access checks that the author may delete the existing claims a Delete retention policy
	// adopts (read through classes; nil: not checked).
	access    *access.Checker
	toV1beta1 func(T) (*v1beta1.StatefulSet, error)
}

// ValidateCreate rejects an invalid new StatefulSet.
func (v statefulSetValidator[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	sts, err := v.convert(obj)
	if err != nil {
		return nil, err
	}
	errs := ValidateStatefulSet(sts)
	if len(errs) == 0 && v.templates != nil {
		errs = v.templates.Check(ctx, sts.Namespace, withClaimVolumes(&sts.Spec.Template, sts.Spec.VolumeClaimTemplates, sts.Name),
			field.NewPath("spec", "template"))
	}
	if err := invalid(statefulSetKind, sts.Name, errs); err != nil {
		return nil, err
	}
	return nil, v.requireClaimAccess(ctx, sts)
}

var statefulSetResource = v1beta1.GroupVersion.WithResource("statefulsets").GroupResource()

// requireClaimAccess refuses sts when its claim retention policy would adopt, and so delete,
// existing claims its author may not delete.
func (v statefulSetValidator[T]) requireClaimAccess(ctx context.Context, sts *v1beta1.StatefulSet) error {
	if v.access == nil || v.classes == nil || !access.DeletesClaims(sts) || len(sts.Spec.VolumeClaimTemplates) == 0 {
		return nil
	}
	var claims corev1.PersistentVolumeClaimList
	if err := v.classes.List(ctx, &claims, client.InNamespace(sts.Namespace)); err != nil {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("could not list the claims of namespace %q to check what the retention policy adopts (%v); retry", sts.Namespace, err))
	}
	return v.access.Require(ctx, statefulSetResource, sts.Name, access.StatefulSetClaims(sts, access.AdoptedClaims(sts, claims.Items))...)
}

// ValidateUpdate rejects an invalid StatefulSet or a forbidden change; the template is checked
// again only when it changed.
func (v statefulSetValidator[T]) ValidateUpdate(ctx context.Context, oldObj, newObj T) (admission.Warnings, error) {
	sts, err := v.convert(newObj)
	if err != nil {
		return nil, err
	}
	old, err := v.convert(oldObj)
	if err != nil {
		return nil, err
	}
	errs := ValidateStatefulSetUpdate(sts, old)
	if len(errs) == 0 && v.classes != nil {
		errs = refusedExpansions(ctx, v.classes, sts, old)
	}
	if len(errs) == 0 && v.templates != nil && !apiequality.Semantic.DeepEqual(old.Spec.Template, sts.Spec.Template) {
		errs = v.templates.Check(ctx, sts.Namespace, withClaimVolumes(&sts.Spec.Template, sts.Spec.VolumeClaimTemplates, sts.Name),
			field.NewPath("spec", "template"))
	}
	if err := invalid(statefulSetKind, sts.Name, errs); err != nil {
		return nil, err
	}
	if apiequality.Semantic.DeepEqual(old.Spec.PersistentVolumeClaimRetentionPolicy, sts.Spec.PersistentVolumeClaimRetentionPolicy) &&
		apiequality.Semantic.DeepEqual(old.Spec.VolumeClaimTemplates, sts.Spec.VolumeClaimTemplates) {
		return nil, nil
	}
	return nil, v.requireClaimAccess(ctx, sts)
}

// ValidateDelete allows every deletion (the webhook is not registered for DELETE).
func (statefulSetValidator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// convert returns obj as v1beta1; an unreadable v1beta1-only annotation of a v1alpha1 object is
// refused at that annotation.
func (v statefulSetValidator[T]) convert(obj T) (*v1beta1.StatefulSet, error) {
	sts, err := v.toV1beta1(obj)
	if err != nil {
		p := field.NewPath("metadata", "annotations").Key(v1alpha1.ConversionV1beta1OnlyAnnotation)
		return nil, invalid(statefulSetKind, obj.GetName(), field.ErrorList{field.Invalid(p, field.OmitValueType{}, err.Error())})
	}
	return sts, nil
}

// invalid turns errs about the apps.kruise.io object kind/name into the API's Invalid status
// (HTTP 422, one cause per field), or nil.
func invalid(kind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind(kind).GroupKind(), name, errs)
}
