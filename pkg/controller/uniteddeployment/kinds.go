package uniteddeployment

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// kind is one kind of subset workload: how to list it, how to write a UnitedDeployment's template
// into it, and how to read it back. The four kinds are the four members of spec.template.
type kind interface {
	// Name is the workload's kind, for events and errors.
	Name() string
	GVK() schema.GroupVersionKind
	New() client.Object
	NewList() client.ObjectList
	Items(list client.ObjectList) []client.Object
	// HasTemplate tells whether tmpl holds this kind's template.
	HasTemplate(tmpl *appsv1alpha1.UnitedDeploymentSubsetTemplate) bool
	// Fill writes the workload spec of ud's template into obj (a new object or a copy of an existing
	// one), with selector, replicas and partition, and returns its pod template for placement.
	Fill(obj client.Object, ud *appsv1alpha1.UnitedDeployment, selector *metav1.LabelSelector, replicas, partition int32) *corev1.PodTemplateSpec
	// TemplateMeta is the metadata of ud's template of this kind.
	TemplateMeta(ud *appsv1alpha1.UnitedDeployment) (labels, annotations map[string]string)
	// Read returns what the controller needs of an existing workload.
	Read(obj client.Object) workload
}

// workload is what the controller reads of an existing subset workload.
type workload struct {
	Obj client.Object
	// Replicas and Partition are the workload's spec; HasPartition is false for kinds without a
	// partition (Deployment).
	Replicas     int32
	Partition    int32
	HasPartition bool
	// Template is the workload's pod template.
	Template *corev1.PodTemplateSpec
	// StatusReplicas and StatusReady are the workload's status.replicas and status.readyReplicas.
	StatusReplicas, StatusReady int32
}

// kinds are the subset workload kinds, in the order OpenKruise picks a template when several are
// set (validation allows one).
var kinds = []kind{statefulSetKind{}, advancedStatefulSetKind{}, cloneSetKind{}, deploymentKind{}}

// kindOf returns the kind of ud's template, nil when it has none.
func kindOf(ud *appsv1alpha1.UnitedDeployment) kind {
	for _, k := range kinds {
		if k.HasTemplate(&ud.Spec.Template) {
			return k
		}
	}
	return nil
}

type cloneSetKind struct{}

func (cloneSetKind) Name() string { return "CloneSet" }
func (cloneSetKind) GVK() schema.GroupVersionKind {
	return appsv1alpha1.GroupVersion.WithKind("CloneSet")
}
func (cloneSetKind) New() client.Object         { return &appsv1alpha1.CloneSet{} }
func (cloneSetKind) NewList() client.ObjectList { return &appsv1alpha1.CloneSetList{} }
func (cloneSetKind) Items(list client.ObjectList) []client.Object {
	l := list.(*appsv1alpha1.CloneSetList)
	out := make([]client.Object, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out
}
func (cloneSetKind) HasTemplate(t *appsv1alpha1.UnitedDeploymentSubsetTemplate) bool {
	return t.CloneSetTemplate != nil
}
func (cloneSetKind) TemplateMeta(ud *appsv1alpha1.UnitedDeployment) (map[string]string, map[string]string) {
	t := ud.Spec.Template.CloneSetTemplate
	return t.Labels, t.Annotations
}
func (cloneSetKind) Fill(obj client.Object, ud *appsv1alpha1.UnitedDeployment, sel *metav1.LabelSelector, replicas, partition int32) *corev1.PodTemplateSpec {
	set := obj.(*appsv1alpha1.CloneSet)
	set.Spec = *ud.Spec.Template.CloneSetTemplate.Spec.DeepCopy()
	set.Spec.Selector = sel
	set.Spec.Replicas = ptr.To(replicas)
	set.Spec.UpdateStrategy.Partition = ptr.To(intstr.FromInt32(partition))
	return &set.Spec.Template
}
func (cloneSetKind) Read(obj client.Object) workload {
	set := obj.(*appsv1alpha1.CloneSet)
	w := workload{Obj: obj, Replicas: ptr.Deref(set.Spec.Replicas, 1), HasPartition: true, Template: &set.Spec.Template,
		StatusReplicas: set.Status.Replicas, StatusReady: set.Status.ReadyReplicas}
	if p := set.Spec.UpdateStrategy.Partition; p != nil {
		v, _ := intstr.GetScaledValueFromIntOrPercent(p, int(w.Replicas), true)
		w.Partition = int32(v)
	}
	return w
}

type advancedStatefulSetKind struct{}

func (advancedStatefulSetKind) Name() string { return "StatefulSet.apps.kruise.io" }
func (advancedStatefulSetKind) GVK() schema.GroupVersionKind {
	return appsv1beta1.GroupVersion.WithKind("StatefulSet")
}
func (advancedStatefulSetKind) New() client.Object         { return &appsv1beta1.StatefulSet{} }
func (advancedStatefulSetKind) NewList() client.ObjectList { return &appsv1beta1.StatefulSetList{} }
func (advancedStatefulSetKind) Items(list client.ObjectList) []client.Object {
	l := list.(*appsv1beta1.StatefulSetList)
	out := make([]client.Object, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out
}
func (advancedStatefulSetKind) HasTemplate(t *appsv1alpha1.UnitedDeploymentSubsetTemplate) bool {
	return t.AdvancedStatefulSetTemplate != nil
}
func (advancedStatefulSetKind) TemplateMeta(ud *appsv1alpha1.UnitedDeployment) (map[string]string, map[string]string) {
	t := ud.Spec.Template.AdvancedStatefulSetTemplate
	return t.Labels, t.Annotations
}
func (advancedStatefulSetKind) Fill(obj client.Object, ud *appsv1alpha1.UnitedDeployment, sel *metav1.LabelSelector, replicas, partition int32) *corev1.PodTemplateSpec {
	set := obj.(*appsv1beta1.StatefulSet)
	set.Spec = *ud.Spec.Template.AdvancedStatefulSetTemplate.Spec.DeepCopy()
	set.Spec.Selector = sel
	set.Spec.Replicas = ptr.To(replicas)
	if set.Spec.UpdateStrategy.Type == "" || set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		if set.Spec.UpdateStrategy.RollingUpdate == nil {
			set.Spec.UpdateStrategy.RollingUpdate = &appsv1beta1.StatefulSetRollingUpdateStrategy{}
		}
		set.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To(partition)
	}
	return &set.Spec.Template
}
func (advancedStatefulSetKind) Read(obj client.Object) workload {
	set := obj.(*appsv1beta1.StatefulSet)
	w := workload{Obj: obj, Replicas: ptr.Deref(set.Spec.Replicas, 1), HasPartition: true, Template: &set.Spec.Template,
		StatusReplicas: set.Status.Replicas, StatusReady: set.Status.ReadyReplicas}
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		w.Partition = ptr.Deref(ru.Partition, 0)
	}
	return w
}

type statefulSetKind struct{}

func (statefulSetKind) Name() string { return "StatefulSet" }
func (statefulSetKind) GVK() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("StatefulSet")
}
func (statefulSetKind) New() client.Object         { return &appsv1.StatefulSet{} }
func (statefulSetKind) NewList() client.ObjectList { return &appsv1.StatefulSetList{} }
func (statefulSetKind) Items(list client.ObjectList) []client.Object {
	l := list.(*appsv1.StatefulSetList)
	out := make([]client.Object, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out
}
func (statefulSetKind) HasTemplate(t *appsv1alpha1.UnitedDeploymentSubsetTemplate) bool {
	return t.StatefulSetTemplate != nil
}
func (statefulSetKind) TemplateMeta(ud *appsv1alpha1.UnitedDeployment) (map[string]string, map[string]string) {
	t := ud.Spec.Template.StatefulSetTemplate
	return t.Labels, t.Annotations
}
func (statefulSetKind) Fill(obj client.Object, ud *appsv1alpha1.UnitedDeployment, sel *metav1.LabelSelector, replicas, partition int32) *corev1.PodTemplateSpec {
	set := obj.(*appsv1.StatefulSet)
	set.Spec = *ud.Spec.Template.StatefulSetTemplate.Spec.DeepCopy()
	set.Spec.Selector = sel
	set.Spec.Replicas = ptr.To(replicas)
	if set.Spec.UpdateStrategy.Type == "" || set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		if set.Spec.UpdateStrategy.RollingUpdate == nil {
			set.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
		set.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To(partition)
	}
	return &set.Spec.Template
}
func (statefulSetKind) Read(obj client.Object) workload {
	set := obj.(*appsv1.StatefulSet)
	w := workload{Obj: obj, Replicas: ptr.Deref(set.Spec.Replicas, 1), HasPartition: true, Template: &set.Spec.Template,
		StatusReplicas: set.Status.Replicas, StatusReady: set.Status.ReadyReplicas}
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		w.Partition = ptr.Deref(ru.Partition, 0)
	}
	return w
}

type deploymentKind struct{}

func (deploymentKind) Name() string { return "Deployment" }
func (deploymentKind) GVK() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("Deployment")
}
func (deploymentKind) New() client.Object         { return &appsv1.Deployment{} }
func (deploymentKind) NewList() client.ObjectList { return &appsv1.DeploymentList{} }
func (deploymentKind) Items(list client.ObjectList) []client.Object {
	l := list.(*appsv1.DeploymentList)
	out := make([]client.Object, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out
}
func (deploymentKind) HasTemplate(t *appsv1alpha1.UnitedDeploymentSubsetTemplate) bool {
	return t.DeploymentTemplate != nil
}
func (deploymentKind) TemplateMeta(ud *appsv1alpha1.UnitedDeployment) (map[string]string, map[string]string) {
	t := ud.Spec.Template.DeploymentTemplate
	return t.Labels, t.Annotations
}

// Fill ignores partition: a Deployment has none (as in OpenKruise, a manual partition does not
// hold a Deployment subset back).
func (deploymentKind) Fill(obj client.Object, ud *appsv1alpha1.UnitedDeployment, sel *metav1.LabelSelector, replicas, _ int32) *corev1.PodTemplateSpec {
	d := obj.(*appsv1.Deployment)
	d.Spec = *ud.Spec.Template.DeploymentTemplate.Spec.DeepCopy()
	d.Spec.Selector = sel
	d.Spec.Replicas = ptr.To(replicas)
	return &d.Spec.Template
}
func (deploymentKind) Read(obj client.Object) workload {
	d := obj.(*appsv1.Deployment)
	return workload{Obj: obj, Replicas: ptr.Deref(d.Spec.Replicas, 1), Template: &d.Spec.Template,
		StatusReplicas: d.Status.Replicas, StatusReady: d.Status.ReadyReplicas}
}

// SubsetWorkloads are the workloads of the kind ud's template names that ud controls, their kind
// set, read through r (kubectl-kruise's rollout restart reads them so).
func SubsetWorkloads(ctx context.Context, r client.Reader, ud *appsv1alpha1.UnitedDeployment) ([]client.Object, error) {
	k := kindOf(ud)
	if k == nil {
		return nil, fmt.Errorf("uniteddeployment %q has no workload template", ud.Name)
	}
	list := k.NewList()
	if err := r.List(ctx, list, client.InNamespace(ud.Namespace)); err != nil {
		return nil, fmt.Errorf("list %ss: %w", k.Name(), err)
	}
	var out []client.Object
	for _, o := range k.Items(list) {
		if metav1.IsControlledBy(o, ud) {
			o.GetObjectKind().SetGroupVersionKind(k.GVK())
			out = append(out, o)
		}
	}
	return out, nil
}
