package statefulset

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

func claimTemplate(class, size string) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
		StorageClassName: ptr.To(class), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}
}

// claimsReconciler is a reconciler on a fake client whose claim patches fail with patchErr (nil:
// they pass), recording events.
func claimsReconciler(t *testing.T, patchErr error) (*Reconciler, *events.FakeRecorder) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if patchErr != nil {
				return patchErr
			}
			return c.Patch(ctx, obj, patch, opts...)
		}}).Build()
	rec := events.NewFakeRecorder(10)
	return &Reconciler{Base: workloadloop.Base{Client: c, Recorder: rec}, AutoDeletePVC: true}, rec
}

func claimSet(template corev1.PersistentVolumeClaim) *v1beta1.StatefulSet {
	s := spec(1, appsv1.ParallelPodManagement)
	s.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{template}
	s.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType}
	return &v1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "set-uid"}, Spec: s}
}

func drained(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// A claim made for a pod is a Normal SuccessfulCreate, as OpenKruise reports it; one already there
// is not reported again.
func TestClaimCreatedEvent(t *testing.T) {
	r, rec := claimsReconciler(t, nil)
	set := claimSet(claimTemplate("standard", "1Gi"))
	obs := &observation{claims: map[string]*corev1.PersistentVolumeClaim{}}
	if err := r.ensureClaims(context.Background(), set, obs, 0); err != nil {
		t.Fatal(err)
	}
	got := drained(rec)
	if len(got) != 1 || !strings.HasPrefix(got[0], "Normal SuccessfulCreate") || !strings.Contains(got[0], "data-web-0") {
		t.Fatalf("events %q, want one Normal SuccessfulCreate naming data-web-0", got)
	}
	if err := r.ensureClaims(context.Background(), set, obs, 0); err != nil {
		t.Fatal(err)
	}
	if got := drained(rec); len(got) != 0 {
		t.Fatalf("a claim already there reported again: %q", got)
	}
}

// A claim whose owners cannot be set is a Warning FailedUpdate, as OpenKruise reports it.
func TestClaimOwnerFailedUpdateEvent(t *testing.T) {
	r, rec := claimsReconciler(t, errors.New("conflict"))
	set := claimSet(claimTemplate("standard", "1Gi"))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0", UID: "pod-uid"}}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-web-0", UID: "pvc-uid"}}
	obs := &observation{snap: snap(set.Spec, healthyPod(0, "web-old")), pods: map[string]*corev1.Pod{"web-0": pod},
		claims: map[string]*corev1.PersistentVolumeClaim{"data-web-0": pvc}}
	err := r.syncClaimOwners(context.Background(), set, obs, &podcontrol.Batch{})
	if err == nil {
		t.Fatal("a failed patch was not returned")
	}
	got := drained(rec)
	if len(got) != 1 || !strings.HasPrefix(got[0], "Warning FailedUpdate") || !strings.Contains(got[0], "data-web-0") {
		t.Fatalf("events %q, want one Warning FailedUpdate naming data-web-0", got)
	}
}

// Expanding a claim whose template changed beyond the storage request warns FailedUpdatePVC,
// naming what differs; the request is expanded still.
func TestClaimFailedUpdatePVCEvent(t *testing.T) {
	r, rec := claimsReconciler(t, nil)
	set := claimSet(claimTemplate("fast", "2Gi"))
	old := claimTemplate("standard", "1Gi")
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-web-0"}, Spec: old.Spec}
	if err := r.Client.Create(context.Background(), pvc); err != nil {
		t.Fatal(err)
	}
	obs := &observation{claims: map[string]*corev1.PersistentVolumeClaim{"data-web-0": pvc}}
	if err := r.expandClaims(context.Background(), set, obs, "web-0", &podcontrol.Batch{}); err != nil {
		t.Fatal(err)
	}
	got := drained(rec)
	if len(got) != 1 || !strings.HasPrefix(got[0], "Warning FailedUpdatePVC") || !strings.Contains(got[0], "storageClassName") {
		t.Fatalf("events %q, want one Warning FailedUpdatePVC naming storageClassName", got)
	}
}

func TestClaimDiff(t *testing.T) {
	base := claimTemplate("standard", "1Gi")
	for name, tc := range map[string]struct {
		claim func(*corev1.PersistentVolumeClaim)
		want  string
	}{
		"same": {func(*corev1.PersistentVolumeClaim) {}, ""},
		"larger request only": {func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("5Gi")
		}, ""},
		"class": {func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("fast") }, "storageClassName"},
		"modes": {func(c *corev1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}, "accessModes"},
		"volume mode": {func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock) },
			""}, // the template sets none: the API server's default is no difference
	} {
		t.Run(name, func(t *testing.T) {
			claim := base.DeepCopy()
			claim.Spec.Resources.Requests = base.Spec.Resources.Requests.DeepCopy()
			tc.claim(claim)
			if got := claimDiff(claim, &base); got != tc.want {
				t.Errorf("claimDiff = %q, want %q", got, tc.want)
			}
		})
	}
}
