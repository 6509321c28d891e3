package access

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func TestPodProbeMarkerNeedsExecOnlyForExecProbes(t *testing.T) {
	ppm := &v1alpha1.PodProbeMarker{ObjectMeta: metav1.ObjectMeta{Namespace: "team"}}
	ppm.Spec.Probes = []v1alpha1.PodProbeMarkerProbe{{Name: "tcp"}}
	ppm.Spec.Probes[0].Probe.TCPSocket = &corev1.TCPSocketAction{}
	if got := PodProbeMarker(ppm); len(got) != 2 || got[0].String() != `patch pods in namespace "team"` || got[1].String() != `patch pods/status in namespace "team"` {
		t.Errorf("tcp probe: %v", got)
	}
	ppm.Spec.Probes = append(ppm.Spec.Probes, v1alpha1.PodProbeMarkerProbe{Name: "exec"})
	ppm.Spec.Probes[1].Probe.Exec = &corev1.ExecAction{Command: []string{"cat", "/token"}}
	got := PodProbeMarker(ppm)
	if len(got) != 3 || got[2].String() != `create pods/exec in namespace "team"` || got[2].Why != "spec.probes[1].probe.exec (a command run in the selected pods)" {
		t.Errorf("exec probe: %v", got)
	}
}

func TestWorkloadSpreadNeedsUpdateOnItsTarget(t *testing.T) {
	ws := &v1alpha1.WorkloadSpread{ObjectMeta: metav1.ObjectMeta{Namespace: "team"}}
	ws.Spec.TargetReference = &v1alpha1.WorkloadSpreadTargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	got := WorkloadSpread(ws, schema.GroupResource{Group: "apps", Resource: "deployments"})
	if len(got) != 1 || got[0].String() != `update deployments.apps "web" in namespace "team"` {
		t.Errorf("%v", got)
	}
}

func TestStatefulSetClaimsNeedDeleteOnlyWhenExistingClaimsWouldBeAdopted(t *testing.T) {
	set := &v1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "team", UID: "u1"}}
	set.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	claims := []corev1.PersistentVolumeClaim{
		{ObjectMeta: metav1.ObjectMeta{Name: "data-db-0"}},                                                        // someone else's, named like ours
		{ObjectMeta: metav1.ObjectMeta{Name: "data-db-1", OwnerReferences: []metav1.OwnerReference{{UID: "u1"}}}}, // ours already
		{ObjectMeta: metav1.ObjectMeta{Name: "data-dbx-0"}},                                                       // another set's
		{ObjectMeta: metav1.ObjectMeta{Name: "logs-db-0"}},                                                        // no template of ours
	}
	if got := AdoptedClaims(set, claims); got != nil {
		t.Errorf("Retain adopts nothing: %v", got)
	}
	set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType}
	got := AdoptedClaims(set, claims)
	if len(got) != 1 || got[0] != "data-db-0" {
		t.Fatalf("adopted %v", got)
	}
	perms := StatefulSetClaims(set, got)
	if len(perms) != 1 || perms[0].String() != `delete persistentvolumeclaims in namespace "team"` {
		t.Errorf("%v", perms)
	}
	if StatefulSetClaims(set, nil) != nil {
		t.Errorf("no adopted claim needs no right")
	}
}
