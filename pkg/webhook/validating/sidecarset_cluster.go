package validating

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// Paths of the SidecarSet validating webhooks, one per served version.
const (
	SidecarSetV1alpha1Path = "/validate-apps-kruise-io-v1alpha1-sidecarset"
	SidecarSetV1beta1Path  = "/validate-apps-kruise-io-v1beta1-sidecarset"
)

// The ConfigMap entry holding OpenKruise's patch whitelist (sidecarrules.PatchWhitelist, as JSON).
const (
	KruiseConfigurationName = workloadfinder.ConfigurationName
	PatchWhitelistKey       = "SidecarSet_PatchPodMetadata_WhiteList"
)

// SidecarSetOptions are what the SidecarSet webhooks read besides the object.
type SidecarSetOptions struct {
	// Reader lists SidecarSets (conflicts with other SidecarSets) and reads Namespaces (whether a
	// SidecarSet's v1alpha1 spec.namespace is selected by another's namespaceSelector) and the
	// ControllerRevisions that spec.injectionStrategy.revision pins; nil: none of this is checked.
	Reader client.Reader
	// Config reads the KruiseConfigurationName ConfigMap, whose PatchWhitelistKey entry lists the
	// annotations spec.patchPodMetadata may set; nil: the whitelist is not checked.
	Config client.Reader
	// Namespace is the manager's namespace: that of the ConfigMap and of the SidecarSets'
	// ControllerRevisions.
	Namespace string
	// PatchDefaultsAllowed allows every annotation key when no whitelist is configured or none of
	// its rules applies (OpenKruise's feature gate SidecarSetPatchPodMetadataDefaultsAllowed).
	PatchDefaultsAllowed bool
}

// +kubebuilder:rbac:groups=apps.kruise.io,resources=sidecarsets,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=list;watch
// +kubebuilder:rbac:groups="",namespace=kruise-system,resources=configmaps,resourceNames=kruise-configuration,verbs=get

// registerSidecarSets adds the SidecarSet validating webhooks: a v1alpha1 object is converted to
// v1beta1 (the stored version) and validated as such, so the rules exist once.
func registerSidecarSets(srv webhook.Server, scheme *runtime.Scheme, templates PodTemplateChecker, opts SidecarSetOptions, gate Gate[*v1beta1.SidecarSet]) {
	mount.Admission(srv, SidecarSetV1beta1Path, admission.WithValidator[*v1beta1.SidecarSet](scheme,
		sidecarSetValidator[*v1beta1.SidecarSet]{templates: templates, opts: opts, gate: gate, toV1beta1: same[*v1beta1.SidecarSet]}))
	mount.Admission(srv, SidecarSetV1alpha1Path, admission.WithValidator[*v1alpha1.SidecarSet](scheme,
		sidecarSetValidator[*v1alpha1.SidecarSet]{templates: templates, opts: opts, gate: gate,
			toV1beta1: toHub[*v1alpha1.SidecarSet, v1beta1.SidecarSet]}))
}

// sidecarSetValidator adapts ValidateSidecarSet and ValidateSidecarSetUpdate to controller-runtime
// for one version of the SidecarSet, and adds the checks that read the cluster, as OpenKruise's
// webhook does:
//   - spec.patchPodMetadata sets only annotations the patch whitelist allows
//     (sidecarrules.CheckPatchMetadata with the whitelist of opts.Config);
//   - spec.injectionStrategy.revision pins a ControllerRevision that exists: by revisionName, any
//     ControllerRevision of that name in opts.Namespace; by customVersion, one of this
//     SidecarSet's revisions labelled with it;
//   - the containers, init containers and volumes are valid as the API server validates a pod
//     made of them (templates' dry run; OpenKruise calls Kubernetes' pod validation);
//   - when all the above pass, no other SidecarSet that may select the same pods injects a
//     container or init container of the same name, a volume of the same name but another
//     definition, or an annotation that one of the two overwrites (sidecarSetConflicts).
//
// An update runs them only when ValidateSidecarSetUpdate found a change worth validating, and
// the dry run only when the containers, init containers or volumes changed.
type sidecarSetValidator[T client.Object] struct {
	templates PodTemplateChecker
	opts      SidecarSetOptions
	gate      Gate[*v1beta1.SidecarSet]
	toV1beta1 func(T) (*v1beta1.SidecarSet, error)
}

// ValidateCreate rejects an invalid new SidecarSet.
func (v sidecarSetValidator[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	set, err := v.convert(obj)
	if err != nil {
		return nil, err
	}
	errs := ValidateSidecarSet(set)
	if len(errs) == 0 {
		errs = v.checkCluster(ctx, set, nil)
	}
	if len(errs) > 0 {
		return nil, invalid(sidecarSetKind, set.Name, errs)
	}
	return nil, admitStored(ctx, v.gate, set)
}

// ValidateUpdate rejects an invalid SidecarSet or a forbidden change.
func (v sidecarSetValidator[T]) ValidateUpdate(ctx context.Context, oldObj, newObj T) (admission.Warnings, error) {
	set, err := v.convert(newObj)
	if err != nil {
		return nil, err
	}
	old, err := v.convert(oldObj)
	if err != nil {
		return nil, err
	}
	errs := ValidateSidecarSetUpdate(set, old)
	if len(errs) == 0 && sidecarSetChanged(set, old) {
		errs = v.checkCluster(ctx, set, old)
	}
	if len(errs) > 0 {
		return nil, invalid(sidecarSetKind, set.Name, errs)
	}
	return nil, admitUpdate(ctx, v.gate, old, set)
}

// ValidateDelete allows every deletion (the webhook is not registered for DELETE).
func (sidecarSetValidator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// convert returns obj as v1beta1; an unreadable v1beta1-only annotation of a v1alpha1 object is
// refused at that annotation.
func (v sidecarSetValidator[T]) convert(obj T) (*v1beta1.SidecarSet, error) {
	set, err := v.toV1beta1(obj)
	if err != nil {
		p := field.NewPath("metadata", "annotations").Key(v1alpha1.ConversionV1beta1OnlyAnnotation)
		return nil, invalid(sidecarSetKind, obj.GetName(), field.ErrorList{field.Invalid(p, field.OmitValueType{}, err.Error())})
	}
	return set, nil
}

// checkCluster runs the checks that read the cluster on set; old is the stored SidecarSet of an
// update (nil on create).
func (v sidecarSetValidator[T]) checkCluster(ctx context.Context, set, old *v1beta1.SidecarSet) field.ErrorList {
	var errs field.ErrorList
	if v.opts.Config != nil {
		errs = append(errs, checkPatchWhitelist(ctx, v.opts, set)...)
	}
	if v.opts.Reader != nil {
		errs = append(errs, checkInjectionRevision(ctx, v.opts.Reader, v.opts.Namespace, set)...)
	}
	if v.templates != nil && (old == nil || !apiequality.Semantic.DeepEqual(
		[]any{set.Spec.Containers, set.Spec.InitContainers, set.Spec.Volumes},
		[]any{old.Spec.Containers, old.Spec.InitContainers, old.Spec.Volumes})) {
		errs = append(errs, checkSidecarSetPod(ctx, v.templates, set)...)
	}
	if len(errs) == 0 && v.opts.Reader != nil {
		errs = sidecarSetConflicts(ctx, v.opts.Reader, set)
	}
	return errs
}

// patchPolicy reads the patch whitelist: none when the ConfigMap or its entry is missing.
func patchPolicy(ctx context.Context, opts SidecarSetOptions) (sidecarrules.PatchPolicy, error) {
	policy := sidecarrules.PatchPolicy{DefaultsAllowed: opts.PatchDefaultsAllowed}
	cm := &corev1.ConfigMap{}
	err := opts.Config.Get(ctx, client.ObjectKey{Namespace: opts.Namespace, Name: KruiseConfigurationName}, cm)
	if apierrors.IsNotFound(err) {
		return policy, nil
	} else if err != nil {
		return policy, err
	}
	raw, ok := cm.Data[PatchWhitelistKey]
	if !ok {
		return policy, nil
	}
	policy.Whitelist = &sidecarrules.PatchWhitelist{}
	if err := json.Unmarshal([]byte(raw), policy.Whitelist); err != nil {
		return policy, fmt.Errorf("ConfigMap %s/%s, entry %s: %w", opts.Namespace, KruiseConfigurationName, PatchWhitelistKey, err)
	}
	return policy, nil
}

// checkPatchWhitelist refuses each annotation key of spec.patchPodMetadata the whitelist does not
// allow this SidecarSet to set (the whitelist's rules select SidecarSets by their labels).
func checkPatchWhitelist(ctx context.Context, opts SidecarSetOptions, set *v1beta1.SidecarSet) field.ErrorList {
	if len(set.Spec.PatchPodMetadata) == 0 {
		return nil
	}
	p := field.NewPath("spec", "patchPodMetadata")
	policy, err := patchPolicy(ctx, opts)
	if err != nil {
		return field.ErrorList{field.InternalError(p, fmt.Errorf("cannot read the patch whitelist: %w", err))}
	}
	err = sidecarrules.CheckPatchMetadata(set, policy)
	if err == nil {
		return nil
	}
	where := fmt.Sprintf("ConfigMap %s/%s, entry %s", opts.Namespace, KruiseConfigurationName, PatchWhitelistKey)
	if policy.Whitelist == nil {
		return field.ErrorList{field.Forbidden(p, fmt.Sprintf("no patch whitelist is configured (%s), and the feature gate "+
			"SidecarSetPatchPodMetadataDefaultsAllowed is off: no annotation may be patched", where))}
	}
	var errs field.ErrorList
	for i, patch := range set.Spec.PatchPodMetadata {
		keys := make([]string, 0, len(patch.Annotations))
		for k := range patch.Annotations {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			one := &v1beta1.SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: set.Name, Labels: set.Labels},
				Spec: v1beta1.SidecarSetSpec{PatchPodMetadata: []v1beta1.SidecarSetPatchPodMetadata{
					{Annotations: map[string]string{k: patch.Annotations[k]}, PatchPolicy: patch.PatchPolicy}}}}
			if kerr := sidecarrules.CheckPatchMetadata(one, policy); kerr != nil {
				errs = append(errs, field.Forbidden(p.Index(i).Child("annotations").Key(k),
					fmt.Sprintf("the patch whitelist (%s) does not allow this SidecarSet to set this annotation: %v", where, kerr)))
			}
		}
	}
	if len(errs) == 0 {
		errs = field.ErrorList{field.Forbidden(p, fmt.Sprintf("refused by the patch whitelist (%s): %v", where, err))}
	}
	return errs
}

// checkInjectionRevision refuses a spec.injectionStrategy.revision whose ControllerRevision does
// not exist in namespace.
func checkInjectionRevision(ctx context.Context, r client.Reader, namespace string, set *v1beta1.SidecarSet) field.ErrorList {
	ref := set.Spec.InjectionStrategy.Revision
	if ref == nil {
		return nil
	}
	p := field.NewPath("spec", "injectionStrategy", "revision")
	switch {
	case ref.RevisionName != nil:
		rev := &appsv1.ControllerRevision{}
		err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: *ref.RevisionName}, rev)
		if apierrors.IsNotFound(err) {
			e := field.NotFound(p.Child("revisionName"), *ref.RevisionName)
			e.Detail = fmt.Sprintf("no ControllerRevision of this name in namespace %s", namespace)
			return field.ErrorList{e}
		} else if err != nil {
			return field.ErrorList{field.InternalError(p.Child("revisionName"), err)}
		}
	case ref.CustomVersion != nil:
		list := &appsv1.ControllerRevisionList{}
		if err := r.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{
			sidecarrules.RevisionOwnerLabel: set.Name, sidecarrules.CustomVersionLabel: *ref.CustomVersion}); err != nil {
			return field.ErrorList{field.InternalError(p.Child("customVersion"), err)}
		}
		if len(list.Items) == 0 {
			e := field.NotFound(p.Child("customVersion"), *ref.CustomVersion)
			e.Detail = fmt.Sprintf("no ControllerRevision of this SidecarSet in namespace %s has this custom version", namespace)
			return field.ErrorList{e}
		}
	}
	return nil
}

// sidecarPlaceholderName names the container of the checked pod of a SidecarSet that has only
// init containers (a pod needs a container).
const sidecarPlaceholderName = "kruise-sidecarset-check-placeholder"

// checkSidecarSetPod has templates check, as the API server checks pods, a pod made of the
// SidecarSet's init containers, containers and volumes (in the namespace "default", as OpenKruise
// checks it). The errors keep their paths: spec.initContainers[i], spec.containers[i] and
// spec.volumes[i] are the same in the pod and in the SidecarSet.
func checkSidecarSetPod(ctx context.Context, templates PodTemplateChecker, set *v1beta1.SidecarSet) field.ErrorList {
	spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst}
	for _, v := range set.Spec.Volumes {
		spec.Volumes = append(spec.Volumes, *v.DeepCopy())
	}
	for _, c := range set.Spec.InitContainers {
		spec.InitContainers = append(spec.InitContainers, *c.Container.DeepCopy())
	}
	for _, c := range set.Spec.Containers {
		spec.Containers = append(spec.Containers, *c.Container.DeepCopy())
	}
	placeholder := len(spec.Containers) == 0
	if placeholder {
		spec.Containers = []corev1.Container{{Name: sidecarPlaceholderName, Image: "placeholder",
			ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePolicy: corev1.TerminationMessageReadFile}}
	}
	const root = "pod"
	var errs field.ErrorList
	for _, e := range templates.Check(ctx, metav1.NamespaceDefault, &corev1.PodTemplateSpec{Spec: spec}, field.NewPath(root)) {
		f := strings.TrimPrefix(e.Field, root+".")
		switch {
		case placeholder && strings.HasPrefix(f, "spec.containers"):
			continue // the placeholder's, not the SidecarSet's
		case strings.HasPrefix(f, "spec.containers[") || strings.HasPrefix(f, "spec.initContainers[") ||
			strings.HasPrefix(f, "spec.volumes["):
			out := *e
			out.Field = f
			errs = append(errs, &out)
		default:
			errs = append(errs, field.Invalid(field.NewPath("spec"), field.OmitValueType{},
				fmt.Sprintf("the pod made of the SidecarSet's containers and volumes is invalid at %s: %s", f, e.ErrorBody())))
		}
	}
	return errs
}

// sidecarSetConflicts lists the other SidecarSets and refuses what set has in conflict with those
// that may select the same pods (conflictsWith).
func sidecarSetConflicts(ctx context.Context, r client.Reader, set *v1beta1.SidecarSet) field.ErrorList {
	list := &v1beta1.SidecarSetList{}
	if err := r.List(ctx, list); err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec"), fmt.Errorf("cannot list the SidecarSets: %w", err))}
	}
	namespaceLabels := func(name string) (map[string]string, bool) {
		ns := &corev1.Namespace{}
		if err := r.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
			return nil, false
		}
		return ns.Labels, true
	}
	return conflictsWith(set, list.Items, namespaceLabels)
}

// conflictsWith reports what set has in conflict with the SidecarSets of others (set itself, by
// name, excepted) that may select the same pods (sidecarSetsOverlap), as OpenKruise decides it:
//   - an init container whose name is one of their init containers' (whatever its definition);
//   - a container whose name is one of their containers';
//   - a volume whose name is one of their volumes' with another definition;
//   - an annotation of a patchPodMetadata entry whose policy is not Retain that one of theirs of
//     policy other than Retain also sets, when either policy is Overwrite.
//
// When several of them have a volume or an annotation of the same name, the last in name order is
// compared, as OpenKruise keeps one per name. namespaceLabels returns a namespace's labels (false
// when it cannot be read).
func conflictsWith(set *v1beta1.SidecarSet, others []v1beta1.SidecarSet, namespaceLabels func(string) (map[string]string, bool)) field.ErrorList {
	taken := takenBy(set, others, namespaceLabels)
	spec := field.NewPath("spec")
	var errs field.ErrorList
	for i, c := range set.Spec.InitContainers {
		if other, ok := taken.inits[c.Name]; ok {
			errs = append(errs, field.Forbidden(spec.Child("initContainers").Index(i).Child("name"), fmt.Sprintf(
				"SidecarSet %s, which may select the same pods, injects an init container named %s", other, c.Name)))
		}
	}
	for i, c := range set.Spec.Containers {
		if other, ok := taken.containers[c.Name]; ok {
			errs = append(errs, field.Forbidden(spec.Child("containers").Index(i).Child("name"), fmt.Sprintf(
				"SidecarSet %s, which may select the same pods, injects a container named %s", other, c.Name)))
		}
	}
	for i, v := range set.Spec.Volumes {
		o, ok := taken.volumes[v.Name]
		if !ok {
			continue
		}
		j := slices.IndexFunc(o.Spec.Volumes, func(w corev1.Volume) bool { return w.Name == v.Name })
		if !apiequality.Semantic.DeepEqual(v, o.Spec.Volumes[j]) {
			errs = append(errs, field.Forbidden(spec.Child("volumes").Index(i), fmt.Sprintf(
				"SidecarSet %s, which may select the same pods, defines the volume %s otherwise", o.Name, v.Name)))
		}
	}
	return append(errs, annotationConflicts(set, taken.annotations, spec)...)
}

// annotationSetter is a SidecarSet that patches an annotation onto pods, and how.
type annotationSetter struct {
	set    string
	policy v1beta1.SidecarSetPatchPolicyType
}

// taken is what the other SidecarSets that may select the same pods inject: init containers and
// containers (by name, to the SidecarSet), volumes and patched annotations.
type taken struct {
	inits, containers map[string]string
	volumes           map[string]*v1beta1.SidecarSet
	annotations       map[string]annotationSetter
}

// takenBy collects what the SidecarSets of others that may select set's pods inject, by name
// order (the last one wins a name).
func takenBy(set *v1beta1.SidecarSet, others []v1beta1.SidecarSet, namespaceLabels func(string) (map[string]string, bool)) taken {
	sorted := make([]*v1beta1.SidecarSet, 0, len(others))
	for i := range others {
		sorted = append(sorted, &others[i])
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	t := taken{inits: map[string]string{}, containers: map[string]string{}, volumes: map[string]*v1beta1.SidecarSet{},
		annotations: map[string]annotationSetter{}}
	for _, o := range sorted {
		if o.Name == set.Name || !sidecarSetsOverlap(set, o, namespaceLabels) {
			continue
		}
		for _, c := range o.Spec.InitContainers {
			t.inits[c.Name] = o.Name
		}
		for _, c := range o.Spec.Containers {
			t.containers[c.Name] = o.Name
		}
		for _, v := range o.Spec.Volumes {
			t.volumes[v.Name] = o
		}
		for _, patch := range o.Spec.PatchPodMetadata {
			if patch.PatchPolicy == v1beta1.SidecarSetRetainPatchPolicy {
				continue
			}
			for k := range patch.Annotations {
				t.annotations[k] = annotationSetter{o.Name, patch.PatchPolicy}
			}
		}
	}
	return t
}

// annotationConflicts refuses an annotation set patches that another SidecarSet patches too, unless
// neither overwrites it.
func annotationConflicts(set *v1beta1.SidecarSet, annotations map[string]annotationSetter, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, patch := range set.Spec.PatchPodMetadata {
		if patch.PatchPolicy == v1beta1.SidecarSetRetainPatchPolicy {
			continue
		}
		keys := make([]string, 0, len(patch.Annotations))
		for k := range patch.Annotations {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			other, ok := annotations[k]
			if !ok || (patch.PatchPolicy != v1beta1.SidecarSetOverwritePatchPolicy && other.policy != v1beta1.SidecarSetOverwritePatchPolicy) {
				continue
			}
			errs = append(errs, field.Forbidden(spec.Child("patchPodMetadata").Index(i).Child("annotations").Key(k), fmt.Sprintf(
				"SidecarSet %s, which may select the same pods, also patches this annotation (patchPolicy %s); "+
					"two SidecarSets may set one only if neither overwrites it", other.set, other.policy)))
		}
	}
	return errs
}

// sidecarSetsOverlap reports whether a and b may select the same pods, as OpenKruise decides it:
// not when their v1alpha1 namespaces differ, when both have namespace selectors that do not
// overlap (selectorsOverlap), or when a is limited to a namespace b's namespaceSelector does not
// select; not either when b is limited to a namespace and a has a namespaceSelector, unless b also
// has a namespaceSelector selecting that namespace (OpenKruise tests b's namespace against b's own
// selector there, which a valid SidecarSet does not have). Otherwise when their pod selectors
// overlap.
func sidecarSetsOverlap(a, b *v1beta1.SidecarSet, namespaceLabels func(string) (map[string]string, bool)) bool {
	aNs, _ := sidecarrules.OnlyNamespace(a)
	bNs, _ := sidecarrules.OnlyNamespace(b)
	aSel, bSel := a.Spec.NamespaceSelector, b.Spec.NamespaceSelector
	switch {
	case aNs != "" && bNs != "" && aNs != bNs:
		return false
	case aSel != nil && bSel != nil && !selectorsOverlap(aSel, bSel):
		return false
	case aNs != "" && bSel != nil && !namespaceSelected(aNs, bSel, namespaceLabels):
		return false
	case bNs != "" && aSel != nil && !namespaceSelected(bNs, bSel, namespaceLabels):
		return false
	}
	return selectorsOverlap(a.Spec.Selector, b.Spec.Selector)
}

// namespaceSelected reports whether sel (nil selects none) selects the namespace name.
func namespaceSelected(name string, sel *metav1.LabelSelector, namespaceLabels func(string) (map[string]string, bool)) bool {
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	nsLabels, ok := namespaceLabels(name)
	return ok && s.Matches(labels.Set(nsLabels))
}

// anyValue stands, in selectorValues, for an Exists requirement: any value. As in OpenKruise, it is
// a plain string, so a selector value "ALL" counts as any value too.
const anyValue = "ALL"

// selectorsOverlap is OpenKruise's test of whether two label selectors may select the same
// object: unless either is disjoint from the other (selectorDisjoint). A nil selector selects
// nothing.
func selectorsOverlap(a, b *metav1.LabelSelector) bool {
	if a == nil || b == nil {
		return false
	}
	return !selectorDisjoint(a, b) && !selectorDisjoint(b, a)
}

// selectorDisjoint is OpenKruise's one-sided test: the values a allows per key (its matchLabels
// and In requirements, anyValue for Exists) are compared with b's requirements on the same key.
// b's matchLabels value or In values outside a's, a NotIn of all of a's values, a DoesNotExist of
// a key a constrains, and an Exists of a key a does not constrain make them disjoint.
func selectorDisjoint(a, b *metav1.LabelSelector) bool {
	values := map[string][]string{}
	for k, v := range a.MatchLabels {
		values[k] = []string{v}
	}
	for _, r := range a.MatchExpressions {
		switch r.Operator {
		case metav1.LabelSelectorOpIn:
			values[r.Key] = append(values[r.Key], r.Values...)
		case metav1.LabelSelectorOpExists:
			values[r.Key] = []string{anyValue}
		}
	}
	for k, v := range b.MatchLabels {
		if allowed, ok := values[k]; ok && !slices.Contains(allowed, anyValue) && !slices.Contains(allowed, v) {
			return true
		}
	}
	for _, r := range b.MatchExpressions {
		allowed, ok := values[r.Key]
		switch r.Operator {
		case metav1.LabelSelectorOpIn:
			if ok && !slices.Contains(allowed, anyValue) && !slices.ContainsFunc(r.Values, func(v string) bool { return slices.Contains(allowed, v) }) {
				return true
			}
		case metav1.LabelSelectorOpNotIn:
			if ok && !slices.ContainsFunc(allowed, func(v string) bool { return !slices.Contains(r.Values, v) }) {
				return true
			}
		case metav1.LabelSelectorOpExists:
			if !ok {
				return true
			}
		case metav1.LabelSelectorOpDoesNotExist:
			if ok {
				return true
			}
		}
	}
	return false
}
