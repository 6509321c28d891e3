package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
)

// The world the campaign runs: in namespace ns, two CloneSets (web under a PodUnavailableBudget
// and a SidecarSet, api spread over the zones by a WorkloadSpread), an Advanced StatefulSet with
// claims it keeps (db, its pods kept in their zones by a PersistentPodState), an Advanced
// DaemonSet (agent) and a UnitedDeployment of a CloneSet per zone (ud; kinds.go), all updating in
// place. The driver changes their images, partitions, replicas and pauses; the checker holds them
// to their limits.
const (
	ns = "soak"
	// budgetMaxUnavailable is web's PodUnavailableBudget: tighter than web's own maxUnavailable,
	// so Kruise's updates must ask it.
	budgetMaxUnavailable = 1
	sidecarName          = "log"
	image                = "registry.example/app:v%d"
)

// workload is one workload of the world, as the driver and the checker name it.
type workload struct {
	Kind, Name string
	// MaxUnavailable is its update strategy's, as a number of pods.
	MaxUnavailable int
	// Scalable: the driver changes its replicas (bounds MinReplicas..MaxReplicas).
	Scalable                 bool
	MinReplicas, MaxReplicas int32
}

var world = []workload{
	{Kind: "CloneSet", Name: "web", MaxUnavailable: 2, Scalable: true, MinReplicas: 3, MaxReplicas: 10},
	{Kind: "CloneSet", Name: "api", MaxUnavailable: 1, Scalable: true, MinReplicas: 2, MaxReplicas: 8},
	{Kind: "StatefulSet", Name: "db", MaxUnavailable: 2, Scalable: true, MinReplicas: 2, MaxReplicas: 6},
	{Kind: "DaemonSet", Name: "agent", MaxUnavailable: 1},
	// ud's MaxUnavailable is each subset's CloneSet's.
	{Kind: "UnitedDeployment", Name: udName, MaxUnavailable: 1, Scalable: true, MinReplicas: 2, MaxReplicas: 6},
}

func podSpec(version int) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: fmt.Sprintf(image, version)}},
		TerminationGracePeriodSeconds: ptr.To[int64](1)}
}

// initialReplicas is what a scalable workload starts with.
func initialReplicas(w workload) int32 { return w.MinReplicas + 2 }

func labelsOf(name string) map[string]string { return map[string]string{"app": name} }

// create makes the world's namespace and objects.
func create(ctx context.Context, c client.Client) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	sidecars := &appsv1beta1.SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: sidecarName}, Spec: appsv1beta1.SidecarSetSpec{
		Selector:          &metav1.LabelSelector{MatchLabels: labelsOf("web")},
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
		Containers:        []appsv1beta1.SidecarSetContainer{{Container: corev1.Container{Name: sidecarName, Image: "registry.example/log:v1"}}},
	}}
	if err := c.Create(ctx, sidecars); err != nil {
		return err
	}
	// Pods are checked for the sidecar from their first: the SidecarSet's injection is registered
	// before any is made (its registrar's annotation shows its generation).
	if err := waitFor(ctx, 30*time.Second, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(sidecars), sidecars); err != nil {
			return false, nil
		}
		return sidecars.Annotations[sidecarrules.RegisteredAnnotation] == strconv.FormatInt(sidecars.Generation, 10), nil
	}); err != nil {
		return fmt.Errorf("SidecarSet %s not registered: %w", sidecarName, err)
	}
	objs := []client.Object{
		&policyv1alpha1.PodUnavailableBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: policyv1alpha1.PodUnavailableBudgetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labelsOf("web")}, MaxUnavailable: ptr.To(intstr.FromInt32(budgetMaxUnavailable))}},
		// Before their workloads: each pod is placed, or given its zone, from the first.
		newSpread(), newPersistentPodState(),
	}
	for _, w := range world {
		objs = append(objs, newWorkload(w))
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

func newWorkload(w workload) client.Object {
	meta := metav1.ObjectMeta{Namespace: ns, Name: w.Name}
	sel := &metav1.LabelSelector{MatchLabels: labelsOf(w.Name)}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labelsOf(w.Name)}, Spec: podSpec(1)}
	maxUnavailable := ptr.To(intstr.FromInt32(int32(w.MaxUnavailable)))
	switch w.Kind {
	case "UnitedDeployment":
		return newUnitedDeployment(w, tmpl, maxUnavailable)
	case "CloneSet":
		return &appsv1alpha1.CloneSet{ObjectMeta: meta, Spec: appsv1alpha1.CloneSetSpec{Replicas: ptr.To(initialReplicas(w)), Selector: sel, Template: tmpl,
			UpdateStrategy: appsv1alpha1.CloneSetUpdateStrategy{Type: appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, MaxUnavailable: maxUnavailable}}}
	case "StatefulSet":
		tmpl.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
		claim := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}}
		return &appsv1beta1.StatefulSet{ObjectMeta: meta, Spec: appsv1beta1.StatefulSetSpec{Replicas: ptr.To(initialReplicas(w)), Selector: sel,
			Template: tmpl, ServiceName: w.Name, PodManagementPolicy: appsv1.ParallelPodManagement,
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{claim},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType},
			UpdateStrategy: appsv1beta1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1beta1.StatefulSetRollingUpdateStrategy{PodUpdatePolicy: appsv1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy,
					MaxUnavailable: maxUnavailable}}}}
	default:
		return &appsv1beta1.DaemonSet{ObjectMeta: meta, Spec: appsv1beta1.DaemonSetSpec{Selector: sel, Template: tmpl,
			UpdateStrategy: appsv1beta1.DaemonSetUpdateStrategy{Type: appsv1beta1.DaemonSetRollingUpdateStrategyType,
				RollingUpdate: &appsv1beta1.DaemonSetRollingUpdate{Type: appsv1beta1.DaemonSetInplaceRollingUpdateType, MaxUnavailable: maxUnavailable}}}}
	}
}

// waitFor polls cond every 200 ms until it holds, fails, or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
