package uniteddeployment

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/subset"
)

// target is one subset workload as the UnitedDeployment wants it.
type target struct {
	Subset    *appsv1alpha1.UnitedDeploymentSubset
	Revision  string
	Replicas  int32
	Partition int32
}

// build returns the subset workload for t as OpenKruise writes it: a new object when existing is
// nil, else a copy of existing with the UnitedDeployment's template written over it. Labels: the
// template's, the selector's matchLabels, RevisionLabel and SubsetNameLabel, over the workload's
// own; annotations: the template's and SubsetPatchAnnotation (the patch, "" without one), over
// the workload's own; the spec is the template's, with the UnitedDeployment's selector plus
// SubsetNameLabel, the replicas and the partition; the pod template gets SubsetNameLabel and
// RevisionLabel, then the subset's node terms, tolerations and patch (subset.ApplyToTemplate).
// ud and existing are not modified.
func build(k kind, ud *appsv1alpha1.UnitedDeployment, t target, existing client.Object) (client.Object, error) {
	var obj client.Object
	if existing == nil {
		obj = k.New()
		obj.SetNamespace(ud.Namespace)
		obj.SetGenerateName(SubsetWorkloadPrefix(ud.Name, t.Subset.Name))
		obj.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(ud, appsv1alpha1.GroupVersion.WithKind("UnitedDeployment"))})
	} else {
		obj = existing.DeepCopyObject().(client.Object)
	}
	tmplLabels, tmplAnnotations := k.TemplateMeta(ud)
	labels := maps.Clone(obj.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, tmplLabels)
	if ud.Spec.Selector != nil {
		maps.Copy(labels, ud.Spec.Selector.MatchLabels)
	}
	labels[RevisionLabel] = t.Revision
	labels[SubsetNameLabel] = t.Subset.Name
	obj.SetLabels(labels)
	annotations := maps.Clone(obj.GetAnnotations())
	if annotations == nil {
		annotations = map[string]string{}
	}
	maps.Copy(annotations, tmplAnnotations)
	annotations[SubsetPatchAnnotation] = string(t.Subset.Patch.Raw)
	obj.SetAnnotations(annotations)

	sel := &metav1.LabelSelector{}
	if ud.Spec.Selector != nil {
		sel = ud.Spec.Selector.DeepCopy()
	}
	if sel.MatchLabels == nil {
		sel.MatchLabels = map[string]string{}
	}
	sel.MatchLabels[SubsetNameLabel] = t.Subset.Name
	tmpl := k.Fill(obj, ud, sel, t.Replicas, t.Partition)
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	tmpl.Labels[SubsetNameLabel] = t.Subset.Name
	tmpl.Labels[RevisionLabel] = t.Revision
	placed, err := subset.ApplyToTemplate(tmpl, t.Subset)
	if err != nil {
		return nil, fmt.Errorf("subset %s: patch: %w", t.Subset.Name, err)
	}
	*tmpl = *placed
	return obj, nil
}

// needsWrite tells why the existing workload w differs from what t wants, "" when it does not:
// another revision, replicas or partition (OpenKruise's triggers), another subset patch, or a
// placement (node affinity, tolerations) other than the subset gives, which OpenKruise leaves
// until the next template change. want is build's result for t.
func needsWrite(w workload, t target, want workload) string {
	switch {
	case w.Obj.GetLabels()[RevisionLabel] != t.Revision:
		return fmt.Sprintf("revision %q → %s", w.Obj.GetLabels()[RevisionLabel], t.Revision)
	case w.Replicas != t.Replicas:
		return fmt.Sprintf("replicas %d → %d", w.Replicas, t.Replicas)
	case w.HasPartition && w.Partition != t.Partition:
		return fmt.Sprintf("partition %d → %d", w.Partition, t.Partition)
	}
	if patch, ok := w.Obj.GetAnnotations()[SubsetPatchAnnotation]; !ok || patch != string(t.Subset.Patch.Raw) {
		return "subset patch changed"
	}
	if !equality.Semantic.DeepEqual(affinityOf(w.Template), affinityOf(want.Template)) ||
		!equality.Semantic.DeepEqual(w.Template.Spec.Tolerations, want.Template.Spec.Tolerations) {
		return "subset node terms or tolerations changed"
	}
	return ""
}

func affinityOf(t *corev1.PodTemplateSpec) *corev1.NodeAffinity {
	if t.Spec.Affinity == nil {
		return nil
	}
	return t.Spec.Affinity.NodeAffinity
}
