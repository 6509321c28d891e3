package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/test/harness"
)

// staticVolumes creates n unclassed PersistentVolumes for the claims of a test to bind to (the
// sandbox has no provisioner; kube-controller-manager binds claims to matching volumes).
func staticVolumes(t *testing.T, prefix string, n int) {
	ctx := context.Background()
	for i := 0; i < n; i++ {
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i)},
			Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("4Mi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/nonexistent/" + prefix}}}}
		if _, err := cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cs.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
		})
	}
}

// volumeClaimTemplates: each pod gets data-<pod>; a pod deleted by someone else is replaced under
// the same name with the same claim; the controller's own deletions take their claims along; a
// template change recreates the pods; with disablePVCReuse a deleted pod's claim is released.
func TestCloneSetVolumeClaimTemplates(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	staticVolumes(t, ns, 12)
	clone := newCloneSet(ns, "data", 2, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	// The container mounts its claim template's volume, the usual way to use one (the webhook
	// validates the template with the claims' volumes added, as the pods get them).
	clone.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	clone.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(""), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}}}
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	ready := func(n int32) func(*appsv1alpha1.CloneSet) bool {
		return func(cs *appsv1alpha1.CloneSet) bool {
			return cs.Status.ObservedGeneration == cs.Generation && cs.Status.Replicas == n && cs.Status.ReadyReplicas == n &&
				cs.Status.UpdatedReadyReplicas == n
		}
	}
	claim := func(name string) *corev1.PersistentVolumeClaim {
		pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return pvc
	}
	gone := func(name string) func() (bool, string) { // deleted, or being deleted
		return func() (bool, string) {
			pvc := claim(name)
			return pvc == nil || pvc.DeletionTimestamp != nil, name
		}
	}
	waitCloneSet(t, c, ns, "data", "2 ready pods with claims", ready(2))
	before := podsByName(t, ns, "app=data")
	for name, p := range before {
		pvc := claim("data-" + name)
		if pvc == nil || pvc.Labels[appsv1alpha1.CloneSetInstanceIDLabelKey] != p.Labels[appsv1alpha1.CloneSetInstanceIDLabelKey] ||
			!metav1.IsControlledBy(pvc, clone) {
			t.Fatalf("pod %s: claim %+v", name, pvc)
		}
		i := slices.IndexFunc(p.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "data" })
		if i < 0 || p.Spec.Volumes[i].PersistentVolumeClaim == nil || p.Spec.Volumes[i].PersistentVolumeClaim.ClaimName != "data-"+name {
			t.Errorf("pod %s has no volume data → data-%s", name, name)
		}
	}
	var victim, other string
	for name := range before {
		if victim == "" {
			victim = name
		} else {
			other = name
		}
	}
	victimClaim := claim("data-" + victim)

	// Deleted by someone else: same name, same claim.
	if err := cs.CoreV1().Pods(ns).Delete(ctx, victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, time.Minute, "pod "+victim+" replaced under its name", func() (bool, string) {
		p, ok := podsByName(t, ns, "app=data")[victim]
		return ok && p.UID != before[victim].UID && p.DeletionTimestamp == nil, fmt.Sprint(ok)
	})
	waitCloneSet(t, c, ns, "data", "2 ready again", ready(2))
	if pvc := claim("data-" + victim); pvc == nil || pvc.UID != victimClaim.UID {
		t.Errorf("the replacement of %s did not reuse its claim: %+v", victim, pvc)
	}

	// Deleted by the controller (scale in): the claim goes too.
	patchCloneSet(t, c, clone, fmt.Sprintf(`{"spec":{"replicas":1,"scaleStrategy":{"podsToDelete":[%q]}}}`, victim))
	waitCloneSet(t, c, ns, "data", "1 ready", ready(1))
	harness.Eventually(t, 30*time.Second, "the scaled-in pod's claim deleted", gone("data-"+victim))

	// A claim-template-only change (as in OpenKruise) makes no new revision and touches no pod: the
	// pod keeps its claim; claims made from now on follow the live spec.
	rev := waitCloneSet(t, c, ns, "data", "1 ready", ready(1)).Status.UpdateRevision
	uid := podsByName(t, ns, "app=data")[other].UID
	patchCloneSet(t, c, clone, `{"spec":{"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"storageClassName":"","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"2Mi"}}}}]}}`)
	got := waitCloneSet(t, c, ns, "data", "the claim-template change observed", ready(1))
	if got.Status.UpdateRevision != rev || podsByName(t, ns, "app=data")[other].UID != uid {
		t.Errorf("a claim-template-only change made revision %s (was %s) or replaced pod %s", got.Status.UpdateRevision, rev, other)
	}
	if pvc := claim("data-" + other); pvc == nil || pvc.Spec.Resources.Requests.Storage().String() != "1Mi" {
		t.Errorf("pod %s: claim %+v, want its 1Mi claim kept", other, pvc)
	}

	// With RecreatePodWhenChangeVCTInCloneSetGate, a template change made with a claim template
	// change recreates the pod, with a new claim.
	if err := sb.RestartKruiseManager(ctx, "RecreatePodWhenChangeVCTInCloneSetGate=true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.RestartKruiseManager(context.Background(), ""); err != nil {
			t.Errorf("restore the manager's gates: %v", err)
		}
	})
	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}},"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"storageClassName":"","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"3Mi"}}}}]}}`)
	waitCloneSet(t, c, ns, "data", "recreated with the new claim template", func(cs *appsv1alpha1.CloneSet) bool {
		return ready(1)(cs) && cs.Status.UpdatedReplicas == 1 && cs.Status.UpdateRevision != rev
	})
	after := podsByName(t, ns, "app=data")
	if _, ok := after[other]; ok || len(after) != 1 {
		t.Fatalf("pods %v: %s was not recreated", after, other)
	}
	harness.Eventually(t, 30*time.Second, "the recreated pod's old claim deleted", gone("data-"+other))
	for name := range after {
		if pvc := claim("data-" + name); pvc == nil || pvc.Spec.Resources.Requests.Storage().String() != "3Mi" {
			t.Errorf("pod %s: claim %+v, want 3Mi", name, pvc)
		}
		other = name
	}

	// disablePVCReuse: a pod deleted by someone else is replaced under a new name; its claim is released.
	patchCloneSet(t, c, clone, `{"spec":{"scaleStrategy":{"disablePVCReuse":true}}}`)
	if err := cs.CoreV1().Pods(ns).Delete(ctx, other, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, time.Minute, "a replacement under a new name", func() (bool, string) {
		ps := podsByName(t, ns, "app=data")
		_, old := ps[other]
		return !old && len(ps) == 1, fmt.Sprint(len(ps))
	})
	harness.Eventually(t, 30*time.Second, "the released claim deleted", gone("data-"+other))
	waitCloneSet(t, c, ns, "data", "1 ready", ready(1))
}
