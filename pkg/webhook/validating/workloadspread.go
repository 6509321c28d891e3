package validating

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/subset"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/webhook/access"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// WorkloadSpreadPath is where the WorkloadSpread validating webhook is served.
const WorkloadSpreadPath = "/validate-apps-kruise-io-v1alpha1-workloadspread"

const workloadSpreadKind = "WorkloadSpread"

// WorkloadSpreadWhitelistKey (workloadfinder.WorkloadSpreadWhitelist) is the kruise-configuration entry listing the custom workloads a
// WorkloadSpread may target, as OpenKruise reads it: {"workloads":[{"Group":…,"Kind":…},…]}.
const WorkloadSpreadWhitelistKey = workloadfinder.WorkloadSpreadWhitelist

// maxScheduleFailedSeconds bounds how long an adaptive WorkloadSpread may move a pod that cannot
// be scheduled across all its subsets (OpenKruise: 300 s, less 5 s for reconciling).
const maxScheduleFailedSeconds = 300 - 5

// The workload kinds a WorkloadSpread targets without the whitelist, with the groups each may
// have.
var workloadSpreadKinds = map[string][]string{
	"CloneSet":    {v1alpha1.GroupVersion.Group},
	"Deployment":  {appsv1.GroupName},
	"ReplicaSet":  {appsv1.GroupName},
	"Job":         {batchv1.GroupName},
	"StatefulSet": {appsv1.GroupName, v1alpha1.GroupVersion.Group},
}

// +kubebuilder:rbac:groups=apps.kruise.io,resources=workloadspreads,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=clonesets;statefulsets,verbs=list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments;replicasets;statefulsets,verbs=list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=list;watch

// WorkloadSpreadOptions are what the WorkloadSpread webhook reads besides the object.
type WorkloadSpreadOptions struct {
	// Reader lists the WorkloadSpreads of a namespace (a workload is spread by one only) and reads
	// the targeted workload, whose pod template each subset patch must apply to; nil: neither.
	Reader client.Reader
	// Config reads the kruise-configuration ConfigMap in Namespace, whose
	// WorkloadSpreadWhitelistKey entry lists the custom workloads a WorkloadSpread may target;
	// nil: only the built-in kinds are accepted.
	Config    client.Reader
	Namespace string
	// Templates checks each patched pod template as the API server checks pods (nil: not checked).
	Templates PodTemplateChecker
	// Gate registers the spread's entries before it is stored (nil: not done here).
	Gate Gate[*v1alpha1.WorkloadSpread]
	// Access checks that the author may update the target (nil: not checked).
	Access *access.Checker
}

// registerWorkloadSpreads adds the WorkloadSpread validating webhook.
func registerWorkloadSpreads(srv webhook.Server, scheme *runtime.Scheme, opts WorkloadSpreadOptions) {
	mount.Admission(srv, WorkloadSpreadPath, admission.WithValidator[*v1alpha1.WorkloadSpread](scheme, workloadSpreadValidator{opts: opts}))
}

// ValidateWorkloadSpread reports every problem of a new WorkloadSpread, each at the path of the
// offending field, as OpenKruise v1.9.0's webhook decides them (pkg/webhook/spreadplacement/
// validating, validateWorkloadSpreadSpec and what it calls), for the rules that need nothing but
// the object and custom, the custom workload kinds the whitelist allows; the conflicts with other
// WorkloadSpreads and the patches' fit to the workload are the webhook's.
//
// OpenKruise's rules:
//   - spec.targetRef is required, with apiVersion, kind and name; a CloneSet (apps.kruise.io),
//     Deployment or ReplicaSet (apps), Job (batch), StatefulSet (apps or apps.kruise.io), or a
//     kind of the whitelist (kruise-configuration, WorkloadSpreadWhitelistKey); spec.targetFilter
//     (which narrows the targeted pods, alongside targetRef) has a valid selector;
//   - spec.subsets: at least one; names set and unique; requiredNodeSelectorTerm,
//     preferredNodeSelectorTerms and tolerations valid as in a pod;
//   - maxReplicas: all subsets that set it use the same type (integer or percentage), an integer
//     for a StatefulSet, ≥ 0; percentages add up to at most 100%, and to exactly 100% unless the
//     last subset leaves maxReplicas unset;
//   - spec.scheduleStrategy: type Fixed or Adaptive; adaptive only with type Adaptive, then the
//     last subset leaves maxReplicas unset (when there are several) and rescheduleCriticalSeconds
//     is in [0, 295/(subsets-1)] (so a pod is moved through every subset within 5 minutes);
//   - on update (ValidateWorkloadSpreadUpdate), the group, kind and name of spec.targetRef do not
//     change.
//
// Where Kruise answers otherwise than OpenKruise v1.9.0:
//   - a subset patch is always a JSON object that applies as a strategic merge patch to a pod
//     (OpenKruise checks a patch only when the workload already exists);
//   - a percentage is a whole number ("50%", not "50.5%");
//   - errors carry the path of the field (targetRef.apiVersion rather than targetRef;
//     preferredNodeSelectorTerms rather than preferredSchedulingTerms), and every subset is
//     checked (OpenKruise stops at the first maxReplicas problem).
//
// An unset spec.scheduleStrategy.type is Fixed.
func ValidateWorkloadSpread(obj *v1alpha1.WorkloadSpread, custom []schema.GroupKind) field.ErrorList {
	spec := &obj.Spec
	path := field.NewPath("spec")
	errs := validateWorkloadSpreadTarget(spec.TargetReference, custom, path.Child("targetRef"))
	if f := spec.TargetFilter; f != nil && f.Selector != nil {
		fp := path.Child("targetFilter", "selector")
		selErrs := metav1validation.ValidateLabelSelector(f.Selector, metav1validation.LabelSelectorValidationOptions{}, fp)
		if _, err := metav1.LabelSelectorAsSelector(f.Selector); err != nil && len(selErrs) == 0 {
			selErrs = field.ErrorList{field.Invalid(fp, f.Selector, err.Error())}
		}
		errs = append(errs, selErrs...)
	}
	statefulSet := spec.TargetReference != nil && spec.TargetReference.Kind == "StatefulSet"
	errs = append(errs, validateWorkloadSpreadSubsets(spec.Subsets, statefulSet, path.Child("subsets"))...)
	return append(errs, validateWorkloadSpreadSchedule(spec, path.Child("scheduleStrategy"))...)
}

// ValidateWorkloadSpreadUpdate validates obj as ValidateWorkloadSpread does and refuses a change
// of the targeted workload (the group of targetRef.apiVersion, its kind or its name; the version
// may change). An update that leaves the spec unchanged is accepted as it is.
func ValidateWorkloadSpreadUpdate(obj, old *v1alpha1.WorkloadSpread, custom []schema.GroupKind) field.ErrorList {
	if apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) {
		return nil
	}
	errs := ValidateWorkloadSpread(obj, custom)
	a, b := obj.Spec.TargetReference, old.Spec.TargetReference
	if a != nil && b != nil && !sameWorkload(a.APIVersion, a.Kind, a.Name, b.APIVersion, b.Kind, b.Name) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "targetRef"),
			"the targeted workload cannot be changed: create another WorkloadSpread"))
	}
	return errs
}

// sameWorkload: two references name the same workload when their groups, kinds and names agree.
func sameWorkload(apiVersionA, kindA, nameA, apiVersionB, kindB, nameB string) bool {
	ga, _ := schema.ParseGroupVersion(apiVersionA)
	gb, _ := schema.ParseGroupVersion(apiVersionB)
	return ga.Group == gb.Group && kindA == kindB && nameA == nameB
}

// validateWorkloadSpreadTarget checks spec.targetRef.
func validateWorkloadSpreadTarget(ref *v1alpha1.WorkloadSpreadTargetReference, custom []schema.GroupKind, p *field.Path) field.ErrorList {
	if ref == nil {
		return field.ErrorList{field.Required(p, "the workload whose pods are spread")}
	}
	errs := validateTargetRefFields(ref.APIVersion, ref.Kind, ref.Name, p)
	if len(errs) > 0 {
		return errs
	}
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	if groups, known := workloadSpreadKinds[ref.Kind]; known {
		for _, g := range groups {
			if g == gv.Group {
				return nil
			}
		}
		return field.ErrorList{field.Invalid(p.Child("apiVersion"), ref.APIVersion,
			fmt.Sprintf("a %s must be of group %s", ref.Kind, strings.Join(groups, " or ")))}
	}
	for _, gk := range custom {
		if gk.Group == gv.Group && gk.Kind == ref.Kind {
			return nil
		}
	}
	return field.ErrorList{field.Invalid(p.Child("kind"), ref.Kind, fmt.Sprintf(
		"must be CloneSet, Deployment, ReplicaSet, Job, StatefulSet, or a kind of %s in ConfigMap %s",
		WorkloadSpreadWhitelistKey, KruiseConfigurationName))}
}

// validateTargetRefFields: apiVersion (a valid group/version), kind and name are set.
func validateTargetRefFields(apiVersion, kind, name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if apiVersion == "" {
		errs = append(errs, field.Required(p.Child("apiVersion"), ""))
	} else if _, err := schema.ParseGroupVersion(apiVersion); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), apiVersion, err.Error()))
	}
	if kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	return errs
}

// validateWorkloadSpreadSubsets checks spec.subsets; statefulSet: the target is a StatefulSet,
// whose maxReplicas must be integers.
func validateWorkloadSpreadSubsets(subsets []v1alpha1.WorkloadSpreadSubset, statefulSet bool, p *field.Path) field.ErrorList {
	if len(subsets) == 0 {
		return field.ErrorList{field.Required(p, "a WorkloadSpread needs at least one subset")}
	}
	var errs field.ErrorList
	names := map[string]bool{}
	for i := range subsets {
		s := &subsets[i]
		ip := p.Index(i)
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(ip.Child("name"), ""))
		case names[s.Name]:
			errs = append(errs, field.Duplicate(ip.Child("name"), s.Name))
		}
		names[s.Name] = true
		if s.RequiredNodeSelectorTerm != nil {
			errs = append(errs, validateNodeSelectorTerm(s.RequiredNodeSelectorTerm, ip.Child("requiredNodeSelectorTerm"))...)
		}
		errs = append(errs, validatePreferredTerms(s.PreferredNodeSelectorTerms, ip.Child("preferredNodeSelectorTerms"))...)
		errs = append(errs, validateTolerations(s.Tolerations, ip.Child("tolerations"))...)
		if pe := validatePatchObject(s.Patch.Raw, "pod", ip.Child("patch")); len(pe) > 0 {
			errs = append(errs, pe...)
		} else if s.Patch.Raw != nil {
			if _, err := subset.ApplyToPod(&corev1.Pod{}, s); err != nil {
				errs = append(errs, field.Invalid(ip.Child("patch"), string(s.Patch.Raw), err.Error()))
			}
		}
	}
	return append(errs, validateWorkloadSpreadMaxReplicas(subsets, statefulSet, p)...)
}

// validateWorkloadSpreadMaxReplicas checks the subsets' maxReplicas (see ValidateWorkloadSpread).
func validateWorkloadSpreadMaxReplicas(subsets []v1alpha1.WorkloadSpreadSubset, statefulSet bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	var first *intstr.IntOrString
	percentSum := 0
	for i, s := range subsets {
		m := s.MaxReplicas
		if m == nil {
			continue
		}
		mp := p.Index(i).Child("maxReplicas")
		switch {
		case first == nil:
			first = m
		case m.Type != first.Type:
			errs = append(errs, field.Invalid(mp, m.String(), "every subset's maxReplicas must be of the same type: an integer or a percentage"))
			continue
		}
		if m.Type == intstr.Int {
			if m.IntVal < 0 {
				errs = append(errs, field.Invalid(mp, m.IntVal, "must not be negative"))
			}
			continue
		}
		if statefulSet {
			errs = append(errs, field.Invalid(mp, m.StrVal, "must be an integer for a StatefulSet: its subsets are ranges of ordinals"))
			continue
		}
		digits, ok := strings.CutSuffix(m.StrVal, "%")
		n, err := strconv.Atoi(digits)
		if !ok || err != nil || n < 0 || strings.Trim(digits, "0123456789") != "" {
			errs = append(errs, field.Invalid(mp, m.StrVal, "must be an integer or a whole percentage such as '50%'"))
			continue
		}
		if percentSum += n; percentSum > 100 {
			errs = append(errs, field.Invalid(mp, m.StrVal, fmt.Sprintf("the subsets' maxReplicas add up to %d%%, more than 100%%", percentSum)))
		}
	}
	if first != nil && first.Type == intstr.String && percentSum < 100 && subsets[len(subsets)-1].MaxReplicas != nil && len(errs) == 0 {
		errs = append(errs, field.Invalid(p.Index(0).Child("maxReplicas"), first.StrVal, fmt.Sprintf(
			"the subsets' maxReplicas add up to %d%%: as percentages they must add up to 100%%, unless the last subset leaves maxReplicas unset",
			percentSum)))
	}
	return errs
}

// validateWorkloadSpreadSchedule checks spec.scheduleStrategy.
func validateWorkloadSpreadSchedule(spec *v1alpha1.WorkloadSpreadSpec, p *field.Path) field.ErrorList {
	ss := &spec.ScheduleStrategy
	var errs field.ErrorList
	switch ss.Type {
	case "", v1alpha1.WorkloadSpreadFixedScheduleStrategy, v1alpha1.WorkloadSpreadAdaptiveScheduleStrategy:
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), ss.Type, []string{
			string(v1alpha1.WorkloadSpreadFixedScheduleStrategy), string(v1alpha1.WorkloadSpreadAdaptiveScheduleStrategy)}))
	}
	a := ss.Adaptive
	if a == nil {
		return errs
	}
	if ss.Type != v1alpha1.WorkloadSpreadAdaptiveScheduleStrategy {
		errs = append(errs, field.Invalid(p.Child("type"), ss.Type, "must be Adaptive when scheduleStrategy.adaptive is set"))
	}
	n := len(spec.Subsets)
	if n > 1 && spec.Subsets[n-1].MaxReplicas != nil {
		errs = append(errs, field.Invalid(p.Child("adaptive"), spec.Subsets[n-1].MaxReplicas.String(),
			"the last subset must leave maxReplicas unset with the Adaptive strategy: it takes the pods no other subset can run"))
	}
	limit := int32(math.MaxInt32)
	if n > 1 {
		limit = int32(maxScheduleFailedSeconds / (n - 1))
	}
	if r := a.RescheduleCriticalSeconds; r != nil && (*r < 0 || *r > limit) {
		errs = append(errs, field.Invalid(p.Child("adaptive", "rescheduleCriticalSeconds"), *r, fmt.Sprintf(
			"must be between 0 and %d: a pod that cannot be scheduled must pass through every subset within 5 minutes", limit)))
	}
	return errs
}

// workloadSpreadValidator adapts ValidateWorkloadSpread and ValidateWorkloadSpreadUpdate to
// controller-runtime, and adds the checks that read the cluster, as OpenKruise's webhook does:
// the whitelist of custom workloads, a workload spread by one WorkloadSpread only, and each
// subset's patch applied to the targeted workload's pod template (when the workload exists)
// making a valid pod.
type workloadSpreadValidator struct {
	opts WorkloadSpreadOptions
}

// ValidateCreate rejects an invalid new WorkloadSpread.
func (v workloadSpreadValidator) ValidateCreate(ctx context.Context, obj *v1alpha1.WorkloadSpread) (admission.Warnings, error) {
	custom, err := v.custom(ctx, obj)
	if err != nil {
		return nil, invalid(workloadSpreadKind, obj.Name, field.ErrorList{field.InternalError(field.NewPath("spec", "targetRef"), err)})
	}
	errs := ValidateWorkloadSpread(obj, custom)
	if len(errs) == 0 {
		errs = v.checkCluster(ctx, obj)
	}
	if len(errs) > 0 {
		return nil, invalid(workloadSpreadKind, obj.Name, errs)
	}
	if err := v.requireAccess(ctx, obj); err != nil {
		return nil, err
	}
	return nil, admitStored(ctx, v.opts.Gate, obj)
}

var workloadSpreadResource = v1alpha1.GroupVersion.WithResource("workloadspreads").GroupResource()

// requireAccess refuses ws unless its author (or the updater of its spec) may update its target,
// whose pods ws rewrites as they are created.
func (v workloadSpreadValidator) requireAccess(ctx context.Context, ws *v1alpha1.WorkloadSpread) error {
	ref := ws.Spec.TargetReference
	if v.opts.Access == nil || ref == nil {
		return nil
	}
	target, err := v.opts.Access.Resource(ref.APIVersion, ref.Kind)
	if err != nil {
		return invalid(workloadSpreadKind, ws.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "targetRef"),
			ref.APIVersion+"/"+ref.Kind, fmt.Sprintf("names no resource the API server serves: %v", err))})
	}
	return v.opts.Access.Require(ctx, workloadSpreadResource, ws.Name, access.WorkloadSpread(ws, target)...)
}

// ValidateUpdate rejects an invalid WorkloadSpread or a forbidden change; the cluster is read
// again only when the spec changed.
func (v workloadSpreadValidator) ValidateUpdate(ctx context.Context, oldObj, newObj *v1alpha1.WorkloadSpread) (admission.Warnings, error) {
	if apiequality.Semantic.DeepEqual(oldObj.Spec, newObj.Spec) {
		return nil, nil
	}
	custom, err := v.custom(ctx, newObj)
	if err != nil {
		return nil, invalid(workloadSpreadKind, newObj.Name, field.ErrorList{field.InternalError(field.NewPath("spec", "targetRef"), err)})
	}
	errs := ValidateWorkloadSpreadUpdate(newObj, oldObj, custom)
	if len(errs) == 0 {
		errs = v.checkCluster(ctx, newObj)
	}
	if len(errs) > 0 {
		return nil, invalid(workloadSpreadKind, newObj.Name, errs)
	}
	if err := v.requireAccess(ctx, newObj); err != nil {
		return nil, err
	}
	return nil, admitUpdate(ctx, v.opts.Gate, oldObj, newObj)
}

// custom reads the whitelist of custom workloads, only when ws targets a kind of none of the
// built-in ones.
func (v workloadSpreadValidator) custom(ctx context.Context, ws *v1alpha1.WorkloadSpread) ([]schema.GroupKind, error) {
	if ref := ws.Spec.TargetReference; ref == nil || workloadSpreadKinds[ref.Kind] != nil {
		return nil, nil
	}
	return workloadfinder.CustomWorkloads(ctx, v.opts.Config, v.opts.Namespace, WorkloadSpreadWhitelistKey)
}

// ValidateDelete allows every deletion (the webhook is not registered for DELETE).
func (workloadSpreadValidator) ValidateDelete(context.Context, *v1alpha1.WorkloadSpread) (admission.Warnings, error) {
	return nil, nil
}

// checkCluster refuses ws when another WorkloadSpread of its namespace targets its workload, or
// when a subset patch makes an invalid pod of the workload's template.
func (v workloadSpreadValidator) checkCluster(ctx context.Context, ws *v1alpha1.WorkloadSpread) field.ErrorList {
	if v.opts.Reader == nil {
		return nil
	}
	if errs := workloadSpreadConflicts(ctx, v.opts.Reader, ws); len(errs) > 0 {
		return errs
	}
	if v.opts.Templates == nil {
		return nil
	}
	tmpl, err := targetPodTemplate(ctx, v.opts.Reader, ws.Namespace, ws.Spec.TargetReference)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec", "targetRef"), err)}
	}
	if tmpl == nil {
		return nil // not created yet (or a custom kind): the patches are checked when pods are
	}
	var errs field.ErrorList
	for i := range ws.Spec.Subsets {
		s := &ws.Spec.Subsets[i]
		if s.Patch.Raw == nil {
			continue
		}
		pp := field.NewPath("spec", "subsets").Index(i).Child("patch")
		pod, err := subset.ApplyToPod(&corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}, s)
		if err != nil {
			errs = append(errs, field.Invalid(pp, string(s.Patch.Raw), err.Error()))
			continue
		}
		errs = append(errs, v.opts.Templates.Check(ctx, ws.Namespace, &corev1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec}, pp)...)
	}
	return errs
}

// workloadSpreadConflicts refuses ws when another WorkloadSpread of its namespace targets the same
// workload (same group, kind and name), naming the first in name order.
func workloadSpreadConflicts(ctx context.Context, r client.Reader, ws *v1alpha1.WorkloadSpread) field.ErrorList {
	ref := ws.Spec.TargetReference
	if ref == nil {
		return nil
	}
	list := &v1alpha1.WorkloadSpreadList{}
	if err := r.List(ctx, list, client.InNamespace(ws.Namespace)); err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec", "targetRef"), fmt.Errorf("cannot list the WorkloadSpreads: %w", err))}
	}
	sort.SliceStable(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	for _, other := range list.Items {
		o := other.Spec.TargetReference
		if other.Name == ws.Name || other.Namespace != ws.Namespace || o == nil {
			continue
		}
		if sameWorkload(ref.APIVersion, ref.Kind, ref.Name, o.APIVersion, o.Kind, o.Name) {
			return field.ErrorList{field.Invalid(field.NewPath("spec", "targetRef"), ref.Name, fmt.Sprintf(
				"%s %s is already spread by WorkloadSpread %s: a workload is spread by one WorkloadSpread only", ref.Kind, ref.Name, other.Name))}
		}
	}
	return nil
}

// targetPodTemplate reads the pod template of the workload ref names (with its claim templates'
// volumes), or nil when it does not exist or is of a custom kind.
func targetPodTemplate(ctx context.Context, r client.Reader, namespace string, ref *v1alpha1.WorkloadSpreadTargetReference) (*corev1.PodTemplateSpec, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, nil
	}
	key := client.ObjectKey{Namespace: namespace, Name: ref.Name}
	var obj client.Object
	var read func() *corev1.PodTemplateSpec
	switch gv.WithKind(ref.Kind).GroupKind() {
	case schema.GroupKind{Group: v1alpha1.GroupVersion.Group, Kind: "CloneSet"}:
		o := &v1alpha1.CloneSet{}
		obj, read = o, func() *corev1.PodTemplateSpec {
			return withClaimVolumes(&o.Spec.Template, o.Spec.VolumeClaimTemplates, o.Name)
		}
	case schema.GroupKind{Group: v1alpha1.GroupVersion.Group, Kind: "StatefulSet"}:
		o := &v1beta1.StatefulSet{}
		obj, read = o, func() *corev1.PodTemplateSpec {
			return withClaimVolumes(&o.Spec.Template, o.Spec.VolumeClaimTemplates, o.Name)
		}
	case schema.GroupKind{Group: appsv1.GroupName, Kind: "StatefulSet"}:
		o := &appsv1.StatefulSet{}
		obj, read = o, func() *corev1.PodTemplateSpec {
			return withClaimVolumes(&o.Spec.Template, o.Spec.VolumeClaimTemplates, o.Name)
		}
	case schema.GroupKind{Group: appsv1.GroupName, Kind: "Deployment"}:
		o := &appsv1.Deployment{}
		obj, read = o, func() *corev1.PodTemplateSpec { return &o.Spec.Template }
	case schema.GroupKind{Group: appsv1.GroupName, Kind: "ReplicaSet"}:
		o := &appsv1.ReplicaSet{}
		obj, read = o, func() *corev1.PodTemplateSpec { return &o.Spec.Template }
	case schema.GroupKind{Group: batchv1.GroupName, Kind: "Job"}:
		o := &batchv1.Job{}
		obj, read = o, func() *corev1.PodTemplateSpec { return &o.Spec.Template }
	default:
		return nil, nil
	}
	if err := r.Get(ctx, key, obj); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("cannot read %s %s: %w", ref.Kind, ref.Name, err)
	}
	return read(), nil
}
