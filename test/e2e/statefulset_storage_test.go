package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/test/harness"
)

// withClaims gives set a claim template "data" of size in class (nil: the default class),
// mounted at /data.
func withClaims(set *appsv1beta1.StatefulSet, size string, class *string) {
	set.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}}
	set.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
}

func claim(t *testing.T, ns, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return pvc
}

// Each pod gets its claims <template>-<set>-<ordinal>, bound and mounted; with whenScaled Delete a
// scale-in (and a reserved ordinal) takes the claims of the pods it removes, other claims stay;
// with whenDeleted Retain they outlive the set.
func TestStatefulSetClaimsAndRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newStatefulSet(ns, "claims", 3, appsv1.ParallelPodManagement)
	withClaims(set, "1Mi", nil)
	set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType}
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "claims", "3 ready with bound claims", func(s *appsv1beta1.StatefulSet) bool {
		return s.Status.ReadyReplicas == 3 && len(s.Status.VolumeClaims) == 1 && s.Status.VolumeClaims[0].CompatibleReadyReplicas == 3
	})
	for name, p := range podsByName(t, ns, "app=claims") {
		pvc := claim(t, ns, "data-"+name)
		if pvc == nil || pvc.Status.Phase != corev1.ClaimBound {
			t.Fatalf("claim data-%s: %v", name, pvc)
		}
		if len(p.Spec.Volumes) == 0 || p.Spec.Volumes[0].PersistentVolumeClaim == nil || p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != pvc.Name {
			t.Errorf("pod %s volumes %v, want claim %s", name, p.Spec.Volumes, pvc.Name)
		}
	}
	patchStatefulSet(t, c, set, `{"spec":{"replicas":2,"reserveOrdinals":[1]}}`) // replicas 0 and 2
	harness.Eventually(t, 60*time.Second, "claims of ordinals 1 and 2 gone with their pods, 0 and 3 kept", func() (bool, string) {
		var seen []string
		for _, ord := range []int{0, 1, 2, 3} {
			if pvc := claim(t, ns, fmt.Sprintf("data-claims-%d", ord)); pvc != nil && pvc.DeletionTimestamp == nil {
				seen = append(seen, pvc.Name)
			}
		}
		return strings.Join(seen, ",") == "data-claims-0,data-claims-2", fmt.Sprint(seen)
	})
	if err := c.Delete(ctx, set); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 60*time.Second, "pods gone with the set", func() (bool, string) {
		n := len(podsByName(t, ns, "app=claims"))
		return n == 0, fmt.Sprintf("%d pods", n)
	})
	if claim(t, ns, "data-claims-0") == nil {
		t.Error("whenDeleted Retain: claim data-claims-0 was deleted with the set")
	}
}

// B2: a claim template that only grows (no new revision) expands every pod's claim in place under
// volumeClaimUpdateStrategy OnPodRollingUpdate, one pod at a time, no pod recreated or restarted,
// and status.volumeClaims reports it; a class that cannot expand is refused at admission.
func TestStatefulSetExpandsClaimsInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newStatefulSet(ns, "grow", 3, appsv1.OrderedReadyPodManagement)
	withClaims(set, "1Mi", ptr.To("expandable"))
	set.Spec.VolumeClaimUpdateStrategy.Type = appsv1beta1.OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	ready := waitStatefulSet(t, c, ns, "grow", "3 ready", func(s *appsv1beta1.StatefulSet) bool {
		return s.Status.ReadyReplicas == 3 && len(s.Status.VolumeClaims) == 1 && s.Status.VolumeClaims[0].CompatibleReadyReplicas == 3
	})
	before := podsByName(t, ns, "app=grow")
	patchStatefulSet(t, c, set, `{"spec":{"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"storageClassName":"expandable","resources":{"requests":{"storage":"2Mi"}}}}]}}`)
	done := waitStatefulSet(t, c, ns, "grow", "claims expanded", func(s *appsv1beta1.StatefulSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.VolumeClaims[0].CompatibleReadyReplicas == 3
	})
	if done.Status.UpdateRevision != ready.Status.UpdateRevision {
		t.Errorf("update revision %s → %s: a claim-only change is no new revision", ready.Status.UpdateRevision, done.Status.UpdateRevision)
	}
	for _, ord := range []int{0, 1, 2} {
		pvc := claim(t, ns, fmt.Sprintf("data-grow-%d", ord))
		if got := pvc.Status.Capacity[corev1.ResourceStorage]; got.Cmp(resource.MustParse("2Mi")) != 0 {
			t.Errorf("claim %s capacity %s, want 2Mi", pvc.Name, got.String())
		}
	}
	after := podsByName(t, ns, "app=grow")
	for name, p := range before {
		if a := after[name]; a == nil || a.UID != p.UID || restarts(a) != restarts(p) {
			t.Errorf("pod %s recreated or restarted", name)
		}
	}

	fixed := newStatefulSet(ns, "fixed", 1, appsv1.OrderedReadyPodManagement)
	withClaims(fixed, "1Mi", ptr.To("standard"))
	fixed.Spec.VolumeClaimUpdateStrategy.Type = appsv1beta1.OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy
	if err := c.Create(ctx, fixed); err != nil {
		t.Fatal(err)
	}
	err := c.Patch(ctx, fixed, rawMerge(`{"spec":{"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"storageClassName":"standard","resources":{"requests":{"storage":"2Mi"}}}}]}}`))
	if err == nil || !strings.Contains(err.Error(), "does not allow volume expansion") {
		t.Errorf("growing a claim of class standard: %v, want a refusal naming allowVolumeExpansion", err)
	}
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n += c.RestartCount
	}
	return n
}

// B1: maxUnavailable above 1 with OrderedReady (upstream's MaxUnavailableStatefulSet) updates that
// many pods at once.
func TestStatefulSetOrderedReadyMaxUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newStatefulSet(ns, "maxu", 6, appsv1.OrderedReadyPodManagement)
	set.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(3))
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "maxu", "6 ready", func(s *appsv1beta1.StatefulSet) bool { return s.Status.ReadyReplicas == 6 })
	notReady, stop := watchNotReady(t, ns, "app=maxu")
	patchStatefulSet(t, c, set, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	waitStatefulSet(t, c, ns, "maxu", "rolled out", harness.StatefulSetRolledOut(6))
	stop()
	if peak := notReady(); peak < 2 || peak > 3 {
		t.Errorf("at most %d pods NotReady at once, want 2 or 3 (maxUnavailable 3)", peak)
	}
}

func rawMerge(patch string) client.Patch { return client.RawPatch(types.MergePatchType, []byte(patch)) }
