package validating

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules every workload kind applies to its selector, pod template and claim templates, in
// the same words for each kind.

// validateSelector: spec.selector is required, not empty and valid, and it selects the
// template's labels (reported at spec.template.metadata.labels). kind names the workload in
// messages.
func validateSelector(kind string, sel *metav1.LabelSelector, templateLabels map[string]string, path *field.Path) field.ErrorList {
	p := path.Child("selector")
	if sel == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		return field.ErrorList{field.Invalid(p, sel, fmt.Sprintf("empty selector is invalid for a %s: it would select every pod", kind))}
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, p)
	if len(errs) > 0 {
		return errs
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return field.ErrorList{field.Invalid(p, sel, err.Error())}
	}
	if !s.Matches(labels.Set(templateLabels)) {
		return field.ErrorList{field.Invalid(path.Child("template", "metadata", "labels"), templateLabels,
			"`selector` does not match template `labels`")}
	}
	return nil
}

// validateTemplateBasics checks what OpenKruise checks of a workload's template beyond
// Kubernetes' pod template validation, and the basics of that validation (the dry run checks the
// rest): containers with names and images, restartPolicy Always (or unset), no
// activeDeadlineSeconds. kind names the workload in messages.
func validateTemplateBasics(kind string, t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, p.Child("metadata", "labels"))
	cp := p.Child("spec", "containers")
	if len(t.Spec.Containers) == 0 {
		errs = append(errs, field.Required(cp, "a pod needs at least one container"))
	}
	seen := map[string]bool{}
	for i := range t.Spec.Containers {
		errs = append(errs, validateContainerIdentity(&t.Spec.Containers[i], seen, cp.Index(i))...)
	}
	// A workload's pods run until the workload says otherwise (the API server defaults "" to Always).
	if rp := t.Spec.RestartPolicy; rp != "" && rp != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(p.Child("spec", "restartPolicy"), rp, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(p.Child("spec", "activeDeadlineSeconds"),
			fmt.Sprintf("a %s's pods must not end on a deadline: the %s would replace them forever", kind, kind)))
	}
	return errs
}

// validateClaimTemplates checks the volumes the claim templates become (each the pod volume of its
// name): the name is a DNS label no other claim template has, and every volumeMount and
// volumeDevice of the template names a volume or a claim template. With replaces, a template
// volume of a claim template's name is replaced by the claim (the StatefulSet's rule); without,
// it is refused (the CloneSet's, whose validation appends the claim volumes to the template's).
// The dry run of a changed template sees the claim volumes too (withClaimVolumes), but an update
// changing only the claim templates is not dry-run, hence these checks.
func validateClaimTemplates(tmpl *corev1.PodTemplateSpec, claimTemplates []corev1.PersistentVolumeClaim, replaces bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	volumes := map[string]bool{}
	for _, v := range tmpl.Spec.Volumes {
		volumes[v.Name] = true
	}
	claims := map[string]bool{}
	for i, c := range claimTemplates {
		np := path.Child("volumeClaimTemplates").Index(i).Child("metadata", "name")
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(np, "each claim template becomes the pod volume of its name"))
		case claims[c.Name]:
			errs = append(errs, field.Duplicate(np, c.Name))
		case volumes[c.Name] && !replaces:
			e := field.Duplicate(np, c.Name)
			e.Detail = "spec.template.spec.volumes has a volume of this name, and each claim template becomes the pod volume of its name"
			errs = append(errs, e)
		default:
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(np, c.Name, "each claim template becomes the pod volume of its name: "+msg))
			}
		}
		claims[c.Name] = true
	}
	tp := path.Child("template", "spec")
	for _, list := range []struct {
		name       string
		containers []corev1.Container
	}{{"initContainers", tmpl.Spec.InitContainers}, {"containers", tmpl.Spec.Containers}} {
		for i, c := range list.containers {
			cp := tp.Child(list.name).Index(i)
			for j, m := range c.VolumeMounts {
				if m.Name != "" && !volumes[m.Name] && !claims[m.Name] {
					errs = append(errs, volumeNotFound(cp.Child("volumeMounts").Index(j).Child("name"), m.Name))
				}
			}
			for j, d := range c.VolumeDevices {
				if d.Name != "" && !volumes[d.Name] && !claims[d.Name] {
					errs = append(errs, volumeNotFound(cp.Child("volumeDevices").Index(j).Child("name"), d.Name))
				}
			}
		}
	}
	return errs
}

func volumeNotFound(p *field.Path, name string) *field.Error {
	e := field.NotFound(p, name)
	e.Detail = "no volume of this name in spec.template.spec.volumes or spec.volumeClaimTemplates"
	return e
}

// inPlaceOnlyChange is the error at spec.template when the template changed from old to cur in
// more than what an InPlaceOnly update may change (container images; labels and annotations), or
// nil. setting names the field that asks for InPlaceOnly, for the message.
func inPlaceOnlyChange(old, cur *corev1.PodTemplateSpec, setting string, path *field.Path) *field.Error {
	changed := templateSpecChangesBesidesImages(&old.Spec, &cur.Spec)
	if len(changed) == 0 {
		return nil
	}
	return field.Forbidden(path.Child("template"), fmt.Sprintf(
		"%s is InPlaceOnly, which allows no change of the template's spec but container images "+
			"(labels and annotations may change); changed: %s", setting, strings.Join(changed, ", ")))
}

// templateSpecChangesBesidesImages returns the paths at which cur differs from old other than the
// image of a container that has one in both (same index): OpenKruise's InPlaceOnly rule, which
// allows a JSON patch of the template spec made only of replacements of /containers/N/image.
// Both are compared in their JSON form, as OpenKruise compares them (so "1Gi" and "1073741824"
// differ). At most maxChangedPaths paths are listed.
func templateSpecChangesBesidesImages(old, cur *corev1.PodSpec) []string {
	restored := cur.DeepCopy()
	for i := range restored.Containers {
		if i < len(old.Containers) && old.Containers[i].Image != "" && restored.Containers[i].Image != "" {
			restored.Containers[i].Image = old.Containers[i].Image
		}
	}
	return jsonChanges(old, restored, "spec.template.spec")
}

// jsonChanges returns the paths (under root) at which the JSON forms of a and b differ, at most
// maxChangedPaths of them.
func jsonChanges(a, b any, root string) []string {
	av, errA := jsonValue(a)
	bv, errB := jsonValue(b)
	if errA != nil || errB != nil {
		return []string{root + " (not comparable as JSON)"}
	}
	var paths []string
	jsonDiff(av, bv, root, &paths)
	return paths
}

const maxChangedPaths = 5

func jsonValue(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(raw, &out)
	return out, err
}

// jsonDiff appends to paths the paths at which the decoded JSON values a and b differ.
func jsonDiff(a, b any, path string, paths *[]string) {
	if len(*paths) > maxChangedPaths || reflect.DeepEqual(a, b) {
		return
	}
	add := func(p string) {
		if len(*paths) == maxChangedPaths {
			p = "…"
		}
		*paths = append(*paths, p)
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			add(path)
			return
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			jsonDiff(av[k], bv[k], path+"."+k, paths)
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			add(path)
			return
		}
		for i := range av {
			jsonDiff(av[i], bv[i], fmt.Sprintf("%s[%d]", path, i), paths)
		}
	default:
		add(path)
	}
}

// validateContainerIdentity checks a container's name (set, a DNS label, not among seen, to which
// it is added) and image (set: Kubernetes' template validation accepts " "), at path p.
func validateContainerIdentity(c *corev1.Container, seen map[string]bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case c.Name == "":
		errs = append(errs, field.Required(p.Child("name"), ""))
	case seen[c.Name]:
		errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
	default:
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
		}
	}
	seen[c.Name] = true
	if c.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	}
	return errs
}
