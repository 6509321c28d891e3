package validating

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// PodProbeMarkerPath is where the PodProbeMarker validating webhook is served.
const PodProbeMarkerPath = "/validate-apps-kruise-io-v1alpha1-podprobemarker"

// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-podprobemarker,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=podprobemarkers,verbs=create;update,versions=v1alpha1,name=vpodprobemarker-v1alpha1.apps.kruise.io,admissionReviewVersions=v1

const podProbeMarkerKind = "PodProbeMarker"

// nativePodConditions are the pod conditions the kubelet and scheduler own: no probe is named so.
var nativePodConditions = map[string]bool{string(corev1.PodScheduled): true, string(corev1.PodReady): true,
	string(corev1.PodInitialized): true, string(corev1.ContainersReady): true, string(corev1.PodReadyToStartContainers): true,
	string(corev1.DisruptionTarget): true, string(corev1.PodResizePending): true, string(corev1.PodResizeInProgress): true}

func registerPodProbeMarkers(srv webhook.Server, scheme *runtime.Scheme) {
	srv.Register(PodProbeMarkerPath, admission.WithValidator[*v1alpha1.PodProbeMarker](scheme, podProbeMarkerValidator{}))
}

// ValidatePodProbeMarker reports every problem of a PodProbeMarker, each at its field's path, by
// OpenKruise v1.9.0's rules: a valid, non-empty selector; at least one probe; each probe with a
// unique name without '#' that is not a pod condition of Kubernetes' own, a container name,
// exactly one of exec (with a command), httpGet (path, port, scheme HTTP or HTTPS, header names)
// or tcpSocket (port), non-negative timings, a podConditionType or a markerPolicy (the condition
// type a valid label name, unique among the probes), policies with a unique state Succeeded or
// Failed and valid labels and annotations, not both empty. gRPC probes are refused, as OpenKruise
// refuses them (kruise-daemon does not run them).
func ValidatePodProbeMarker(obj *v1alpha1.PodProbeMarker) field.ErrorList {
	spec := &obj.Spec
	path := field.NewPath("spec")
	var errs field.ErrorList
	if sel := spec.Selector; sel == nil || len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		errs = append(errs, field.Required(path.Child("selector"), "a PodProbeMarker needs a non-empty selector"))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, path.Child("selector"))...)
	}
	if len(spec.Probes) == 0 {
		errs = append(errs, field.Required(path.Child("probes"), "a PodProbeMarker needs at least one probe"))
	}
	names, conditions := map[string]bool{}, map[string]bool{}
	for i, p := range spec.Probes {
		pp := path.Child("probes").Index(i)
		switch {
		case p.Name == "":
			errs = append(errs, field.Required(pp.Child("name"), ""))
		case strings.Contains(p.Name, "#"):
			errs = append(errs, field.Invalid(pp.Child("name"), p.Name, "must not contain '#'"))
		case nativePodConditions[p.Name]:
			errs = append(errs, field.Invalid(pp.Child("name"), p.Name, "is a pod condition of Kubernetes' own"))
		case names[p.Name]:
			errs = append(errs, field.Duplicate(pp.Child("name"), p.Name))
		}
		names[p.Name] = true
		if p.ContainerName == "" {
			errs = append(errs, field.Required(pp.Child("containerName"), "the container the probe runs in (exec) or for"))
		}
		errs = append(errs, validateMarkerProbe(&p.Probe, pp.Child("probe"))...)
		if p.PodConditionType == "" && len(p.MarkerPolicy) == 0 {
			errs = append(errs, field.Required(pp.Child("podConditionType"), "set podConditionType or markerPolicy: what the probe's result marks"))
		}
		if t := p.PodConditionType; t != "" {
			if conditions[t] {
				errs = append(errs, field.Duplicate(pp.Child("podConditionType"), t))
			}
			conditions[t] = true
			errs = append(errs, metav1validation.ValidateLabelName(t, pp.Child("podConditionType"))...)
		}
		states := map[v1alpha1.PodProbeMarkerState]bool{}
		for j, policy := range p.MarkerPolicy {
			mp := pp.Child("markerPolicy").Index(j)
			if policy.State != v1alpha1.PodProbeMarkerStateSucceeded && policy.State != v1alpha1.PodProbeMarkerStateFailed {
				errs = append(errs, field.NotSupported(mp.Child("state"), policy.State, []string{"Succeeded", "Failed"}))
			} else if states[policy.State] {
				errs = append(errs, field.Duplicate(mp.Child("state"), policy.State))
			}
			states[policy.State] = true
			if len(policy.Labels)+len(policy.Annotations) == 0 {
				errs = append(errs, field.Required(mp, "labels or annotations to set"))
			}
			errs = append(errs, metav1validation.ValidateLabels(policy.Labels, mp.Child("labels"))...)
			errs = append(errs, validateAnnotationKeys(policy.Annotations, mp.Child("annotations"))...)
		}
	}
	return errs
}

func validateAnnotationKeys(annotations map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k := range annotations {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(path, k, msg))
		}
	}
	return errs
}

func validateMarkerProbe(p *v1alpha1.PodProbeMarkerProbeSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	handlers := 0
	if p.Exec != nil {
		handlers++
		if len(p.Exec.Command) == 0 {
			errs = append(errs, field.Required(path.Child("exec", "command"), ""))
		}
	}
	if h := p.HTTPGet; h != nil {
		handlers++
		hp := path.Child("httpGet")
		if h.Path == "" {
			errs = append(errs, field.Required(hp.Child("path"), ""))
		} else if _, err := url.Parse(h.Path); err != nil {
			errs = append(errs, field.Invalid(hp.Child("path"), h.Path, "must be a valid URL path"))
		}
		errs = append(errs, validatePortNumOrName(h.Port, hp.Child("port"))...)
		if h.Scheme != corev1.URISchemeHTTP && h.Scheme != corev1.URISchemeHTTPS {
			errs = append(errs, field.NotSupported(hp.Child("scheme"), h.Scheme, []string{"HTTP", "HTTPS"}))
		}
		for k, hdr := range h.HTTPHeaders {
			for _, msg := range validation.IsHTTPHeaderName(hdr.Name) {
				errs = append(errs, field.Invalid(hp.Child("httpHeaders").Index(k).Child("name"), hdr.Name, msg))
			}
		}
	}
	if p.TCPSocket != nil {
		handlers++
		errs = append(errs, validatePortNumOrName(p.TCPSocket.Port, path.Child("tcpSocket", "port"))...)
	}
	if p.GRPC != nil {
		errs = append(errs, field.Forbidden(path.Child("grpc"), "gRPC probes are not supported by PodProbeMarker (OpenKruise v1.9.0 refuses them too): use exec, httpGet or tcpSocket"))
	}
	if handlers == 0 && p.GRPC == nil {
		errs = append(errs, field.Required(path, "one of exec, httpGet or tcpSocket"))
	}
	if handlers > 1 {
		errs = append(errs, field.Forbidden(path, "only one of exec, httpGet or tcpSocket may be set"))
	}
	for _, t := range []struct {
		name string
		v    int32
	}{{"initialDelaySeconds", p.InitialDelaySeconds}, {"timeoutSeconds", p.TimeoutSeconds}, {"periodSeconds", p.PeriodSeconds},
		{"successThreshold", p.SuccessThreshold}, {"failureThreshold", p.FailureThreshold}} {
		if t.v < 0 {
			errs = append(errs, field.Invalid(path.Child(t.name), t.v, "must be greater than or equal to 0"))
		}
	}
	return errs
}

func validatePortNumOrName(port intstr.IntOrString, path *field.Path) field.ErrorList {
	var msgs []string
	if port.Type == intstr.Int {
		msgs = validation.IsValidPortNum(port.IntValue())
	} else {
		msgs = validation.IsValidPortName(port.StrVal)
	}
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, port.String(), msg))
	}
	return errs
}

type podProbeMarkerValidator struct{}

// ValidateCreate rejects an invalid new PodProbeMarker.
func (podProbeMarkerValidator) ValidateCreate(_ context.Context, obj *v1alpha1.PodProbeMarker) (admission.Warnings, error) {
	return nil, invalid(podProbeMarkerKind, obj.Name, ValidatePodProbeMarker(obj))
}

// ValidateUpdate rejects an invalid PodProbeMarker or a changed selector (immutable, as in
// OpenKruise); an update that leaves the spec as it is (finalizers, labels) passes.
func (podProbeMarkerValidator) ValidateUpdate(_ context.Context, oldObj, newObj *v1alpha1.PodProbeMarker) (admission.Warnings, error) {
	if apiequality.Semantic.DeepEqual(oldObj.Spec, newObj.Spec) {
		return nil, nil
	}
	errs := ValidatePodProbeMarker(newObj)
	if !apiequality.Semantic.DeepEqual(oldObj.Spec.Selector, newObj.Spec.Selector) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "selector"), fmt.Sprintf("is immutable (was %v)", oldObj.Spec.Selector)))
	}
	return nil, invalid(podProbeMarkerKind, newObj.Name, errs)
}

// ValidateDelete allows every deletion (the webhook is not registered for DELETE).
func (podProbeMarkerValidator) ValidateDelete(context.Context, *v1alpha1.PodProbeMarker) (admission.Warnings, error) {
	return nil, nil
}
