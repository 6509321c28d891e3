package validating

import (
	"context"
	"errors"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// PodTemplateChecker validates a workload's pod template as the API server validates pods.
type PodTemplateChecker interface {
	// Check returns the template's errors, with paths under path (e.g. spec.template).
	Check(ctx context.Context, namespace string, tmpl *corev1.PodTemplateSpec, path *field.Path) field.ErrorList
}

// DryRunPodChecker validates a pod template with a server-side dry-run create of a pod made from it,
// so that Kruise refuses exactly what the API server's own pod validation refuses, without
// importing k8s.io/kubernetes. Only the API server's Invalid answers become errors: a quota, a
// Pod Security policy, a missing service account or an unreachable webhook concern the pods at
// creation time (as for a Deployment), not the workload's validity, so they let the workload through.
type DryRunPodChecker struct {
	Client client.Client
}

// +kubebuilder:rbac:groups="",resources=pods,verbs=create

// Check implements PodTemplateChecker.
func (d DryRunPodChecker) Check(ctx context.Context, namespace string, tmpl *corev1.PodTemplateSpec, path *field.Path) field.ErrorList {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "kruise-template-check-", Namespace: namespace,
			Labels: tmpl.Labels, Annotations: tmpl.Annotations},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	err := d.Client.Create(ctx, pod, client.DryRunAll)
	var status apierrors.APIStatus
	if err == nil || !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		if err != nil && !apierrors.IsInvalid(err) {
			logf.FromContext(ctx).V(1).Info("pod template dry run not conclusive; not refusing for it", "error", err.Error())
		}
		return nil
	}
	var errs field.ErrorList
	for _, c := range status.Status().Details.Causes {
		if c.Field == "" || strings.HasPrefix(c.Field, "metadata.name") || strings.HasPrefix(c.Field, "metadata.generateName") ||
			strings.HasPrefix(c.Field, "metadata.namespace") {
			continue // the check pod's own identity, not the template's
		}
		errs = append(errs, causeError(path, c))
	}
	return errs
}

// causeError turns one cause of the API server's Invalid answer about the check pod into an error
// at the same field of the template.
func causeError(path *field.Path, c metav1.StatusCause) *field.Error {
	typ := field.ErrorType(c.Type)
	detail := strings.TrimPrefix(strings.TrimPrefix(c.Message, typ.String()), ": ")
	if strings.HasPrefix(typ.String(), "<unknown") { // not a field.ErrorType this client knows
		typ, detail = field.ErrorTypeInvalid, c.Message
	}
	return &field.Error{Type: typ, Field: path.String() + "." + c.Field, BadValue: field.OmitValueType{}, Detail: detail}
}

// withClaimVolumes returns a workload's template as its pods get it: with a volume for each of its
// claim templates (the controller mounts each claim as the volume named after its template,
// replacing a template volume of that name), so containers may mount them. owner names the
// workload (the claims' names only need to be valid).
func withClaimVolumes(tmpl *corev1.PodTemplateSpec, claims []corev1.PersistentVolumeClaim, owner string) *corev1.PodTemplateSpec {
	if len(claims) == 0 {
		return tmpl
	}
	tmpl = tmpl.DeepCopy()
	for _, c := range claims {
		tmpl.Spec.Volumes = slices.DeleteFunc(tmpl.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == c.Name })
		tmpl.Spec.Volumes = append(tmpl.Spec.Volumes, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name + "-" + owner}}})
	}
	return tmpl
}
