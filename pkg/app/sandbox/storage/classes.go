package storage

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Provisioner is the provisioner name of the sandbox's StorageClasses: the Controller serves
// claims of every class that names it, these two and any a user adds.
const Provisioner = "sandbox.kruise.io/hostpath"

// The StorageClasses every sandbox has.
const (
	// StandardClass is the default class; its volumes cannot grow (the API server refuses a
	// larger request).
	StandardClass = "standard"
	// ExpandableClass is StandardClass with volume expansion allowed.
	ExpandableClass = "expandable"
)

// annDefaultClass marks the class that claims without spec.storageClassName get.
const annDefaultClass = "storageclass.kubernetes.io/is-default-class"

// Classes returns the StorageClasses every sandbox installs: StandardClass (the default) and
// ExpandableClass, both binding immediately and deleting a volume once its claim is gone.
func Classes() []*storagev1.StorageClass {
	class := func(name string, expand bool) *storagev1.StorageClass {
		c := &storagev1.StorageClass{
			ObjectMeta:           metav1.ObjectMeta{Name: name},
			Provisioner:          Provisioner,
			ReclaimPolicy:        ptr.To(corev1.PersistentVolumeReclaimDelete),
			VolumeBindingMode:    ptr.To(storagev1.VolumeBindingImmediate),
			AllowVolumeExpansion: ptr.To(expand),
		}
		if name == StandardClass {
			c.Annotations = map[string]string{annDefaultClass: "true"}
		}
		return c
	}
	return []*storagev1.StorageClass{class(StandardClass, false), class(ExpandableClass, true)}
}

// EnsureClasses creates the Classes that are missing; existing ones are left as they are.
func EnsureClasses(ctx context.Context, cs kubernetes.Interface) error {
	for _, c := range Classes() {
		_, err := cs.StorageV1().StorageClasses().Create(ctx, c, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create StorageClass %s: %w", c.Name, err)
		}
	}
	return nil
}
