package advancedcronjob

import (
	"fmt"
	"maps"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// ScheduledAtAnnotation on a child job is the tick it runs for, RFC 3339 in the schedule's zone
// (OpenKruise's annotation; the controller reads its last run back from it).
const ScheduledAtAnnotation = "apps.kruise.io/scheduled-at"

// controllerKind is the kind of the owner references the controller writes.
var controllerKind = v1beta1.GroupVersion.WithKind("AdvancedCronJob")

// ChildName is the name of the child that runs the tick at: the cron job's name and the tick's
// Unix time in seconds, as OpenKruise names it. It is deterministic, so one tick never makes two
// children.
func ChildName(acjName string, at time.Time) string {
	return fmt.Sprintf("%s-%d", acjName, at.Unix())
}

// newChild is the job of acj's template kind that runs the tick at: the template's labels,
// annotations and spec, the scheduled-at annotation, and acj as its controller.
func newChild(acj *v1beta1.AdvancedCronJob, kind v1beta1.AdvancedCronJobTemplateKind, at time.Time) client.Object {
	meta := func(tpl *metav1.ObjectMeta) metav1.ObjectMeta {
		annotations := maps.Clone(tpl.Annotations)
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[ScheduledAtAnnotation] = at.Format(time.RFC3339)
		labels := maps.Clone(tpl.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		return metav1.ObjectMeta{Name: ChildName(acj.Name, at), Namespace: acj.Namespace, Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(acj, controllerKind)}}
	}
	t := &acj.Spec.Template
	switch kind {
	case v1beta1.AdvancedCronJobJobTemplateKind:
		return &batchv1.Job{ObjectMeta: meta(&t.JobTemplate.ObjectMeta), Spec: *t.JobTemplate.Spec.DeepCopy()}
	case v1beta1.AdvancedCronJobBroadcastJobTemplateKind:
		return &v1beta1.BroadcastJob{ObjectMeta: meta(&t.BroadcastJobTemplate.ObjectMeta), Spec: *t.BroadcastJobTemplate.Spec.DeepCopy()}
	case v1beta1.AdvancedCronJobImageListPullJobTemplateKind:
		return &v1beta1.ImageListPullJob{ObjectMeta: meta(&t.ImageListPullJobTemplate.ObjectMeta), Spec: *t.ImageListPullJobTemplate.Spec.DeepCopy()}
	}
	return nil
}

// childRef is the status.active entry of a child of kind.
func childRef(acj *v1beta1.AdvancedCronJob, kind v1beta1.AdvancedCronJobTemplateKind, name string, uid types.UID) corev1.ObjectReference {
	apiVersion := v1beta1.GroupVersion.String()
	if kind == v1beta1.AdvancedCronJobJobTemplateKind {
		apiVersion = batchv1.SchemeGroupVersion.String()
	}
	return corev1.ObjectReference{APIVersion: apiVersion, Kind: string(kind), Namespace: acj.Namespace, Name: name, UID: uid}
}
