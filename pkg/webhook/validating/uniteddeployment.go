package validating

import (
	"context"
	"fmt"
	"slices"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/subset"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// UnitedDeploymentPath is where the UnitedDeployment validating webhook is served.
const UnitedDeploymentPath = "/validate-apps-kruise-io-v1alpha1-uniteddeployment"

const unitedDeploymentKind = "UnitedDeployment"

// registerUnitedDeployments adds the UnitedDeployment validating webhook.
func registerUnitedDeployments(srv webhook.Server, scheme *runtime.Scheme, templates PodTemplateChecker) {
	mount.Admission(srv, UnitedDeploymentPath, admission.WithValidator[*v1alpha1.UnitedDeployment](scheme,
		unitedDeploymentValidator{templates: templates}))
}

// ValidateUnitedDeployment reports every problem of a new UnitedDeployment as it would be stored
// after defaulting, each at the path of the offending field. It answers as OpenKruise v1.9.0's
// webhook does (pkg/webhook/uniteddeployment/validating, validateUnitedDeploymentSpec and what it
// calls), but for the differences listed below.
//
// OpenKruise's rules:
//   - spec.replicas ≥ 0; spec.selector is required, valid and not empty;
//   - spec.template holds exactly one of statefulSetTemplate, advancedStatefulSetTemplate,
//     cloneSetTemplate and deploymentTemplate; the selector selects the labels of a StatefulSet,
//     Advanced StatefulSet or Deployment template (metadata.labels) and of its pod template;
//   - a StatefulSet, Advanced StatefulSet or Deployment template sets no spec.replicas, and a
//     StatefulSet's no rollingUpdate.partition (the controller sets both per subset); its pod
//     template is a valid pod template of its workload (restartPolicy Always, no
//     activeDeadlineSeconds; the rest by the webhook's dry run of a pod, podtemplate.go);
//   - spec.topology.subsets: names set, unique, DNS labels; nodeSelectorTerm and tolerations valid
//     as in a pod; replicas, minReplicas and maxReplicas integers ≥ 0 or percentages of at most
//     100% of spec.replicas; minReplicas ≤ maxReplicas; replicas excludes minReplicas/maxReplicas;
//     with minReplicas/maxReplicas, spec.replicas is set, one subset at least leaves maxReplicas
//     unset and the minReplicas add up to no more than the maxReplicas; with replicas, their sum
//     is at most spec.replicas, and exactly it when every subset sets replicas (all of them must
//     when spec.replicas is unset);
//   - scheduleStrategy Adaptive: no subset sets replicas, and reserveUnschedulablePods only with
//     a CloneSet or Deployment template;
//   - spec.updateStrategy.manualUpdate.partitions names only subsets of spec.topology.
//
// Where Kruise answers otherwise than OpenKruise v1.9.0 (refused where OpenKruise accepts an
// object whose subset workloads could never be created or updated as asked):
//   - a cloneSetTemplate is validated as a CloneSet (ValidateCloneSet, with the UnitedDeployment's
//     selector and without the replicas and partition the controller sets) and an
//     advancedStatefulSetTemplate as an Advanced StatefulSet (ValidateStatefulSet, likewise);
//     OpenKruise checks neither beyond their count;
//   - a StatefulSet template's claim templates are checked as the Advanced StatefulSet's;
//   - a subset patch is a JSON object that applies as a strategic merge patch to the pod template,
//     and the patched template's labels stay selected by spec.selector (OpenKruise checks
//     nothing and its controller then fails on every sync);
//   - partitions are ≥ 0; adaptive rescheduleCriticalSeconds and unschedulableDuration are ≥ 0;
//   - errors carry the path of the field (OpenKruise reports a maxReplicas error at minReplicas
//     and an advancedStatefulSetTemplate's labels at statefulSetTemplate).
//
// Object metadata (the name, labels) is checked by the API server itself, as for any object.
func ValidateUnitedDeployment(obj *v1alpha1.UnitedDeployment) field.ErrorList {
	spec := &obj.Spec
	path := field.NewPath("spec")
	var errs field.ErrorList
	if spec.Replicas != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*spec.Replicas), path.Child("replicas"))...)
	}
	var sel labels.Selector
	if spec.Selector == nil {
		errs = append(errs, field.Required(path.Child("selector"), ""))
	} else if selErrs := validateNonEmptySelector(spec.Selector, "pod of the namespace", path.Child("selector")); len(selErrs) > 0 {
		errs = append(errs, selErrs...)
	} else {
		sel, _ = metav1.LabelSelectorAsSelector(spec.Selector)
	}
	errs = append(errs, validateSubsetTemplate(obj, sel, path.Child("template"))...)
	errs = append(errs, validateUnitedDeploymentTopology(spec, sel, path.Child("topology"))...)
	errs = append(errs, validateUnitedDeploymentPartitions(spec, path.Child("updateStrategy", "manualUpdate", "partitions"))...)
	return errs
}

// ValidateUnitedDeploymentUpdate validates obj as ValidateUnitedDeployment does and checks the
// changes from old, as OpenKruise v1.9.0 does (ValidateUnitedDeploymentUpdate):
//   - a StatefulSet or Advanced StatefulSet template kept as such changes only in its template
//     and updateStrategy (and replicas, which must stay unset);
//   - a subset kept by name keeps its nodeSelectorTerm and tolerations.
//
// And, as Kruise's own rule, spec.selector is immutable: every subset workload's selector is
// (OpenKruise accepts the change, which its controller can then never apply).
//
// As for the other workloads, an update that leaves the spec unchanged (metadata only) is accepted
// even when the stored spec would now be refused.
func ValidateUnitedDeploymentUpdate(obj, old *v1alpha1.UnitedDeployment) field.ErrorList {
	if apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) {
		return nil
	}
	path := field.NewPath("spec")
	errs := ValidateUnitedDeployment(obj)
	errs = append(errs, apivalidation.ValidateImmutableField(obj.Spec.Selector, old.Spec.Selector, path.Child("selector"))...)
	t, ot, tp := &obj.Spec.Template, &old.Spec.Template, path.Child("template")
	if t.StatefulSetTemplate != nil && ot.StatefulSetTemplate != nil {
		a, b := t.StatefulSetTemplate.Spec.DeepCopy(), ot.StatefulSetTemplate.Spec.DeepCopy()
		a.Replicas, a.Template, a.UpdateStrategy = b.Replicas, b.Template, b.UpdateStrategy
		if !apiequality.Semantic.DeepEqual(a, b) {
			errs = append(errs, field.Forbidden(tp.Child("statefulSetTemplate", "spec"),
				"updates to the StatefulSet template's spec for fields other than template and updateStrategy are forbidden"))
		}
	}
	if t.AdvancedStatefulSetTemplate != nil && ot.AdvancedStatefulSetTemplate != nil {
		a, b := t.AdvancedStatefulSetTemplate.Spec.DeepCopy(), ot.AdvancedStatefulSetTemplate.Spec.DeepCopy()
		a.Replicas, a.Template, a.UpdateStrategy = b.Replicas, b.Template, b.UpdateStrategy
		if !apiequality.Semantic.DeepEqual(a, b) {
			errs = append(errs, field.Forbidden(tp.Child("advancedStatefulSetTemplate", "spec"),
				"updates to the Advanced StatefulSet template's spec for fields other than template and updateStrategy are forbidden"))
		}
	}
	oldSubsets := map[string]*v1alpha1.UnitedDeploymentSubset{}
	for i := range old.Spec.Topology.Subsets {
		oldSubsets[old.Spec.Topology.Subsets[i].Name] = &old.Spec.Topology.Subsets[i]
	}
	sp := path.Child("topology", "subsets")
	for i, s := range obj.Spec.Topology.Subsets {
		o, ok := oldSubsets[s.Name]
		if !ok {
			continue
		}
		if !apiequality.Semantic.DeepEqual(o.NodeSelectorTerm, s.NodeSelectorTerm) {
			errs = append(errs, field.Forbidden(sp.Index(i).Child("nodeSelectorTerm"), "may not be changed in an update"))
		}
		if !apiequality.Semantic.DeepEqual(o.Tolerations, s.Tolerations) {
			errs = append(errs, field.Forbidden(sp.Index(i).Child("tolerations"), "may not be changed in an update"))
		}
	}
	return errs
}

// subsetWorkload is the workload template a UnitedDeployment names, as the controller reads it.
type subsetWorkload struct {
	field  string // the template's field under spec.template
	meta   *metav1.ObjectMeta
	pod    *corev1.PodTemplateSpec
	claims []corev1.PersistentVolumeClaim
}

// chosenTemplates returns the templates spec.template sets, in field order.
func chosenTemplates(t *v1alpha1.UnitedDeploymentSubsetTemplate) []subsetWorkload {
	var out []subsetWorkload
	if s := t.StatefulSetTemplate; s != nil {
		out = append(out, subsetWorkload{"statefulSetTemplate", &s.ObjectMeta, &s.Spec.Template, s.Spec.VolumeClaimTemplates})
	}
	if s := t.AdvancedStatefulSetTemplate; s != nil {
		out = append(out, subsetWorkload{"advancedStatefulSetTemplate", &s.ObjectMeta, &s.Spec.Template, s.Spec.VolumeClaimTemplates})
	}
	if s := t.CloneSetTemplate; s != nil {
		out = append(out, subsetWorkload{"cloneSetTemplate", &s.ObjectMeta, &s.Spec.Template, s.Spec.VolumeClaimTemplates})
	}
	if s := t.DeploymentTemplate; s != nil {
		out = append(out, subsetWorkload{"deploymentTemplate", &s.ObjectMeta, &s.Spec.Template, nil})
	}
	return out
}

// validateSubsetTemplate checks spec.template: exactly one workload template, valid as that
// workload. sel is the UnitedDeployment's selector (nil when invalid: what depends on it is not
// checked).
func validateSubsetTemplate(ud *v1alpha1.UnitedDeployment, sel labels.Selector, p *field.Path) field.ErrorList {
	chosen := chosenTemplates(&ud.Spec.Template)
	switch len(chosen) {
	case 0:
		return field.ErrorList{field.Required(p, "set one of statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate and deploymentTemplate")}
	case 1:
	default:
		return field.ErrorList{field.Invalid(p, fmt.Sprintf("%s and %s", chosen[0].field, chosen[1].field),
			"set only one of statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate and deploymentTemplate")}
	}
	w := chosen[0]
	wp := p.Child(w.field)
	var errs field.ErrorList
	if sel != nil && w.field != "cloneSetTemplate" && !sel.Matches(labels.Set(w.meta.Labels)) {
		errs = append(errs, field.Invalid(wp.Child("metadata", "labels"), w.meta.Labels, "`selector` does not match template `labels`"))
	}
	t := &ud.Spec.Template
	switch {
	case t.StatefulSetTemplate != nil:
		s := &t.StatefulSetTemplate.Spec
		errs = append(errs, controllerOwnedFields(s.Replicas, s.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType &&
			s.UpdateStrategy.RollingUpdate != nil && s.UpdateStrategy.RollingUpdate.Partition != nil, wp)...)
		errs = append(errs, validatePodTemplateOf("StatefulSet", sel, &s.Template, wp.Child("spec", "template"))...)
		errs = append(errs, validateClaimTemplates(&s.Template, s.VolumeClaimTemplates, true, wp.Child("spec"))...)
		errs = append(errs, validateClaimSpecs(s.VolumeClaimTemplates, wp.Child("spec", "volumeClaimTemplates"))...)
	case t.AdvancedStatefulSetTemplate != nil:
		s := &t.AdvancedStatefulSetTemplate.Spec
		ru := s.UpdateStrategy.RollingUpdate
		errs = append(errs, controllerOwnedFields(s.Replicas, s.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType &&
			ru != nil && ru.Partition != nil, wp)...)
		if sel != nil {
			sts := &v1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: ud.Name, Namespace: ud.Namespace}, Spec: *s.DeepCopy()}
			sts.Spec.Selector, sts.Spec.Replicas = ud.Spec.Selector, nil
			if sts.Spec.UpdateStrategy.RollingUpdate != nil {
				sts.Spec.UpdateStrategy.RollingUpdate.Partition = nil
			}
			errs = append(errs, reroot(ValidateStatefulSet(sts), "spec", wp.Child("spec"))...)
		}
	case t.CloneSetTemplate != nil:
		if sel != nil {
			cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: ud.Name, Namespace: ud.Namespace},
				Spec: *t.CloneSetTemplate.Spec.DeepCopy()}
			cs.Spec.Selector, cs.Spec.Replicas, cs.Spec.UpdateStrategy.Partition = ud.Spec.Selector, nil, nil
			errs = append(errs, reroot(ValidateCloneSet(cs), "spec", wp.Child("spec"))...)
		}
	case t.DeploymentTemplate != nil:
		s := &t.DeploymentTemplate.Spec
		errs = append(errs, controllerOwnedFields(s.Replicas, false, wp)...)
		errs = append(errs, validatePodTemplateOf("Deployment", sel, &s.Template, wp.Child("spec", "template"))...)
	}
	return errs
}

// controllerOwnedFields refuses what the controller sets on each subset workload: its replicas,
// and (partitionSet) its rolling update partition.
func controllerOwnedFields(replicas *int32, partitionSet bool, wp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if replicas != nil {
		errs = append(errs, field.Invalid(wp.Child("spec", "replicas"), *replicas,
			"must not be set: the controller sets each subset's replicas from spec.topology"))
	}
	if partitionSet {
		errs = append(errs, field.Invalid(wp.Child("spec", "updateStrategy", "rollingUpdate", "partition"), "set",
			"must not be set: the controller sets each subset's partition from spec.updateStrategy"))
	}
	return errs
}

// validatePodTemplateOf checks the pod template of a kind's workload template: selected by sel
// (nil: not checked), and the template basics every workload applies.
func validatePodTemplateOf(kind string, sel labels.Selector, t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sel != nil && !sel.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(p.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	return append(errs, validateTemplateBasics(kind, t, p)...)
}

// validateUnitedDeploymentTopology checks spec.topology: the subsets and the schedule strategy.
func validateUnitedDeploymentTopology(spec *v1alpha1.UnitedDeploymentSpec, sel labels.Selector, p *field.Path) field.ErrorList {
	topo := &spec.Topology
	sp := p.Child("subsets")
	errs := validateSubsetReplicas(spec.Replicas, topo.Subsets, sp)
	adaptive := topo.ScheduleStrategy.Type == v1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType
	var pod *corev1.PodTemplateSpec
	if chosen := chosenTemplates(&spec.Template); len(chosen) == 1 {
		pod = chosen[0].pod
	}
	names := map[string]bool{}
	for i := range topo.Subsets {
		s := &topo.Subsets[i]
		ip := sp.Index(i)
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(ip.Child("name"), ""))
		case names[s.Name]:
			errs = append(errs, field.Duplicate(ip.Child("name"), s.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(s.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), s.Name, msg))
			}
		}
		names[s.Name] = true
		errs = append(errs, validateNodeSelectorTerm(&s.NodeSelectorTerm, ip.Child("nodeSelectorTerm"))...)
		errs = append(errs, validateTolerations(s.Tolerations, ip.Child("tolerations"))...)
		if s.Replicas != nil && adaptive {
			errs = append(errs, field.Forbidden(ip.Child("replicas"),
				"must not be set with scheduleStrategy Adaptive: use minReplicas/maxReplicas for an elastic allocation"))
		}
		errs = append(errs, validateSubsetPatch(s, pod, sel, ip.Child("patch"))...)
	}
	return append(errs, validateUnitedDeploymentSchedule(spec, p.Child("scheduleStrategy"))...)
}

// validateSubsetPatch: a subset's patch is a JSON object that applies to the pod template (pod,
// nil when spec.template is invalid) as a strategic merge patch, and leaves its labels selected
// by sel (nil: not checked).
func validateSubsetPatch(s *v1alpha1.UnitedDeploymentSubset, pod *corev1.PodTemplateSpec, sel labels.Selector, p *field.Path) field.ErrorList {
	if errs := validatePatchObject(s.Patch.Raw, "pod template", p); len(errs) > 0 || s.Patch.Raw == nil || pod == nil {
		return errs
	}
	patched, err := subset.ApplyToTemplate(pod, s)
	if err != nil {
		return field.ErrorList{field.Invalid(p, string(s.Patch.Raw), err.Error())}
	}
	if sel != nil && !sel.Matches(labels.Set(patched.Labels)) {
		return field.ErrorList{field.Invalid(p, string(s.Patch.Raw),
			"the patched pod template's labels are no longer selected by spec.selector")}
	}
	return nil
}

// validateUnitedDeploymentSchedule checks spec.topology.scheduleStrategy.
func validateUnitedDeploymentSchedule(spec *v1alpha1.UnitedDeploymentSpec, p *field.Path) field.ErrorList {
	ss := &spec.Topology.ScheduleStrategy
	var errs field.ErrorList
	switch ss.Type {
	case "", v1alpha1.FixedUnitedDeploymentScheduleStrategyType, v1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType:
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), ss.Type, []string{
			string(v1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType), string(v1alpha1.FixedUnitedDeploymentScheduleStrategyType)}))
	}
	a := ss.Adaptive
	if a == nil {
		return errs
	}
	ap := p.Child("adaptive")
	if a.RescheduleCriticalSeconds != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*a.RescheduleCriticalSeconds), ap.Child("rescheduleCriticalSeconds"))...)
	}
	if a.UnschedulableDuration != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*a.UnschedulableDuration), ap.Child("unschedulableDuration"))...)
	}
	stateful := spec.Template.StatefulSetTemplate != nil || spec.Template.AdvancedStatefulSetTemplate != nil
	if ss.Type == v1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType && a.ReserveUnschedulablePods && stateful {
		errs = append(errs, field.Invalid(ap.Child("reserveUnschedulablePods"), true,
			"only stateless workloads (Deployment and CloneSet) support reserved rescheduling"))
	}
	return errs
}

// noMaxReplicas stands for an unset maxReplicas in the sums (OpenKruise's figure).
const noMaxReplicas = 1000000

// validateSubsetReplicas checks the subsets' replicas, minReplicas and maxReplicas against
// spec.replicas (udReplicas; nil: unset), as OpenKruise's validateSubsetReplicas does.
func validateSubsetReplicas(udReplicas *int32, subsets []v1alpha1.UnitedDeploymentSubset, p *field.Path) field.ErrorList {
	total := int32(-1) // unset
	if udReplicas != nil {
		total = *udReplicas
	}
	var errs field.ErrorList
	var sumFixed, sumMin, sumMax int64
	var fixed, maxSet int
	for i, s := range subsets {
		ip := p.Index(i)
		parse := func(v *intstr.IntOrString, name string, def int32) int32 {
			if v == nil {
				return def
			}
			n, err := subset.ParseReplicas(total, *v)
			if err != nil {
				errs = append(errs, field.Invalid(ip.Child(name), v.String(), err.Error()))
			}
			return n
		}
		if s.Replicas != nil {
			fixed++
		}
		if s.MaxReplicas != nil {
			maxSet++
		}
		sumFixed += int64(parse(s.Replicas, "replicas", 0))
		lo, hi := parse(s.MinReplicas, "minReplicas", 0), parse(s.MaxReplicas, "maxReplicas", noMaxReplicas)
		sumMin, sumMax = sumMin+int64(lo), sumMax+int64(hi)
		if lo > hi {
			errs = append(errs, field.Invalid(ip.Child("minReplicas"), s.MinReplicas.String(),
				fmt.Sprintf("must not be greater than maxReplicas (%d)", hi)))
		}
	}
	bounded := slices.ContainsFunc(subsets, func(s v1alpha1.UnitedDeploymentSubset) bool { return s.MinReplicas != nil || s.MaxReplicas != nil })
	switch {
	case fixed > 0 && bounded:
		errs = append(errs, field.Invalid(p, fmt.Sprintf("%d subsets with replicas", fixed),
			"replicas and minReplicas/maxReplicas are mutually exclusive in a UnitedDeployment"))
	case bounded:
		if total < 0 {
			errs = append(errs, field.Required(field.NewPath("spec", "replicas"), "must be set when a subset sets minReplicas or maxReplicas"))
		}
		if maxSet >= len(subsets) {
			errs = append(errs, field.Invalid(p, fmt.Sprintf("%d subsets with maxReplicas", maxSet),
				"at least one subset must leave maxReplicas unset"))
		}
		if sumMin > sumMax {
			errs = append(errs, field.Invalid(p, sumMin, fmt.Sprintf(
				"the subsets' minReplicas add up to more than their maxReplicas (%d)", sumMax)))
		}
	case total >= 0:
		if sumFixed > int64(total) {
			errs = append(errs, field.Invalid(p, sumFixed, fmt.Sprintf("the subsets' replicas add up to more than spec.replicas (%d)", total)))
		} else if fixed > 0 && fixed == len(subsets) && sumFixed != int64(total) {
			errs = append(errs, field.Invalid(p, sumFixed, fmt.Sprintf(
				"every subset sets replicas, so they must add up to spec.replicas (%d)", total)))
		}
	case fixed != len(subsets):
		errs = append(errs, field.Invalid(p, fmt.Sprintf("%d of %d subsets with replicas", fixed, len(subsets)),
			"every subset must set replicas when spec.replicas is unset"))
	}
	return errs
}

// validateUnitedDeploymentPartitions: each manual partition names a subset and is ≥ 0.
func validateUnitedDeploymentPartitions(spec *v1alpha1.UnitedDeploymentSpec, p *field.Path) field.ErrorList {
	mu := spec.UpdateStrategy.ManualUpdate
	if mu == nil {
		return nil
	}
	names := map[string]bool{}
	for _, s := range spec.Topology.Subsets {
		names[s.Name] = true
	}
	keys := make([]string, 0, len(mu.Partitions))
	for k := range mu.Partitions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs field.ErrorList
	for _, k := range keys {
		if !names[k] {
			e := field.NotFound(p.Key(k), k)
			e.Detail = "no subset of this name in spec.topology.subsets"
			errs = append(errs, e)
		}
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(mu.Partitions[k]), p.Key(k))...)
	}
	return errs
}

// unitedDeploymentValidator adapts ValidateUnitedDeployment and ValidateUnitedDeploymentUpdate to
// controller-runtime, and checks the subset workloads' pod template, and each subset's patched
// template, as the API server would check their pods.
type unitedDeploymentValidator struct {
	templates PodTemplateChecker
}

// ValidateCreate rejects an invalid new UnitedDeployment.
func (v unitedDeploymentValidator) ValidateCreate(ctx context.Context, obj *v1alpha1.UnitedDeployment) (admission.Warnings, error) {
	errs := ValidateUnitedDeployment(obj)
	if len(errs) == 0 {
		errs = v.checkTemplates(ctx, obj)
	}
	return nil, invalid(unitedDeploymentKind, obj.Name, errs)
}

// ValidateUpdate rejects an invalid UnitedDeployment or a forbidden change; the templates are
// checked against the API server again only when the template or a subset changed.
func (v unitedDeploymentValidator) ValidateUpdate(ctx context.Context, oldObj, newObj *v1alpha1.UnitedDeployment) (admission.Warnings, error) {
	errs := ValidateUnitedDeploymentUpdate(newObj, oldObj)
	if len(errs) == 0 && (!apiequality.Semantic.DeepEqual(oldObj.Spec.Template, newObj.Spec.Template) ||
		!apiequality.Semantic.DeepEqual(oldObj.Spec.Topology.Subsets, newObj.Spec.Topology.Subsets)) {
		errs = v.checkTemplates(ctx, newObj)
	}
	return nil, invalid(unitedDeploymentKind, newObj.Name, errs)
}

// ValidateDelete allows every deletion (the webhook is not registered for DELETE).
func (unitedDeploymentValidator) ValidateDelete(context.Context, *v1alpha1.UnitedDeployment) (admission.Warnings, error) {
	return nil, nil
}

// checkTemplates dry-runs the chosen workload's pod template (with its claims' volumes) and then
// the template of each subset with a patch, reported at that subset's patch.
func (v unitedDeploymentValidator) checkTemplates(ctx context.Context, ud *v1alpha1.UnitedDeployment) field.ErrorList {
	chosen := chosenTemplates(&ud.Spec.Template)
	if v.templates == nil || len(chosen) != 1 {
		return nil
	}
	w := chosen[0]
	errs := v.templates.Check(ctx, ud.Namespace, withClaimVolumes(w.pod, w.claims, ud.Name),
		field.NewPath("spec", "template", w.field, "spec", "template"))
	if len(errs) > 0 {
		return errs
	}
	for i := range ud.Spec.Topology.Subsets {
		s := &ud.Spec.Topology.Subsets[i]
		if s.Patch.Raw == nil {
			continue
		}
		patched, err := subset.ApplyToTemplate(w.pod, s)
		if err != nil {
			continue // reported by ValidateUnitedDeployment
		}
		errs = append(errs, v.templates.Check(ctx, ud.Namespace, withClaimVolumes(patched, w.claims, ud.Name),
			field.NewPath("spec", "topology", "subsets").Index(i).Child("patch"))...)
	}
	return errs
}
