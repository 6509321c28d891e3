package workloadfinder

import (
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=clonesets,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=statefulsets,verbs=list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=list;watch

// Watched are the workload kinds whose creation and selector changes a registrar whose entries
// copy a target workload's selector follows at once (the others within its resync).
func Watched() []client.Object {
	return []client.Object{&v1alpha1.CloneSet{}, &v1beta1.StatefulSet{}, &appsv1.Deployment{}, &appsv1.StatefulSet{}}
}
