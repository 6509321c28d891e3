package validating

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// The StatefulSet's claim rules: each claim template must make a claim the API server accepts
// (the controller creates one per pod from it), and once stored it may change only in size.

// validateClaimSpecs checks what the API server requires of a claim's spec, so that a claim
// template no claim could be made from is refused when it is written rather than when the first
// pod is: at least one access mode, all known, ReadWriteOncePod alone; a positive storage request;
// a known volumeMode; a storage class name that is a DNS subdomain; a valid selector.
func validateClaimSpecs(claims []corev1.PersistentVolumeClaim, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range claims {
		sp := p.Index(i).Child("spec")
		spec := &claims[i].Spec
		errs = append(errs, validateAccessModes(spec.AccessModes, sp.Child("accessModes"))...)
		storage, ok := spec.Resources.Requests[corev1.ResourceStorage]
		rp := sp.Child("resources", "requests").Key(string(corev1.ResourceStorage))
		switch {
		case !ok:
			errs = append(errs, field.Required(rp, "each claim needs a size"))
		case storage.Sign() <= 0:
			errs = append(errs, field.Invalid(rp, storage.String(), "must be greater than zero"))
		}
		if m := spec.VolumeMode; m != nil && *m != corev1.PersistentVolumeBlock && *m != corev1.PersistentVolumeFilesystem {
			errs = append(errs, field.NotSupported(sp.Child("volumeMode"), *m,
				[]string{string(corev1.PersistentVolumeBlock), string(corev1.PersistentVolumeFilesystem)}))
		}
		if c := spec.StorageClassName; c != nil && *c != "" { // "": no class (static provisioning)
			for _, msg := range validation.IsDNS1123Subdomain(*c) {
				errs = append(errs, field.Invalid(sp.Child("storageClassName"), *c, msg))
			}
		}
		if spec.Selector != nil {
			errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector,
				metav1validation.LabelSelectorValidationOptions{}, sp.Child("selector"))...)
		}
	}
	return errs
}

var accessModes = []string{string(corev1.ReadWriteOnce), string(corev1.ReadOnlyMany), string(corev1.ReadWriteMany),
	string(corev1.ReadWriteOncePod)}

func validateAccessModes(modes []corev1.PersistentVolumeAccessMode, p *field.Path) field.ErrorList {
	if len(modes) == 0 {
		return field.ErrorList{field.Required(p, "at least 1 access mode is required")}
	}
	var errs field.ErrorList
	for i, m := range modes {
		known := false
		for _, a := range accessModes {
			known = known || string(m) == a
		}
		if !known {
			errs = append(errs, field.NotSupported(p.Index(i), m, accessModes))
		}
		if m == corev1.ReadWriteOncePod && len(modes) > 1 {
			errs = append(errs, field.Forbidden(p.Index(i), "ReadWriteOncePod may not be used with other access modes"))
		}
	}
	return errs
}

// validateRetentionPolicy: whenDeleted and whenScaled are Retain or Delete ("" is defaulted to
// Retain).
func validateRetentionPolicy(policy *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy, p *field.Path) field.ErrorList {
	if policy == nil {
		return nil
	}
	var errs field.ErrorList
	for _, f := range []struct {
		name  string
		value appsv1.PersistentVolumeClaimRetentionPolicyType
	}{{"whenDeleted", policy.WhenDeleted}, {"whenScaled", policy.WhenScaled}} {
		switch f.value {
		case "", appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType:
		default:
			errs = append(errs, field.NotSupported(p.Child(f.name), f.value, []string{
				string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), string(appsv1.DeletePersistentVolumeClaimRetentionPolicyType)}))
		}
	}
	return errs
}

// validateClaimUpdateStrategy: the type is OnPodRollingUpdate or OnPVCDelete, or unset.
func validateClaimUpdateStrategy(s v1beta1.StatefulSetVolumeClaimUpdateStrategy, p *field.Path) field.ErrorList {
	switch s.Type {
	case "", v1beta1.OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy, v1beta1.OnPVCDeleteStatefulSetVolumeClaimUpdateStrategy:
		return nil
	}
	return field.ErrorList{field.NotSupported(p.Child("type"), s.Type, []string{
		string(v1beta1.OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy), string(v1beta1.OnPVCDeleteStatefulSetVolumeClaimUpdateStrategy)})}
}

// validateClaimTemplateChanges: claim templates are neither added nor removed, and each may change
// only in its storage size (resources.requests.storage and resources.limits.storage): the claims
// made from a template are its pods' data, and a resized template is the only change they can
// follow (an existing claim is expanded; nothing else of it can change). Their status is ignored.
func validateClaimTemplateChanges(cur, old []corev1.PersistentVolumeClaim, p *field.Path) field.ErrorList {
	if len(cur) != len(old) {
		return field.ErrorList{field.Forbidden(p, fmt.Sprintf(
			"claim templates may not be added or removed (%d before, %d now): only their storage size may change", len(old), len(cur)))}
	}
	var errs field.ErrorList
	for i := range cur {
		was, now := old[i].DeepCopy(), cur[i].DeepCopy()
		was.Status, now.Status = corev1.PersistentVolumeClaimStatus{}, corev1.PersistentVolumeClaimStatus{}
		now.Spec.Resources.Requests = withStorageOf(now.Spec.Resources.Requests, was.Spec.Resources.Requests)
		now.Spec.Resources.Limits = withStorageOf(now.Spec.Resources.Limits, was.Spec.Resources.Limits)
		if apiequality.Semantic.DeepEqual(was, now) {
			continue
		}
		changed := jsonChanges(was, now, p.Index(i).String())
		if len(changed) == 0 {
			continue
		}
		errs = append(errs, field.Forbidden(p.Index(i), fmt.Sprintf(
			"a claim template may change only in its storage size (resources.requests.storage, resources.limits.storage); changed: %s",
			strings.Join(changed, ", "))))
	}
	return errs
}

// withStorageOf returns list with the storage quantity of from (or none, as from has none); list
// itself is not modified.
func withStorageOf(list, from corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range list {
		if k != corev1.ResourceStorage {
			out[k] = v
		}
	}
	if q, ok := from[corev1.ResourceStorage]; ok {
		out[corev1.ResourceStorage] = q
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=list;watch

// refusedExpansions refuses, under volumeClaimUpdateStrategy OnPodRollingUpdate, a claim template
// whose storage request grows while its StorageClass (the default class when it names none) does
// not allow volume expansion: the controller could not expand the existing claims, and the rollout
// would stop at the first pod.
func refusedExpansions(ctx context.Context, classes client.Reader, cur, old *v1beta1.StatefulSet) field.ErrorList {
	if cur.Spec.VolumeClaimUpdateStrategy.Type != v1beta1.OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy {
		return nil
	}
	was := map[string]resource.Quantity{}
	for _, t := range old.Spec.VolumeClaimTemplates {
		was[t.Name] = t.Spec.Resources.Requests[corev1.ResourceStorage]
	}
	var errs field.ErrorList
	for i, t := range cur.Spec.VolumeClaimTemplates {
		before, ok := was[t.Name]
		if now := t.Spec.Resources.Requests[corev1.ResourceStorage]; !ok || now.Cmp(before) <= 0 {
			continue
		}
		p := field.NewPath("spec", "volumeClaimTemplates").Index(i).Child("spec", "resources", "requests", "storage")
		name, err := claimClass(ctx, classes, t.Spec.StorageClassName)
		if err != nil {
			errs = append(errs, field.InternalError(p, err))
			continue
		}
		var sc storagev1.StorageClass
		switch err := classes.Get(ctx, client.ObjectKey{Name: name}, &sc); {
		case name == "":
			errs = append(errs, field.Forbidden(p, "the claims have no StorageClass, so they cannot be expanded"))
		case apierrors.IsNotFound(err):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("StorageClass %q does not exist, so the claims cannot be expanded", name)))
		case err != nil:
			errs = append(errs, field.InternalError(p, err))
		case sc.AllowVolumeExpansion == nil || !*sc.AllowVolumeExpansion:
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("StorageClass %q does not allow volume expansion (allowVolumeExpansion)", name)))
		}
	}
	return errs
}

// claimClass is the StorageClass a claim of storageClassName gets: the name, or the default
// class's when it names none ("" for no class).
func claimClass(ctx context.Context, classes client.Reader, name *string) (string, error) {
	if name != nil {
		return *name, nil
	}
	var list storagev1.StorageClassList
	if err := classes.List(ctx, &list); err != nil {
		return "", err
	}
	for _, sc := range list.Items {
		if sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			return sc.Name, nil
		}
	}
	return "", nil
}
