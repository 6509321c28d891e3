package validating

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
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

	"github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/pkg/webhook/access"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// PodProbeMarkerPath is where the PodProbeMarker validating webhook is served.
const PodProbeMarkerPath = "/validate-apps-kruise-io-v1alpha1-podprobemarker"

// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-podprobemarker,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=podprobemarkers,verbs=create;update,versions=v1alpha1,name=vpodprobemarker-v1alpha1.apps.kruise.io,admissionReviewVersions=v1

const podProbeMarkerKind = "PodProbeMarker"

// nativePodConditions are the pod conditions the kubelet and scheduler own: no probe is named so.
var nativePodConditions = map[string]bool{string(corev1.PodScheduled): true, string(corev1.PodReady): true,
	string(corev1.PodInitialized): true, string(corev1.ContainersReady): true, string(corev1.PodReadyToStartContainers): true,
	string(corev1.DisruptionTarget): true, string(corev1.PodResizePending): true, string(corev1.PodResizeInProgress): true}

// reservedPodConditions are the pod conditions a probe may not write: Kubernetes' own and those
// Kruise's controllers and readiness gates own (a marker writing one would take other teams' pods
// out of service or let them through gates they have not passed).
var reservedPodConditions = map[string]bool{string(pub.InPlaceUpdateReady): true, string(pub.KruisePodReadyConditionType): true,
	string(sidecarrules.UpgradableCondition): true, "SidecarTerminated": true} // SidecarTerminated: pkg/controller/sidecarterminator

// reservedMarkDomains are the label and annotation prefixes a probe may not mark pods with:
// Kubernetes' and Kruise's own (a mark such as apps.kruise.io/specified-delete or
// pub.kruise.io/no-protect makes Kruise delete a pod or drop its protection).
const reservedMarkDomainsMessage = "must not be under kubernetes.io/, k8s.io/ or a kruise.io domain: those keys drive Kubernetes and Kruise themselves"

func reservedMark(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	prefix = strings.ToLower(prefix)
	return prefix == "kubernetes.io" || prefix == "k8s.io" || prefix == "kruise.io" || strings.HasSuffix(prefix, ".kruise.io")
}

func registerPodProbeMarkers(srv webhook.Server, scheme *runtime.Scheme, checker *access.Checker) {
	mount.Admission(srv, PodProbeMarkerPath, admission.WithValidator[*v1alpha1.PodProbeMarker](scheme, podProbeMarkerValidator{access: checker}))
}

var podProbeMarkerResource = v1alpha1.GroupVersion.WithResource("podprobemarkers").GroupResource()

// ValidatePodProbeMarker reports every problem of a PodProbeMarker, each at its field's path, by
// OpenKruise v1.9.0's rules: a valid, non-empty selector; at least one probe; each probe with a
// unique name without '#' that is not a pod condition of Kubernetes' own, a container name,
// exactly one of exec (with a command), httpGet (path, port, scheme HTTP or HTTPS, header names)
// or tcpSocket (port), non-negative timings, a podConditionType or a markerPolicy (the condition
// type a valid label name, unique among the probes), policies with a unique state Succeeded or
// Failed and valid labels and annotations, not both empty. gRPC probes are refused, as OpenKruise
// refuses them (kruise-daemon does not run them), and so is a probe's host. Kruise also refuses
// a podConditionType that Kubernetes or Kruise owns and marks under their prefixes.
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
			if nativePodConditions[t] || reservedPodConditions[t] {
				errs = append(errs, field.Invalid(pp.Child("podConditionType"), t, "is a pod condition Kubernetes or Kruise owns: name a condition of your own"))
			}
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
			errs = append(errs, validateMarkKeys(policy.Labels, mp.Child("labels"))...)
			errs = append(errs, validateMarkKeys(policy.Annotations, mp.Child("annotations"))...)
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

// validateMarkKeys refuses marks under Kubernetes' and Kruise's own prefixes, in key order.
func validateMarkKeys(marks map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(marks)) {
		if reservedMark(k) {
			errs = append(errs, field.Invalid(path.Key(k), k, reservedMarkDomainsMessage))
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
		if h.Host != "" {
			errs = append(errs, field.Forbidden(hp.Child("host"), hostForbidden))
		}
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
		if p.TCPSocket.Host != "" {
			errs = append(errs, field.Forbidden(path.Child("tcpSocket", "host"), hostForbidden))
		}
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

// hostForbidden: kruise-daemon runs on each node's network, so a host would let a marker's author
// reach any address from every node; it probes the pod's own IP (OpenKruise refuses a host too).
const hostForbidden = "must not be set: the probe reaches the pod's own IP (kruise-daemon runs on the node's network)"

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

// podProbeMarkerValidator also checks that the author may do what the marker makes Kruise do
// (pkg/webhook/access): patch the selected pods and their status, and exec into them for an exec
// probe.
type podProbeMarkerValidator struct {
	access *access.Checker
}

// ValidateCreate rejects an invalid new PodProbeMarker, or one whose author lacks the rights it uses.
func (v podProbeMarkerValidator) ValidateCreate(ctx context.Context, obj *v1alpha1.PodProbeMarker) (admission.Warnings, error) {
	if err := invalid(podProbeMarkerKind, obj.Name, ValidatePodProbeMarker(obj)); err != nil {
		return nil, err
	}
	return PodProbeMarkerWarnings(obj), v.access.Require(ctx, podProbeMarkerResource, obj.Name, access.PodProbeMarker(obj)...)
}

// PodProbeMarkerWarnings are the admission warnings of a valid PodProbeMarker: the fields it
// accepts, as OpenKruise does, that change nothing.
func PodProbeMarkerWarnings(obj *v1alpha1.PodProbeMarker) admission.Warnings {
	var out admission.Warnings
	for i, p := range obj.Spec.Probes {
		if p.Probe.TerminationGracePeriodSeconds != nil {
			out = append(out, fmt.Sprintf("%s: has no effect, a PodProbeMarker's probe restarts and ends nothing (OpenKruise ignores it too)",
				field.NewPath("spec", "probes").Index(i).Child("probe", "terminationGracePeriodSeconds")))
		}
	}
	return out
}

// ValidateUpdate rejects an invalid PodProbeMarker or a changed selector (immutable, as in
// OpenKruise); an update that leaves the spec as it is (finalizers, labels) passes. A changed
// spec is checked against the updater's rights.
func (v podProbeMarkerValidator) ValidateUpdate(ctx context.Context, oldObj, newObj *v1alpha1.PodProbeMarker) (admission.Warnings, error) {
	if apiequality.Semantic.DeepEqual(oldObj.Spec, newObj.Spec) {
		return nil, nil
	}
	errs := ValidatePodProbeMarker(newObj)
	if !apiequality.Semantic.DeepEqual(oldObj.Spec.Selector, newObj.Spec.Selector) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "selector"), fmt.Sprintf("is immutable (was %v)", oldObj.Spec.Selector)))
	}
	if err := invalid(podProbeMarkerKind, newObj.Name, errs); err != nil {
		return nil, err
	}
	return PodProbeMarkerWarnings(newObj), v.access.Require(ctx, podProbeMarkerResource, newObj.Name, access.PodProbeMarker(newObj)...)
}

// ValidateDelete allows every deletion (the webhook is not registered for DELETE).
func (podProbeMarkerValidator) ValidateDelete(context.Context, *v1alpha1.PodProbeMarker) (admission.Warnings, error) {
	return nil, nil
}
