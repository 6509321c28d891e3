package storage

import (
	"context"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// Event reasons on claims, as the external provisioner and resizer report them.
const (
	reasonProvisioned = "ProvisioningSucceeded"
	reasonResized     = "VolumeResizeSuccessful"
)

// provision creates the folder and the volume of a pending claim; an existing volume is kept.
func (c *Controller) provision(ctx context.Context, claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) error {
	log := klog.FromContext(ctx)
	pv, why := planVolume(claim, class, c.root)
	if pv == nil {
		log.V(4).Info("No volume to provision", "reason", why)
		return nil
	}
	if _, err := c.volumes.Get(pv.Name); err == nil {
		return nil
	}
	if err := makeFolder(pv.Spec.HostPath.Path); err != nil {
		return fmt.Errorf("make the folder of volume %s: %w", pv.Name, err)
	}
	_, err := c.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create volume %s: %w", pv.Name, err)
	}
	size := pv.Spec.Capacity[corev1.ResourceStorage]
	log.Info("Provisioned volume", "volume", pv.Name, "size", size.String())
	c.recorder.Eventf(claim, corev1.EventTypeNormal, reasonProvisioned,
		"Successfully provisioned volume %s of %s (hostPath %s)", pv.Name, size.String(), pv.Spec.HostPath.Path)
	return nil
}

// resize grows pv to size, then records the new size in claim's status. Each step is skipped when
// already done, so a retry after a conflict picks up where it stopped.
func (c *Controller) resize(ctx context.Context, claim *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume, size resource.Quantity) error {
	if capacity := pv.Spec.Capacity[corev1.ResourceStorage]; capacity.Cmp(size) < 0 {
		grown := pv.DeepCopy()
		if grown.Spec.Capacity == nil {
			grown.Spec.Capacity = corev1.ResourceList{}
		}
		grown.Spec.Capacity[corev1.ResourceStorage] = size
		if _, err := c.cs.CoreV1().PersistentVolumes().Update(ctx, grown, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("grow volume %s to %s: %w", pv.Name, size.String(), err)
		}
	}
	updated := claim.DeepCopy()
	updated.Status = resizedStatus(claim, size)
	if _, err := c.cs.CoreV1().PersistentVolumeClaims(claim.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("record the new size %s of claim %s: %w", size.String(), klog.KObj(claim), err)
	}
	klog.FromContext(ctx).Info("Resized volume", "volume", pv.Name, "size", size.String())
	c.recorder.Eventf(claim, corev1.EventTypeNormal, reasonResized, "Resized volume %s to %s", pv.Name, size.String())
	return nil
}

// reclaim deletes a released volume; its folder goes once the volume is gone.
func (c *Controller) reclaim(ctx context.Context, pv *corev1.PersistentVolume) error {
	err := c.cs.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pv.UID}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone already, or another volume of that name: its own events decide
	}
	if err != nil {
		return fmt.Errorf("delete released volume %s: %w", pv.Name, err)
	}
	klog.FromContext(ctx).Info("Deleted released volume", "volume", pv.Name)
	return nil
}

// removeFolder removes the folder of a volume that no longer exists.
func (c *Controller) removeFolder(ctx context.Context, name string) error {
	dir := volumeDir(c.root, name)
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove the folder of deleted volume %s: %w", name, err)
	}
	klog.FromContext(ctx).Info("Removed the folder of a deleted volume", "volume", name, "path", dir)
	return nil
}

// removeOrphanFolders removes the folders of volumes deleted while no Controller ran. Hidden
// entries (a name no volume can have) are not volumes' and are left alone.
func (c *Controller) removeOrphanFolders(ctx context.Context) error {
	entries, err := os.ReadDir(c.root)
	if err != nil {
		return fmt.Errorf("read the volumes' folder: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if _, err := c.volumes.Get(e.Name()); apierrors.IsNotFound(err) {
			if err := c.removeFolder(ctx, e.Name()); err != nil {
				return err
			}
		}
	}
	return nil
}

// makeFolder creates a volume's folder, writable by any container user.
func makeFolder(dir string) error {
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	return os.Chmod(dir, 0o777) //nolint:gosec // a scratch volume of a local sandbox, shared with containers of any user
}
