package storage

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func class(name string) *storagev1.StorageClass {
	for _, c := range Classes() {
		if c.Name == name {
			return c
		}
	}
	panic("no class " + name)
}

func claim(size string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data", UID: "u1"},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(StandardClass),
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}},
	}
}

func TestClassesOneDefaultOnlyExpandableGrows(t *testing.T) {
	defaults := 0
	for _, c := range Classes() {
		if c.Annotations[annDefaultClass] == "true" {
			defaults++
			if c.Name != StandardClass {
				t.Errorf("default class is %s, want %s", c.Name, StandardClass)
			}
		}
		if c.Provisioner != Provisioner || *c.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
			t.Errorf("class %s: provisioner %s, reclaim %s", c.Name, c.Provisioner, *c.ReclaimPolicy)
		}
		if want := c.Name == ExpandableClass; *c.AllowVolumeExpansion != want {
			t.Errorf("class %s allows expansion: %v, want %v", c.Name, *c.AllowVolumeExpansion, want)
		}
	}
	if defaults != 1 {
		t.Errorf("%d default classes, want 1", defaults)
	}
}

func TestPlanVolume(t *testing.T) {
	pv, why := planVolume(claim("3Mi"), class(StandardClass), "/sb/volumes")
	if pv == nil {
		t.Fatalf("no volume for a pending claim: %s", why)
	}
	if pv.Name != "pvc-u1" || pv.Spec.HostPath.Path != "/sb/volumes/pvc-u1" {
		t.Errorf("volume %s at %s; want pvc-u1 at /sb/volumes/pvc-u1", pv.Name, pv.Spec.HostPath.Path)
	}
	if got := pv.Spec.Capacity[corev1.ResourceStorage]; got.String() != "3Mi" {
		t.Errorf("capacity %s, want the request 3Mi", got.String())
	}
	if ref := pv.Spec.ClaimRef; ref == nil || ref.UID != "u1" || ref.Namespace != "ns" || ref.Name != "data" {
		t.Errorf("claimRef %+v; want the claim ns/data with its UID", ref)
	}
	if pv.Spec.StorageClassName != StandardClass || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || !ours(pv) {
		t.Errorf("class %q, reclaim %s, provisioned by %q", pv.Spec.StorageClassName, pv.Spec.PersistentVolumeReclaimPolicy, pv.Annotations[annProvisionedBy])
	}

	wffc := class(StandardClass)
	wffc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)
	other := class(StandardClass)
	other.Provisioner = "example.com/other"
	for name, tc := range map[string]struct {
		mutate func(*corev1.PersistentVolumeClaim)
		class  *storagev1.StorageClass
	}{
		"bound claim":            {func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv" }, class(StandardClass)},
		"claim being deleted":    {func(c *corev1.PersistentVolumeClaim) { c.DeletionTimestamp = &metav1.Time{} }, class(StandardClass)},
		"block volume":           {func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock) }, class(StandardClass)},
		"another provisioner":    {func(*corev1.PersistentVolumeClaim) {}, other},
		"first consumer not yet": {func(*corev1.PersistentVolumeClaim) {}, wffc},
	} {
		c := claim("1Mi")
		tc.mutate(c)
		if pv, _ := planVolume(c, tc.class, "/r"); pv != nil {
			t.Errorf("%s: planned volume %s, want none", name, pv.Name)
		}
	}
	c := claim("1Mi")
	c.Annotations = map[string]string{annSelectedNode: "kwok-node-0"}
	if pv, why := planVolume(c, wffc, "/r"); pv == nil {
		t.Errorf("WaitForFirstConsumer claim with a selected node: no volume (%s)", why)
	}
}

// bound returns a claim of class bound to its planned volume, with capacity size and request req.
func bound(className, size, req string) (*corev1.PersistentVolumeClaim, *corev1.PersistentVolume) {
	c := claim(size)
	c.Spec.StorageClassName = ptr.To(className)
	pv, _ := planVolume(c, class(className), "/r")
	c.Spec.VolumeName = pv.Name
	c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(req)
	c.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
		Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}
	return c, pv
}

func TestPlanResize(t *testing.T) {
	c, pv := bound(ExpandableClass, "1Mi", "2Mi")
	if size, ok := planResize(c, class(ExpandableClass), pv); !ok || size.String() != "2Mi" {
		t.Errorf("expandable claim 1Mi -> 2Mi: resize %v to %s; want 2Mi", ok, size.String())
	}
	for name, tc := range map[string]struct{ class, size, req string }{
		"class without expansion": {StandardClass, "1Mi", "2Mi"},
		"request met":             {ExpandableClass, "2Mi", "2Mi"},
		"request below capacity":  {ExpandableClass, "2Mi", "1Mi"},
	} {
		c, pv := bound(tc.class, tc.size, tc.req)
		if size, ok := planResize(c, class(tc.class), pv); ok {
			t.Errorf("%s: resize to %s, want none", name, size.String())
		}
	}
	c, pv = bound(ExpandableClass, "1Mi", "2Mi")
	pv.Spec.ClaimRef.UID = "another"
	if _, ok := planResize(c, class(ExpandableClass), pv); ok {
		t.Error("resized a volume bound to another claim")
	}
	c, pv = bound(ExpandableClass, "1Mi", "2Mi")
	c.Status.Phase = corev1.ClaimPending
	if _, ok := planResize(c, class(ExpandableClass), pv); ok {
		t.Error("resized an unbound claim")
	}
}

func TestResizedStatusLeavesNoResizeInProgress(t *testing.T) {
	c, _ := bound(ExpandableClass, "1Mi", "2Mi")
	c.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{
		corev1.ResourceStorage: corev1.PersistentVolumeClaimControllerResizeInProgress}
	c.Status.Conditions = []corev1.PersistentVolumeClaimCondition{
		{Type: corev1.PersistentVolumeClaimResizing, Status: corev1.ConditionTrue},
		{Type: "Other", Status: corev1.ConditionTrue},
	}
	st := resizedStatus(c, resource.MustParse("2Mi"))
	if got := st.Capacity[corev1.ResourceStorage]; got.String() != "2Mi" {
		t.Errorf("capacity %s, want 2Mi", got.String())
	}
	if got := st.AllocatedResources[corev1.ResourceStorage]; got.String() != "2Mi" {
		t.Errorf("allocatedResources %s, want 2Mi", got.String())
	}
	if st.AllocatedResourceStatuses != nil {
		t.Errorf("allocatedResourceStatuses %v left", st.AllocatedResourceStatuses)
	}
	if len(st.Conditions) != 1 || st.Conditions[0].Type != "Other" {
		t.Errorf("conditions %v; want only the unrelated one", st.Conditions)
	}
	if got := c.Status.Capacity[corev1.ResourceStorage]; got.String() != "1Mi" {
		t.Errorf("the claim itself was changed: capacity %s", got.String())
	}
}

func TestReclaimable(t *testing.T) {
	_, pv := bound(StandardClass, "1Mi", "1Mi")
	for phase, want := range map[corev1.PersistentVolumePhase]bool{
		corev1.VolumeBound: false, corev1.VolumeAvailable: false, corev1.VolumeReleased: true, corev1.VolumeFailed: true,
	} {
		pv.Status.Phase = phase
		if got := reclaimable(pv); got != want {
			t.Errorf("phase %s: reclaimable %v, want %v", phase, got, want)
		}
	}
	pv.Status.Phase = corev1.VolumeReleased
	pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	if reclaimable(pv) {
		t.Error("a Retain volume is reclaimable")
	}
	pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
	delete(pv.Annotations, annProvisionedBy)
	if reclaimable(pv) {
		t.Error("a volume of another provisioner is reclaimable")
	}
}
