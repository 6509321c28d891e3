package validating

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// PersistentPodStatePath is where the PersistentPodState validating webhook is served.
const PersistentPodStatePath = "/validate-apps-kruise-io-v1alpha1-persistentpodstate"

const persistentPodStateKind = "PersistentPodState"

// PersistentPodStateWhitelistKey (workloadfinder.PersistentPodStateWhitelist) is the kruise-configuration entry listing the custom workloads a
// PersistentPodState may target, as OpenKruise reads it: {"workloads":[{"Group":…,"Kind":…},…]}.
const PersistentPodStateWhitelistKey = workloadfinder.PersistentPodStateWhitelist

// +kubebuilder:rbac:groups=apps.kruise.io,resources=persistentpodstates,verbs=list;watch

// PersistentPodStateOptions are what the PersistentPodState webhook reads besides the object.
type PersistentPodStateOptions struct {
	// Reader lists the PersistentPodStates of a namespace (a workload has one only); nil: not
	// checked.
	Reader client.Reader
	// Config reads the kruise-configuration ConfigMap in Namespace, whose
	// PersistentPodStateWhitelistKey entry lists the custom workloads a PersistentPodState may
	// target; nil: only StatefulSets are accepted.
	Config    client.Reader
	Namespace string
	// Gate registers the PersistentPodState's entry before it is stored (nil: not done here).
	Gate Gate[*v1alpha1.PersistentPodState]
}

// registerPersistentPodStates adds the PersistentPodState validating webhook.
func registerPersistentPodStates(srv webhook.Server, scheme *runtime.Scheme, opts PersistentPodStateOptions) {
	mount.Admission(srv, PersistentPodStatePath, admission.WithValidator[*v1alpha1.PersistentPodState](scheme,
		persistentPodStateValidator{opts: opts}))
}

// ValidatePersistentPodState reports every problem of a new PersistentPodState, each at the path
// of the offending field, as OpenKruise v1.9.0's webhook decides them (pkg/webhook/
// persistentpodstate/validating), for the rules that need nothing but the object and custom, the
// custom workload kinds the whitelist allows; the conflict with other PersistentPodStates is the
// webhook's.
//
// OpenKruise's rules:
//   - spec.targetRef has apiVersion, kind and name, and names a StatefulSet (apps or
//     apps.kruise.io) or a kind of the whitelist (kruise-configuration,
//     PersistentPodStateWhitelistKey);
//   - spec.requiredPersistentTopology or spec.preferredPersistentTopology is set;
//   - on update (ValidatePersistentPodStateUpdate), spec.targetRef does not change.
//
// Kruise's additions (refused where OpenKruise accepts a value that makes the pods it mutates
// invalid, or that its controller does not know):
//   - each nodeTopologyKeys entry is a valid label key (it becomes a node affinity key);
//   - a preferred term's weight is in [1, 100] (it becomes a preferred node affinity weight);
//   - each persistentPodAnnotations key is a valid annotation key;
//   - spec.persistentPodStateRetentionPolicy is WhenScaled or WhenDeleted (unset: WhenScaled).
func ValidatePersistentPodState(obj *v1alpha1.PersistentPodState, custom []schema.GroupKind) field.ErrorList {
	spec := &obj.Spec
	path := field.NewPath("spec")
	errs := validatePersistentPodStateTarget(&spec.TargetReference, custom, path.Child("targetRef"))
	if spec.RequiredPersistentTopology == nil && len(spec.PreferredPersistentTopology) == 0 {
		errs = append(errs, field.Required(path.Child("requiredPersistentTopology"),
			"set requiredPersistentTopology or preferredPersistentTopology: the topology a recreated pod keeps"))
	}
	if t := spec.RequiredPersistentTopology; t != nil {
		errs = append(errs, validateTopologyKeys(t.NodeTopologyKeys, path.Child("requiredPersistentTopology", "nodeTopologyKeys"))...)
	}
	for i, t := range spec.PreferredPersistentTopology {
		ip := path.Child("preferredPersistentTopology").Index(i)
		if t.Weight < 1 || t.Weight > 100 {
			errs = append(errs, field.Invalid(ip.Child("weight"), t.Weight, "must be in the range 1-100"))
		}
		errs = append(errs, validateTopologyKeys(t.Preference.NodeTopologyKeys, ip.Child("preference", "nodeTopologyKeys"))...)
	}
	for i, a := range spec.PersistentPodAnnotations {
		kp := path.Child("persistentPodAnnotations").Index(i).Child("key")
		if a.Key == "" {
			errs = append(errs, field.Required(kp, ""))
			continue
		}
		errs = append(errs, metav1validation.ValidateLabelName(a.Key, kp)...)
	}
	switch spec.PersistentPodStateRetentionPolicy {
	case "", v1alpha1.PersistentPodStateRetainWhenScaled, v1alpha1.PersistentPodStateRetainWhenDeleted:
	default:
		errs = append(errs, field.NotSupported(path.Child("persistentPodStateRetentionPolicy"), spec.PersistentPodStateRetentionPolicy,
			[]string{string(v1alpha1.PersistentPodStateRetainWhenScaled), string(v1alpha1.PersistentPodStateRetainWhenDeleted)}))
	}
	return errs
}

// ValidatePersistentPodStateUpdate validates obj as ValidatePersistentPodState does and refuses a
// change of spec.targetRef. An update that leaves the spec unchanged is accepted as it is.
func ValidatePersistentPodStateUpdate(obj, old *v1alpha1.PersistentPodState, custom []schema.GroupKind) field.ErrorList {
	if apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) {
		return nil
	}
	errs := ValidatePersistentPodState(obj, custom)
	if obj.Spec.TargetReference != old.Spec.TargetReference {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "targetRef"),
			"cannot be changed: create another PersistentPodState"))
	}
	return errs
}

// validatePersistentPodStateTarget checks spec.targetRef.
func validatePersistentPodStateTarget(ref *v1alpha1.PersistentPodStateTargetReference, custom []schema.GroupKind, p *field.Path) field.ErrorList {
	if errs := validateTargetRefFields(ref.APIVersion, ref.Kind, ref.Name, p); len(errs) > 0 {
		return errs
	}
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	if ref.Kind == "StatefulSet" && (gv.Group == appsv1.GroupName || gv.Group == v1alpha1.GroupVersion.Group) {
		return nil
	}
	for _, gk := range custom {
		if gk.Group == gv.Group && gk.Kind == ref.Kind {
			return nil
		}
	}
	return field.ErrorList{field.Invalid(p.Child("kind"), ref.Kind, fmt.Sprintf(
		"must be a StatefulSet (apps or apps.kruise.io) or a kind of %s in ConfigMap %s",
		PersistentPodStateWhitelistKey, KruiseConfigurationName))}
}

// validateTopologyKeys: each key is set and a valid node label key.
func validateTopologyKeys(keys []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, k := range keys {
		if k == "" {
			errs = append(errs, field.Required(p.Index(i), "a node label key"))
			continue
		}
		errs = append(errs, metav1validation.ValidateLabelName(k, p.Index(i))...)
	}
	return errs
}

// persistentPodStateValidator adapts ValidatePersistentPodState and
// ValidatePersistentPodStateUpdate to controller-runtime, and refuses a PersistentPodState for a
// workload another PersistentPodState of its namespace already covers, as OpenKruise does.
type persistentPodStateValidator struct {
	opts PersistentPodStateOptions
}

// ValidateCreate rejects an invalid new PersistentPodState or one in conflict with another.
func (v persistentPodStateValidator) ValidateCreate(ctx context.Context, obj *v1alpha1.PersistentPodState) (admission.Warnings, error) {
	custom, err := v.custom(ctx, obj)
	if err != nil {
		return nil, invalid(persistentPodStateKind, obj.Name, field.ErrorList{field.InternalError(field.NewPath("spec", "targetRef"), err)})
	}
	errs := ValidatePersistentPodState(obj, custom)
	if len(errs) == 0 && v.opts.Reader != nil {
		errs = persistentPodStateConflicts(ctx, v.opts.Reader, obj)
	}
	if len(errs) > 0 {
		return nil, invalid(persistentPodStateKind, obj.Name, errs)
	}
	return nil, admitStored(ctx, v.opts.Gate, obj)
}

// ValidateUpdate rejects an invalid PersistentPodState or a forbidden change; conflicts are not
// looked up again, as the target cannot change.
func (v persistentPodStateValidator) ValidateUpdate(ctx context.Context, oldObj, newObj *v1alpha1.PersistentPodState) (admission.Warnings, error) {
	if apiequality.Semantic.DeepEqual(oldObj.Spec, newObj.Spec) {
		return nil, nil
	}
	custom, err := v.custom(ctx, newObj)
	if err != nil {
		return nil, invalid(persistentPodStateKind, newObj.Name, field.ErrorList{field.InternalError(field.NewPath("spec", "targetRef"), err)})
	}
	if errs := ValidatePersistentPodStateUpdate(newObj, oldObj, custom); len(errs) > 0 {
		return nil, invalid(persistentPodStateKind, newObj.Name, errs)
	}
	return nil, admitUpdate(ctx, v.opts.Gate, oldObj, newObj)
}

// ValidateDelete allows every deletion (the webhook is not registered for DELETE).
func (persistentPodStateValidator) ValidateDelete(context.Context, *v1alpha1.PersistentPodState) (admission.Warnings, error) {
	return nil, nil
}

// custom reads the whitelist of custom workloads, only when pps targets no StatefulSet.
func (v persistentPodStateValidator) custom(ctx context.Context, pps *v1alpha1.PersistentPodState) ([]schema.GroupKind, error) {
	if pps.Spec.TargetReference.Kind == "StatefulSet" {
		return nil, nil
	}
	return workloadfinder.CustomWorkloads(ctx, v.opts.Config, v.opts.Namespace, PersistentPodStateWhitelistKey)
}

// persistentPodStateConflicts refuses pps when another PersistentPodState of its namespace targets
// the same workload (same group, kind and name), naming the first in name order.
func persistentPodStateConflicts(ctx context.Context, r client.Reader, pps *v1alpha1.PersistentPodState) field.ErrorList {
	list := &v1alpha1.PersistentPodStateList{}
	if err := r.List(ctx, list, client.InNamespace(pps.Namespace)); err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec", "targetRef"), fmt.Errorf("cannot list the PersistentPodStates: %w", err))}
	}
	sort.SliceStable(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	ref := pps.Spec.TargetReference
	for _, other := range list.Items {
		o := other.Spec.TargetReference
		if other.Name == pps.Name || other.Namespace != pps.Namespace {
			continue
		}
		if sameWorkload(ref.APIVersion, ref.Kind, ref.Name, o.APIVersion, o.Kind, o.Name) {
			return field.ErrorList{field.Invalid(field.NewPath("spec", "targetRef"), ref.Name, fmt.Sprintf(
				"%s %s already has PersistentPodState %s: a workload has one PersistentPodState only", ref.Kind, ref.Name, other.Name))}
		}
	}
	return nil
}
