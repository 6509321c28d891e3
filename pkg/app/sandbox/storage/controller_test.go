package storage

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

// eventually polls cond until it holds, failing with what it last saw after a deadline.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var seen string
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		var ok bool
		ok, seen = cond()
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s; last observed: %s", what, seen)
	}
}

// A claim's life against a fake API server, with this test in the role of kube-controller-manager:
// provisioned (folder and pre-bound volume), grown, then reclaimed once released; an orphan folder
// left by an earlier run is removed at start.
func TestControllerProvisionsGrowsAndReclaims(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := t.TempDir()
	orphan := filepath.Join(root, "pvc-gone")
	if err := os.Mkdir(orphan, 0o755); err != nil {
		t.Fatal(err)
	}
	cs := fake.NewClientset()
	if err := EnsureClasses(ctx, cs); err != nil {
		t.Fatal(err)
	}
	c, err := New(cs, root, record.NewFakeRecorder(100))
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, func() { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Run ended before it was ready: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not ready after 10s")
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("orphan folder %s survived the start (stat: %v)", orphan, err)
	}

	pvc := claim("1Mi")
	pvc.Spec.StorageClassName = ptr.To(ExpandableClass)
	if _, err := cs.CoreV1().PersistentVolumeClaims("ns").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pv *corev1.PersistentVolume
	eventually(t, "a volume for the claim", func() (bool, string) {
		pv, err = cs.CoreV1().PersistentVolumes().Get(ctx, "pvc-u1", metav1.GetOptions{})
		return err == nil, ""
	})
	dir := filepath.Join(root, "pvc-u1")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("volume folder %s: %v", dir, err)
	}

	// kube-controller-manager binds them; then the claim asks for more.
	pvc, _ = cs.CoreV1().PersistentVolumeClaims("ns").Get(ctx, "data", metav1.GetOptions{})
	pvc.Spec.VolumeName = pv.Name
	pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Mi")
	pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
		Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}
	if _, err := cs.CoreV1().PersistentVolumeClaims("ns").Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "volume and claim at 2Mi", func() (bool, string) {
		pv, _ := cs.CoreV1().PersistentVolumes().Get(ctx, "pvc-u1", metav1.GetOptions{})
		got, _ := cs.CoreV1().PersistentVolumeClaims("ns").Get(ctx, "data", metav1.GetOptions{})
		pvSize, claimSize := pv.Spec.Capacity[corev1.ResourceStorage], got.Status.Capacity[corev1.ResourceStorage]
		return pvSize.String() == "2Mi" && claimSize.String() == "2Mi", "volume " + pvSize.String() + ", claim " + claimSize.String()
	})

	// The claim goes; kube-controller-manager releases the volume.
	if err := cs.CoreV1().PersistentVolumeClaims("ns").Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pv, _ = cs.CoreV1().PersistentVolumes().Get(ctx, "pvc-u1", metav1.GetOptions{})
	pv.Status.Phase = corev1.VolumeReleased
	if _, err := cs.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the released volume and its folder gone", func() (bool, string) {
		_, err := cs.CoreV1().PersistentVolumes().Get(ctx, "pvc-u1", metav1.GetOptions{})
		_, statErr := os.Stat(dir)
		return err != nil && os.IsNotExist(statErr), "volume get: " + errString(err) + ", folder stat: " + errString(statErr)
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
