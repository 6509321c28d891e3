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
	"github.com/kruise-ng/kruise/pkg/webhook/access"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-containerrecreaterequest,mutating=false,failurePolicy=fail,sideEffects=NoneOnDryRun,matchPolicy=Exact,groups=apps.kruise.io,resources=containerrecreaterequests,verbs=create;update,versions=v1alpha1,name=vcontainerrecreaterequest-v1alpha1.apps.kruise.io,admissionReviewVersions=v1

// ValidateContainerRecreateRequestSpec checks a request's spec (the pod-dependent checks are the
// mutating webhook's, which reads the pod).
func ValidateContainerRecreateRequestSpec(spec *v1alpha1.ContainerRecreateRequestSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.PodName == "" {
		errs = append(errs, field.Required(p.Child("podName"), "the pod whose containers to recreate"))
	}
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), "at least one container"))
	}
	seen := map[string]bool{}
	for i, c := range spec.Containers {
		fp := p.Child("containers").Index(i).Child("name")
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(fp, "a container name"))
		case seen[c.Name]:
			errs = append(errs, field.Duplicate(fp, c.Name))
		}
		seen[c.Name] = true
		if ps := c.PreStop; ps != nil {
			n := 0
			for _, set := range []bool{ps.Exec != nil, ps.HTTPGet != nil, ps.TCPSocket != nil} {
				if set {
					n++
				}
			}
			if n > 1 {
				errs = append(errs, field.Forbidden(p.Child("containers").Index(i).Child("preStop"), "may set only one of exec, httpGet and tcpSocket"))
			}
		}
	}
	if s := spec.Strategy; s != nil {
		sp := p.Child("strategy")
		switch s.FailurePolicy {
		case "", v1alpha1.ContainerRecreateRequestFailurePolicyFail, v1alpha1.ContainerRecreateRequestFailurePolicyIgnore:
		default:
			errs = append(errs, field.NotSupported(sp.Child("failurePolicy"), s.FailurePolicy, []string{"Fail", "Ignore"}))
		}
		if g := s.TerminationGracePeriodSeconds; g != nil && *g < 0 {
			errs = append(errs, field.Invalid(sp.Child("terminationGracePeriodSeconds"), *g, "must be at least 0"))
		}
		if g := s.UnreadyGracePeriodSeconds; g != nil && *g < 0 {
			errs = append(errs, field.Invalid(sp.Child("unreadyGracePeriodSeconds"), *g, "must be at least 0"))
		}
		if s.MinStartedSeconds < 0 {
			errs = append(errs, field.Invalid(sp.Child("minStartedSeconds"), s.MinStartedSeconds, "must be at least 0"))
		}
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), *d, "must be positive"))
	}
	if t := spec.TTLSecondsAfterFinished; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(p.Child("ttlSecondsAfterFinished"), *t, "must be at least 0"))
	}
	return errs
}

var crrResource = v1alpha1.GroupVersion.WithResource("containerrecreaterequests").GroupResource()

// RestartBudget is the PodUnavailableBudget side of a restart (budgetguard.Handler): whether the
// budget that guards pod lets its containers restart now, recording the restart when it does
// (nothing recorded on a dry run); reason explains a refusal.
type RestartBudget interface {
	AdmitRestart(ctx context.Context, pod *corev1.Pod, dryRun bool) (allowed bool, reason string, err error)
}

// ContainerRecreateRequestOptions say what the ContainerRecreateRequest webhook checks beyond the
// spec: the author's right to delete the pod (Access; nil: not checked), and the pod's budget
// (Budget, reading the pod through Pods; either nil: not asked).
type ContainerRecreateRequestOptions struct {
	Access *access.Checker
	Pods   client.Reader
	Budget RestartBudget
}

// RegisterContainerRecreateRequests adds the ContainerRecreateRequest validating webhook to srv.
func RegisterContainerRecreateRequests(srv webhook.Server, scheme *runtime.Scheme, o ContainerRecreateRequestOptions) {
	mount.Admission(srv, "/validate-apps-kruise-io-v1alpha1-containerrecreaterequest",
		admission.WithValidator[*v1alpha1.ContainerRecreateRequest](scheme, crrValidator(o)))
}

// crrValidator also checks that the author may delete the pod (a restart of its containers is a
// disruption, as a deletion is), then that the pod's PodUnavailableBudget allows one more pod out
// of service: a refusal answers 429 (retry later), as a refused eviction does. The spec is
// immutable, so only a create is checked.
type crrValidator ContainerRecreateRequestOptions

func (v crrValidator) ValidateCreate(ctx context.Context, crr *v1alpha1.ContainerRecreateRequest) (admission.Warnings, error) {
	if err := invalid("ContainerRecreateRequest", crr.Name, ValidateContainerRecreateRequestSpec(&crr.Spec, field.NewPath("spec"))); err != nil {
		return nil, err
	}
	if err := v.Access.Require(ctx, crrResource, crr.Name, access.ContainerRecreateRequest(crr)...); err != nil {
		return nil, err
	}
	return nil, v.admitRestart(ctx, crr)
}

// admitRestart asks the budget of the request's pod, as the mutating webhook found it (its
// pod-uid label): a pod recreated since is refused, so that no budget is charged for another pod.
func (v crrValidator) admitRestart(ctx context.Context, crr *v1alpha1.ContainerRecreateRequest) error {
	if v.Budget == nil || v.Pods == nil {
		return nil
	}
	pod := &corev1.Pod{}
	if err := v.Pods.Get(ctx, client.ObjectKey{Namespace: crr.Namespace, Name: crr.Spec.PodName}, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return invalid("ContainerRecreateRequest", crr.Name, field.ErrorList{field.NotFound(field.NewPath("spec", "podName"), crr.Spec.PodName)})
		}
		return apierrors.NewServiceUnavailable(fmt.Sprintf("read pod %s: %v; retry", crr.Spec.PodName, err))
	}
	if uid := crr.Labels[v1alpha1.ContainerRecreateRequestPodUIDKey]; uid != "" && uid != string(pod.UID) {
		return invalid("ContainerRecreateRequest", crr.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "podName"), crr.Spec.PodName,
			"the pod was recreated while the request was admitted; retry")})
	}
	dryRun := false
	if req, err := admission.RequestFromContext(ctx); err == nil && req.DryRun != nil {
		dryRun = *req.DryRun
	}
	ok, reason, err := v.Budget.AdmitRestart(ctx, pod, dryRun)
	switch {
	case err != nil:
		return apierrors.NewServiceUnavailable(fmt.Sprintf("ask the PodUnavailableBudget of pod %s: %v; retry", pod.Name, err))
	case !ok:
		return apierrors.NewTooManyRequests(fmt.Sprintf("restart of pod %s/%s refused: %s; retry later", pod.Namespace, pod.Name, reason), 0)
	}
	return nil
}

func (crrValidator) ValidateUpdate(_ context.Context, oldCRR, crr *v1alpha1.ContainerRecreateRequest) (admission.Warnings, error) {
	if !apiequality.Semantic.DeepEqual(oldCRR.Spec, crr.Spec) {
		return nil, invalid("ContainerRecreateRequest", crr.Name, field.ErrorList{field.Forbidden(field.NewPath("spec"), "is immutable; create a new request")})
	}
	if errs := validateCRRMetadataUpdate(oldCRR, crr); len(errs) > 0 {
		return nil, invalid("ContainerRecreateRequest", crr.Name, errs)
	}
	return nil, nil
}

func (crrValidator) ValidateDelete(context.Context, *v1alpha1.ContainerRecreateRequest) (admission.Warnings, error) {
	return nil, nil
}

// validateCRRMetadataUpdate keeps what ties a request to its pod as it was made (as OpenKruise):
// the pod-uid and node-name labels, and the unready-acquired annotation once set.
func validateCRRMetadataUpdate(old, crr *v1alpha1.ContainerRecreateRequest) field.ErrorList {
	var errs field.ErrorList
	labels := field.NewPath("metadata", "labels")
	for _, k := range []string{v1alpha1.ContainerRecreateRequestPodUIDKey, v1alpha1.ContainerRecreateRequestNodeNameKey} {
		if old.Labels[k] != crr.Labels[k] {
			errs = append(errs, field.Forbidden(labels.Key(k), "is immutable"))
		}
	}
	k := v1alpha1.ContainerRecreateRequestUnreadyAcquiredKey
	if v := old.Annotations[k]; v != "" && crr.Annotations[k] != v {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations").Key(k), "is immutable once set"))
	}
	return errs
}
