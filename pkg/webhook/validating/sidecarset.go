package validating

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
)

// sidecarSetKind names the SidecarSet in messages and errors.
const sidecarSetKind = "SidecarSet"

// sidecarSetNameMaxLength is the longest SidecarSet name: the name is the value of a label on the
// SidecarSet's ControllerRevisions, and label values have at most 63 characters.
const sidecarSetNameMaxLength = 63

// sidecarSetNameRE is what a SidecarSet name may be made of (OpenKruise's rule: no dots).
var sidecarSetNameRE = regexp.MustCompile(`^[a-zA-Z0-9-]+$`)

// ValidateSidecarSet reports every problem of a new SidecarSet (a v1alpha1 object is converted to
// v1beta1 first, its spec.namespace then kept in the conversion annotation, so the rules exist
// once) as it would be stored after defaulting, each at the path of the offending field. It
// answers as OpenKruise v1.9.0's SidecarSet webhook does (pkg/webhook/sidecarset/validating,
// validateSidecarSet and what it calls), for the rules that need nothing but the object; those
// that read the cluster (other SidecarSets, the patch whitelist, pinned revisions, the API
// server's pod validation) are the webhook's (sidecarset_cluster.go).
//
// OpenKruise's rules:
//   - metadata.name: letters, digits and '-' only, at most 63 characters (checked on create:
//     names do not change);
//   - spec.selector is required, not empty and a valid label selector;
//   - spec.namespace (v1alpha1) and spec.namespaceSelector are not both set; namespaceSelector,
//     when set, is not empty and valid;
//   - spec.injectionStrategy.revision, when set, names a revisionName or a customVersion, and its
//     policy is Always or Partial (or unset);
//   - with updateStrategy.type RollingUpdate (the default): no native sidecar among the init
//     containers (restartPolicy Always: they are not updated in place), the update selector not
//     together with a partition other than the integer 0, the update selector not empty and
//     valid, partition and maxUnavailable an integer ≥ 0 or a percentage "N%" (0 and values above
//     100% are accepted), priorityStrategy as the CloneSet's, scatterStrategy terms with a key and
//     no key:value twice;
//   - at least one container or init container;
//   - container and init container names: DNS labels, unique across both lists; every container
//     has an image; volumes have unique DNS-label names; volumeMounts and volumeDevices name one
//     of spec.volumes (the rest of Kubernetes' pod validation of the containers and volumes is the
//     webhook's dry run of a pod made of them);
//   - spec.containers[]: podInjectPolicy BeforeAppContainer or AfterAppContainer,
//     shareVolumePolicy.type enabled or disabled; transferEnv[].sourceContainerNameFrom.fieldRef
//     has apiVersion v1 and a fieldPath metadata.labels['<key>'] or metadata.annotations['<key>']
//     with a valid key; resourcesPolicy not together with resources.limits or .requests, its
//     targetContainersNameRegex a non-empty regular expression, its resourcesExpr with limits or
//     requests (the expressions themselves are not parsed here);
//   - spec.initContainers[] have no resourcesPolicy;
//   - spec.patchPodMetadata[]: annotations not empty and valid annotations, patchPolicy set, no
//     annotation key in two entries;
//   - on update (ValidateSidecarSetUpdate): no container name that the stored spec.containers does
//     not have (a sidecar cannot be added or renamed), and a container's upgradeType, once set, does
//     not change.
//
// Kruise's additional rules, each applied only to what is new or changed (so that a SidecarSet
// OpenKruise stored stays accepted on unrelated updates):
//   - spec.updateStrategy.type is RollingUpdate or NotUpdate;
//   - upgradeStrategy.upgradeType is ColdUpgrade or HotUpgrade; HotUpgrade only for containers
//     and native sidecar init containers (the only ones injected as two copies), and with a
//     hotUpgradeEmptyImage other than the image (the idle copy runs it);
//   - init containers' podInjectPolicy and shareVolumePolicy.type, when set, are values of the kind
//     the containers' are;
//   - transferEnv entries name their source once (sourceContainerName or
//     sourceContainerNameFrom.fieldRef, not both) and at least one variable (envName and envNames
//     may both be given: both are copied); the fieldRef rules above apply to init containers too;
//   - patchPodMetadata[].patchPolicy is Retain, Overwrite or MergePatchJson, and a MergePatchJson
//     value is JSON (it is merged into the pod's annotation as a JSON merge patch).
//
// Where Kruise answers otherwise than OpenKruise v1.9.0, beyond the additions:
//   - an update that changes neither the spec nor the labels nor the v1alpha1 spec.namespace is
//     accepted even when the stored SidecarSet would now be refused (OpenKruise validates the
//     whole object on every update);
//   - the expressions of resourcesPolicy.resourcesExpr are not parsed.
func ValidateSidecarSet(obj *v1beta1.SidecarSet) field.ErrorList {
	return validateSidecarSet(obj, nil)
}

// ValidateSidecarSetUpdate validates obj, replacing old, as ValidateSidecarSet does, and the
// changes from old (see ValidateSidecarSet). An update that changes neither the spec, nor the
// labels (which the patch whitelist's rules select on), nor the v1alpha1 spec.namespace is
// accepted as it is.
func ValidateSidecarSetUpdate(obj, old *v1beta1.SidecarSet) field.ErrorList {
	if !sidecarSetChanged(obj, old) {
		return nil
	}
	errs := validateSidecarSet(obj, old)
	return append(errs, validateSidecarSetContainerChanges(obj.Spec.Containers, old.Spec.Containers,
		field.NewPath("spec", "containers"))...)
}

// sidecarSetChanged reports whether an update from old to obj changes what the validation looks at.
func sidecarSetChanged(obj, old *v1beta1.SidecarSet) bool {
	return !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) ||
		!apiequality.Semantic.DeepEqual(obj.Labels, old.Labels) ||
		obj.Annotations[v1alpha1.ConversionV1alpha1OnlyAnnotation] != old.Annotations[v1alpha1.ConversionV1alpha1OnlyAnnotation]
}

// validateSidecarSet checks obj; old is the stored SidecarSet for an update, nil for a create.
func validateSidecarSet(obj, old *v1beta1.SidecarSet) field.ErrorList {
	spec := &obj.Spec
	var oldSpec *v1beta1.SidecarSetSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	path := field.NewPath("spec")
	var errs field.ErrorList
	if old == nil {
		errs = append(errs, validateSidecarSetName(obj.Name)...)
	}
	errs = append(errs, validateSidecarSetScope(obj, old)...)
	errs = append(errs, validateSidecarSetInjection(spec.InjectionStrategy.Revision, path.Child("injectionStrategy", "revision"))...)
	errs = append(errs, validateSidecarSetUpdateStrategy(spec, oldSpec, path.Child("updateStrategy"))...)
	errs = append(errs, validateSidecarSetContainers(spec, oldSpec, path)...)
	errs = append(errs, validateSidecarSetPatches(spec, oldSpec, path.Child("patchPodMetadata"))...)
	return errs
}

// validateSidecarSetName: OpenKruise's name rule (letters, digits and '-', at most 63 characters).
func validateSidecarSetName(name string) field.ErrorList {
	p := field.NewPath("metadata", "name")
	var errs field.ErrorList
	if name != "" && !sidecarSetNameRE.MatchString(name) {
		errs = append(errs, field.Invalid(p, name, "a SidecarSet name may contain only letters, digits and '-'"))
	}
	if len(name) > sidecarSetNameMaxLength {
		errs = append(errs, field.TooLong(p, name, sidecarSetNameMaxLength))
	}
	return errs
}

// validateSidecarSetScope checks what selects the pods: spec.selector, and the namespace they must
// be in (the v1alpha1 spec.namespace, kept in the conversion annotation, or spec.namespaceSelector).
func validateSidecarSetScope(obj, old *v1beta1.SidecarSet) field.ErrorList {
	spec := &obj.Spec
	path := field.NewPath("spec")
	var errs field.ErrorList
	if spec.Selector == nil {
		errs = append(errs, field.Required(path.Child("selector"), "a SidecarSet must say which pods it injects"))
	} else {
		errs = append(errs, validateNonEmptySelector(spec.Selector, "pod", path.Child("selector"))...)
	}
	ns, err := sidecarrules.OnlyNamespace(obj)
	if err != nil {
		key := v1alpha1.ConversionV1alpha1OnlyAnnotation
		if old == nil || obj.Annotations[key] != old.Annotations[key] {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(key), field.OmitValueType{},
				"must be the JSON Kruise writes for the v1alpha1 spec.namespace: "+err.Error()))
		}
	}
	if spec.NamespaceSelector != nil {
		if ns != "" && !apiequality.Semantic.DeepEqual(spec.NamespaceSelector, v1alpha1.NamespaceSelectorFor(ns)) {
			errs = append(errs, field.Forbidden(path.Child("namespaceSelector"), fmt.Sprintf(
				"must not be set together with spec.namespace (%q; of v1alpha1, kept in annotation %s in v1beta1)",
				ns, v1alpha1.ConversionV1alpha1OnlyAnnotation)))
		} else {
			errs = append(errs, validateNonEmptySelector(spec.NamespaceSelector, "namespace", path.Child("namespaceSelector"))...)
		}
	}
	return errs
}

// validateNonEmptySelector: sel is a valid label selector that is not empty (an empty one would
// select every <what>).
func validateNonEmptySelector(sel *metav1.LabelSelector, what string, p *field.Path) field.ErrorList {
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		return field.ErrorList{field.Invalid(p, sel, fmt.Sprintf("must not be empty: an empty selector selects every %s", what))}
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, p)
	if len(errs) == 0 {
		if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
			errs = append(errs, field.Invalid(p, sel, err.Error()))
		}
	}
	return errs
}

// validateSidecarSetInjection checks spec.injectionStrategy.revision: it pins a revision by name
// or by custom version, with policy Always or Partial. Whether that revision exists is the
// webhook's check.
func validateSidecarSetInjection(r *v1beta1.SidecarSetInjectRevision, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if r.RevisionName == nil && r.CustomVersion == nil {
		errs = append(errs, field.Required(p, "set revisionName or customVersion: the revision to inject"))
	}
	switch r.Policy {
	case "", v1beta1.SidecarSetAlwaysRevisionPolicy, v1beta1.SidecarSetPartialRevisionPolicy:
	default:
		errs = append(errs, field.NotSupported(p.Child("policy"), r.Policy, []string{
			string(v1beta1.SidecarSetAlwaysRevisionPolicy), string(v1beta1.SidecarSetPartialRevisionPolicy)}))
	}
	return errs
}

// validateSidecarSetUpdateStrategy checks spec.updateStrategy; oldSpec is the stored spec (nil on
// create).
func validateSidecarSetUpdateStrategy(spec, oldSpec *v1beta1.SidecarSetSpec, p *field.Path) field.ErrorList {
	s := &spec.UpdateStrategy
	switch s.Type {
	case "", v1beta1.SidecarSetRollingUpdateStrategy: // "" is defaulted to RollingUpdate
	case v1beta1.SidecarSetNotUpdateStrategy:
		return nil // OpenKruise checks nothing else of a strategy that updates nothing
	default:
		if oldSpec == nil || oldSpec.UpdateStrategy.Type != s.Type {
			return field.ErrorList{field.NotSupported(p.Child("type"), s.Type, []string{
				string(v1beta1.SidecarSetRollingUpdateStrategy), string(v1beta1.SidecarSetNotUpdateStrategy)})}
		}
		return nil
	}
	var errs field.ErrorList
	var native []string
	for _, c := range spec.InitContainers {
		if isNativeSidecar(&c.Container) {
			native = append(native, c.Name)
		}
	}
	if len(native) > 0 {
		errs = append(errs, field.Forbidden(p.Child("type"), fmt.Sprintf(
			"must be NotUpdate: init containers with restartPolicy Always (%s) are not updated in place",
			strings.Join(native, ", "))))
	}
	if s.Selector != nil {
		if partitionSet(s.Partition) {
			errs = append(errs, field.Forbidden(p.Child("selector"), "must not be set together with a partition: "+
				"choose the pods to update by selector or by partition"))
		}
		errs = append(errs, validateNonEmptySelector(s.Selector, "pod", p.Child("selector"))...)
	}
	if s.Partition != nil {
		errs = append(errs, validateIntOrPercent(*s.Partition, p.Child("partition"))...)
	}
	if s.MaxUnavailable != nil {
		errs = append(errs, validateIntOrPercent(*s.MaxUnavailable, p.Child("maxUnavailable"))...)
	}
	errs = append(errs, validatePriority(s.PriorityStrategy, p.Child("priorityStrategy"))...)
	if len(s.ScatterStrategy) > 0 {
		terms := make(v1alpha1.UpdateScatterStrategy, len(s.ScatterStrategy))
		for i, t := range s.ScatterStrategy {
			terms[i] = v1alpha1.UpdateScatterTerm{Key: t.Key, Value: t.Value}
		}
		errs = append(errs, validateScatter(terms, p.Child("scatterStrategy"))...)
	}
	return errs
}

// partitionSet: a partition counts as set unless it is absent or the integer 0 (OpenKruise's
// reading: "0%" is set).
func partitionSet(v *intstr.IntOrString) bool {
	return v != nil && (v.Type == intstr.String || v.IntVal != 0)
}

// validateIntOrPercent: an integer ≥ 0 or a percentage "N%" of digits (Kubernetes'
// ValidatePositiveIntOrPercent, which OpenKruise applies: no upper bound).
func validateIntOrPercent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	switch v.Type {
	case intstr.Int:
		if v.IntVal < 0 {
			return field.ErrorList{field.Invalid(p, v.IntVal, "must not be negative")}
		}
		return nil
	case intstr.String:
		digits, ok := strings.CutSuffix(v.StrVal, "%")
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
			return field.ErrorList{field.Invalid(p, v.StrVal, "must be an integer or a percentage such as '10%'")}
		}
		return nil
	default:
		return field.ErrorList{field.Invalid(p, v.String(), "must be an integer or a percentage such as '10%'")}
	}
}

// isNativeSidecar: an init container that runs beside the app containers (restartPolicy Always).
func isNativeSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// sidecarList is one of the two lists of injected containers.
type sidecarList struct {
	init  bool
	items []v1beta1.SidecarSetContainer
	old   map[string]*v1beta1.SidecarSetContainer // the stored list's entries by name; nil on create
	path  *field.Path
}

// validateSidecarSetContainers checks spec.containers, spec.initContainers and spec.volumes.
func validateSidecarSetContainers(spec, oldSpec *v1beta1.SidecarSetSpec, path *field.Path) field.ErrorList {
	if len(spec.Containers)+len(spec.InitContainers) == 0 {
		return append(field.ErrorList{field.Required(path.Child("containers"), "a SidecarSet injects at least one container or init container")},
			validateSidecarSetVolumes(spec.Volumes, path.Child("volumes"))...)
	}
	lists := []sidecarList{
		{items: spec.Containers, path: path.Child("containers")},
		{init: true, items: spec.InitContainers, path: path.Child("initContainers")},
	}
	if oldSpec != nil {
		lists[0].old, lists[1].old = byName(oldSpec.Containers), byName(oldSpec.InitContainers)
	}
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
	}
	var errs field.ErrorList
	// Names are unique across both lists, as in a pod; as Kubernetes does, a name already taken
	// is reported at the init container.
	names := map[string]bool{}
	for _, l := range lists {
		for i := range l.items {
			c := &l.items[i]
			ip := l.path.Index(i)
			errs = append(errs, validateContainerIdentity(&c.Container, names, ip)...)
			errs = append(errs, validateSidecarMounts(&c.Container, volumes, ip)...)
			var was *v1beta1.SidecarSetContainer
			if l.old != nil {
				was = l.old[c.Name]
			}
			errs = append(errs, validateSidecarContainer(c, was, l.old == nil, l.init, ip)...)
		}
	}
	return append(errs, validateSidecarSetVolumes(spec.Volumes, path.Child("volumes"))...)
}

func byName(list []v1beta1.SidecarSetContainer) map[string]*v1beta1.SidecarSetContainer {
	out := make(map[string]*v1beta1.SidecarSetContainer, len(list))
	for i := range list {
		out[list[i].Name] = &list[i]
	}
	return out
}

// validateSidecarMounts: every volumeMount and volumeDevice names one of the SidecarSet's volumes
// (Kubernetes validates the pod OpenKruise makes of the sidecars and the SidecarSet's volumes).
func validateSidecarMounts(c *corev1.Container, volumes map[string]bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for j, m := range c.VolumeMounts {
		if m.Name != "" && !volumes[m.Name] {
			errs = append(errs, sidecarVolumeNotFound(p.Child("volumeMounts").Index(j).Child("name"), m.Name))
		}
	}
	for j, d := range c.VolumeDevices {
		if d.Name != "" && !volumes[d.Name] {
			errs = append(errs, sidecarVolumeNotFound(p.Child("volumeDevices").Index(j).Child("name"), d.Name))
		}
	}
	return errs
}

func sidecarVolumeNotFound(p *field.Path, name string) *field.Error {
	e := field.NotFound(p, name)
	e.Detail = "no volume of this name in spec.volumes"
	return e
}

// validateSidecarSetVolumes: names are unique DNS labels (the rest of a volume's validation is the
// dry run's).
func validateSidecarSetVolumes(volumes []corev1.Volume, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, v := range volumes {
		np := p.Index(i).Child("name")
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(np, ""))
		case seen[v.Name]:
			errs = append(errs, field.Duplicate(np, v.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(v.Name) {
				errs = append(errs, field.Invalid(np, v.Name, msg))
			}
		}
		seen[v.Name] = true
	}
	return errs
}

// validateSidecarContainer checks one container's SidecarSet settings. was is the stored entry of
// its name in the same list (nil when new), create whether the SidecarSet is new; Kruise's own
// rules apply only to what is new or changed.
func validateSidecarContainer(c, was *v1beta1.SidecarSetContainer, create, init bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	isNew := create || was == nil
	changed := func(f func(*v1beta1.SidecarSetContainer) any) bool {
		return isNew || !apiequality.Semantic.DeepEqual(f(c), f(was))
	}
	strategyChanged := changed(func(x *v1beta1.SidecarSetContainer) any { return x.UpgradeStrategy })
	if !init || changed(func(x *v1beta1.SidecarSetContainer) any { return x.PodInjectPolicy }) {
		switch c.PodInjectPolicy {
		case v1beta1.SidecarSetBeforeAppContainer, v1beta1.SidecarSetAfterAppContainer:
		default:
			if !init || c.PodInjectPolicy != "" {
				errs = append(errs, field.NotSupported(p.Child("podInjectPolicy"), c.PodInjectPolicy, []string{
					string(v1beta1.SidecarSetBeforeAppContainer), string(v1beta1.SidecarSetAfterAppContainer)}))
			}
		}
	}
	if !init || changed(func(x *v1beta1.SidecarSetContainer) any { return x.ShareVolumePolicy }) {
		switch c.ShareVolumePolicy.Type {
		case v1beta1.SidecarSetShareVolumePolicyEnabled, v1beta1.SidecarSetShareVolumePolicyDisabled:
		default:
			if !init || c.ShareVolumePolicy.Type != "" {
				errs = append(errs, field.NotSupported(p.Child("shareVolumePolicy", "type"), c.ShareVolumePolicy.Type, []string{
					string(v1beta1.SidecarSetShareVolumePolicyEnabled), string(v1beta1.SidecarSetShareVolumePolicyDisabled)}))
			}
		}
	}
	errs = append(errs, validateUpgradeStrategy(c, was, isNew, strategyChanged, init, p.Child("upgradeStrategy"))...)
	transferChanged := changed(func(x *v1beta1.SidecarSetContainer) any { return x.TransferEnv })
	errs = append(errs, validateTransferEnv(c.TransferEnv, !init || transferChanged, transferChanged, p.Child("transferEnv"))...)
	if c.ResourcesPolicy != nil {
		if init {
			errs = append(errs, field.Forbidden(p.Child("resourcesPolicy"), "only containers may have a resourcesPolicy, not init containers"))
		} else {
			errs = append(errs, validateResourcesPolicy(c, p.Child("resourcesPolicy"))...)
		}
	}
	return errs
}

// validateUpgradeStrategy applies Kruise's rules to a container's upgradeStrategy: a known type;
// HotUpgrade only where the container is injected as two copies, and with an empty image of its
// own. was is the stored entry (nil when new).
func validateUpgradeStrategy(c, was *v1beta1.SidecarSetContainer, isNew, strategyChanged, init bool, p *field.Path) field.ErrorList {
	us := &c.UpgradeStrategy
	tp := p.Child("upgradeType")
	switch us.UpgradeType {
	case "", v1beta1.SidecarSetColdUpgrade:
		return nil
	case v1beta1.SidecarSetHotUpgrade:
	default:
		if strategyChanged {
			return field.ErrorList{field.NotSupported(tp, us.UpgradeType, []string{
				string(v1beta1.SidecarSetColdUpgrade), string(v1beta1.SidecarSetHotUpgrade)})}
		}
		return nil
	}
	var errs field.ErrorList
	if init && !isNativeSidecar(&c.Container) &&
		(strategyChanged || !apiequality.Semantic.DeepEqual(c.RestartPolicy, was.RestartPolicy)) {
		errs = append(errs, field.Forbidden(tp, "HotUpgrade is only for containers and init containers with restartPolicy Always: "+
			"other init containers have finished before the pod runs"))
	}
	ip := p.Child("hotUpgradeEmptyImage")
	switch {
	case us.HotUpgradeEmptyImage == "":
		if strategyChanged {
			errs = append(errs, field.Required(ip, "HotUpgrade runs this image in the idle copy of the container"))
		}
	case us.HotUpgradeEmptyImage == c.Image:
		if isNew || strategyChanged || c.Image != was.Image {
			errs = append(errs, field.Invalid(ip, us.HotUpgradeEmptyImage, "must differ from the container's image: "+
				"the idle copy of a HotUpgrade container must run an image that does nothing"))
		}
	}
	return errs
}

// validateTransferEnv checks transferEnv: OpenKruise's rules for sourceContainerNameFrom.fieldRef
// when fieldRefs (always for containers; for init containers when changed), and Kruise's when
// changed.
func validateTransferEnv(list []v1beta1.SidecarSetTransferEnvVar, fieldRefs, changed bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range list {
		ip := p.Index(i)
		fp := ip.Child("sourceContainerNameFrom", "fieldRef")
		if from := t.SourceContainerNameFrom; from != nil && from.FieldRef != nil && fieldRefs {
			errs = append(errs, validateSourceFieldRef(from.FieldRef, fp)...)
		}
		if !changed {
			continue
		}
		switch from := t.SourceContainerNameFrom; {
		case from != nil && t.SourceContainerName != "":
			errs = append(errs, field.Forbidden(ip.Child("sourceContainerNameFrom"),
				"must not be set together with sourceContainerName: name the source container once"))
		case from != nil && from.FieldRef == nil:
			errs = append(errs, field.Required(fp, "the pod field that holds the source container's name"))
		case from == nil && t.SourceContainerName == "":
			errs = append(errs, field.Required(ip.Child("sourceContainerName"),
				"set sourceContainerName or sourceContainerNameFrom: the container to copy the variables from"))
		}
		if t.EnvName == "" && len(t.EnvNames) == 0 {
			errs = append(errs, field.Required(ip.Child("envName"), "set envName or envNames: the variables to copy"))
		}
		for j, n := range t.EnvNames {
			if n == "" {
				errs = append(errs, field.Required(ip.Child("envNames").Index(j), ""))
			}
		}
	}
	return errs
}

// sourceFieldPaths are the fieldPaths sourceContainerNameFrom.fieldRef may take.
var sourceFieldPaths = []string{"metadata.labels['<KEY>']", "metadata.annotations['<KEY>']"}

// validateSourceFieldRef: apiVersion v1 and a fieldPath reading a pod label or annotation of a
// valid key, the only fields OpenKruise reads the source container's name from.
func validateSourceFieldRef(fr *corev1.ObjectFieldSelector, p *field.Path) field.ErrorList {
	switch {
	case fr.APIVersion == "":
		return field.ErrorList{field.Required(p.Child("apiVersion"), "")}
	case fr.FieldPath == "":
		return field.ErrorList{field.Required(p.Child("fieldPath"), "")}
	case fr.APIVersion != "v1":
		return field.ErrorList{field.NotSupported(p.Child("apiVersion"), fr.APIVersion, []string{"v1"})}
	}
	fp := p.Child("fieldPath")
	path, key, ok := splitSubscriptedPath(fr.FieldPath)
	if !ok {
		return field.ErrorList{field.NotSupported(fp, fr.FieldPath, sourceFieldPaths)}
	}
	var msgs []string
	switch path {
	case "metadata.annotations":
		msgs = validation.IsQualifiedName(strings.ToLower(key))
	case "metadata.labels":
		msgs = validation.IsQualifiedName(key)
	default:
		return field.ErrorList{field.NotSupported(fp, fr.FieldPath, sourceFieldPaths)}
	}
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(fp, fr.FieldPath, "invalid key: "+msg))
	}
	return errs
}

// splitSubscriptedPath splits "path['key']" into path and key (Kubernetes' fieldpath reading).
func splitSubscriptedPath(fieldPath string) (string, string, bool) {
	s, ok := strings.CutSuffix(fieldPath, "']")
	if !ok {
		return "", "", false
	}
	path, key, ok := strings.Cut(s, "['")
	if !ok || path == "" {
		return "", "", false
	}
	return path, key, true
}

// validateResourcesPolicy: not together with resources; targetContainersMode sum or max; a
// non-empty targetContainersNameRegex that compiles; limits or requests expressions.
func validateResourcesPolicy(c *v1beta1.SidecarSetContainer, p *field.Path) field.ErrorList {
	rp := c.ResourcesPolicy
	if len(c.Resources.Limits) > 0 || len(c.Resources.Requests) > 0 {
		return field.ErrorList{field.Forbidden(p, "must not be set together with resources.limits or resources.requests: "+
			"the policy computes them")}
	}
	var errs field.ErrorList
	switch rp.TargetContainersMode {
	case v1beta1.SidecarSetTargetContainersModeSum, v1beta1.SidecarSetTargetContainersModeMax:
	default:
		errs = append(errs, field.NotSupported(p.Child("targetContainersMode"), rp.TargetContainersMode, []string{
			string(v1beta1.SidecarSetTargetContainersModeSum), string(v1beta1.SidecarSetTargetContainersModeMax)}))
	}
	rx := p.Child("targetContainersNameRegex")
	if rp.TargetContainersNameRegex == "" {
		errs = append(errs, field.Required(rx, "the regular expression that selects the containers whose resources are the input"))
	} else if _, err := regexp.Compile(rp.TargetContainersNameRegex); err != nil {
		errs = append(errs, field.Invalid(rx, rp.TargetContainersNameRegex, "not a regular expression: "+err.Error()))
	}
	if rp.ResourcesExpr.Limits == nil && rp.ResourcesExpr.Requests == nil {
		errs = append(errs, field.Required(p.Child("resourcesExpr"), "set limits or requests: the expressions of the container's resources"))
	}
	for i, exprs := range []*v1beta1.SidecarSetResourceExprs{rp.ResourcesExpr.Limits, rp.ResourcesExpr.Requests} {
		if exprs == nil {
			continue
		}
		part := []string{"limits", "requests"}[i]
		for j, expr := range []string{exprs.CPU, exprs.Memory} {
			name := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}[j]
			if err := sidecarrules.ValidateResourceExpr(expr, name); err != nil {
				errs = append(errs, field.Invalid(p.Child("resourcesExpr", part, string(name)), expr, err.Error()))
			}
		}
	}
	return errs
}

// validateSidecarSetPatches checks spec.patchPodMetadata; oldSpec is the stored spec (nil on create).
func validateSidecarSetPatches(spec, oldSpec *v1beta1.SidecarSetSpec, p *field.Path) field.ErrorList {
	changed := oldSpec == nil || !apiequality.Semantic.DeepEqual(spec.PatchPodMetadata, oldSpec.PatchPodMetadata)
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, patch := range spec.PatchPodMetadata {
		ip := p.Index(i)
		ap := ip.Child("annotations")
		if len(patch.Annotations) == 0 {
			errs = append(errs, field.Required(ap, "a patch sets at least one annotation"))
		} else {
			errs = append(errs, apivalidation.ValidateAnnotations(patch.Annotations, ap)...)
		}
		switch patch.PatchPolicy {
		case "":
			errs = append(errs, field.Required(ip.Child("patchPolicy"), ""))
		case v1beta1.SidecarSetRetainPatchPolicy, v1beta1.SidecarSetOverwritePatchPolicy, v1beta1.SidecarSetMergePatchJSONPatchPolicy:
		default:
			if changed {
				errs = append(errs, field.NotSupported(ip.Child("patchPolicy"), patch.PatchPolicy, []string{
					string(v1beta1.SidecarSetRetainPatchPolicy), string(v1beta1.SidecarSetOverwritePatchPolicy),
					string(v1beta1.SidecarSetMergePatchJSONPatchPolicy)}))
			}
		}
		keys := make([]string, 0, len(patch.Annotations))
		for k := range patch.Annotations {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if seen[k] {
				e := field.Duplicate(ap.Key(k), k)
				e.Detail = "another patchPodMetadata entry sets this annotation"
				errs = append(errs, e)
			}
			seen[k] = true
			if changed && patch.PatchPolicy == v1beta1.SidecarSetMergePatchJSONPatchPolicy && !json.Valid([]byte(patch.Annotations[k])) {
				errs = append(errs, field.Invalid(ap.Key(k), patch.Annotations[k],
					"must be JSON with patchPolicy MergePatchJson: it is merged into the pod's annotation as a JSON merge patch"))
			}
		}
	}
	return errs
}

// validateSidecarSetContainerChanges: OpenKruise's update rules for spec.containers: each name is
// one of the stored spec.containers (a sidecar cannot be added or renamed: the controller follows
// the injected sidecars by name), and an upgradeType, once set, stays.
func validateSidecarSetContainerChanges(cur, old []v1beta1.SidecarSetContainer, p *field.Path) field.ErrorList {
	was := byName(old)
	var errs field.ErrorList
	for i, c := range cur {
		o, ok := was[c.Name]
		switch {
		case !ok:
			errs = append(errs, field.Forbidden(p.Index(i).Child("name"), fmt.Sprintf(
				"the SidecarSet has no container %q: containers may not be added to or renamed in an existing SidecarSet", c.Name)))
		case o.UpgradeStrategy.UpgradeType != "" && c.UpgradeStrategy.UpgradeType != o.UpgradeStrategy.UpgradeType:
			errs = append(errs, field.Invalid(p.Index(i).Child("upgradeStrategy", "upgradeType"), c.UpgradeStrategy.UpgradeType,
				fmt.Sprintf("must stay %s: a container's upgradeType is immutable", o.UpgradeStrategy.UpgradeType)))
		}
	}
	return errs
}
