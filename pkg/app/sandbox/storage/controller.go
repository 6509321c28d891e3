package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// Workers per queue: claims (provisioning, resizing) and volumes (folders, reclaiming).
const (
	claimWorkers  = 4
	volumeWorkers = 2
)

// resync replays every object now and then, so that a missed event costs a delay, not a volume.
const resync = time.Minute

// Controller provisions, grows and reclaims the volumes of the classes of Provisioner, keeping
// their folders under one root folder. See the package documentation for its invariants.
type Controller struct {
	cs       kubernetes.Interface
	root     string
	recorder record.EventRecorder

	factory informers.SharedInformerFactory
	claims  corelisters.PersistentVolumeClaimLister
	volumes corelisters.PersistentVolumeLister
	classes storagelisters.StorageClassLister
	synced  []cache.InformerSynced

	// claimQueue holds namespace/name keys of claims, volumeQueue names of volumes. A key is
	// never synced by two workers at once, so one volume's folder has one writer at a time.
	claimQueue  workqueue.TypedRateLimitingInterface[string]
	volumeQueue workqueue.TypedRateLimitingInterface[string]
}

// New returns a Controller of the cluster cs whose volumes are folders under root; recorder
// receives the events it reports on claims.
func New(cs kubernetes.Interface, root string, recorder record.EventRecorder) (*Controller, error) {
	f := informers.NewSharedInformerFactory(cs, resync)
	claims := f.Core().V1().PersistentVolumeClaims()
	volumes := f.Core().V1().PersistentVolumes()
	classes := f.Storage().V1().StorageClasses()
	c := &Controller{
		cs: cs, root: root, recorder: recorder, factory: f,
		claims: claims.Lister(), volumes: volumes.Lister(), classes: classes.Lister(),
		synced: []cache.InformerSynced{claims.Informer().HasSynced, volumes.Informer().HasSynced, classes.Informer().HasSynced},
		claimQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "claims"}),
		volumeQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "volumes"}),
	}
	_, err := claims.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(c.claimQueue, obj) },
		UpdateFunc: func(_, obj any) { enqueue(c.claimQueue, obj) },
	})
	if err != nil {
		return nil, err
	}
	_, err = volumes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(c.volumeQueue, obj) },
		UpdateFunc: func(_, obj any) { enqueue(c.volumeQueue, obj) },
		DeleteFunc: func(obj any) { enqueue(c.volumeQueue, obj) },
	})
	if err != nil {
		return nil, err
	}
	_, err = classes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueueClaimsOf(obj) },
		UpdateFunc: func(_, obj any) { c.enqueueClaimsOf(obj) },
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func enqueue(q workqueue.TypedRateLimitingInterface[string], obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		q.Add(key)
	}
}

// enqueueClaimsOf queues the claims of a class that appeared or changed (it may now serve them).
func (c *Controller) enqueueClaimsOf(obj any) {
	class, ok := obj.(*storagev1.StorageClass)
	if !ok || class.Provisioner != Provisioner {
		return
	}
	all, err := c.claims.List(labels.Everything())
	if err != nil {
		return
	}
	for _, claim := range all {
		if ptr.Deref(claim.Spec.StorageClassName, "") == class.Name {
			enqueue(c.claimQueue, claim)
		}
	}
}

// Run starts the informers, waits for their caches, removes the folders of volumes that no longer
// exist, calls ready, and serves until ctx ends.
func (c *Controller) Run(ctx context.Context, ready func()) error {
	defer c.claimQueue.ShutDown()
	defer c.volumeQueue.ShutDown()
	c.factory.Start(ctx.Done())
	defer c.factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return errors.New("the informers' caches did not sync before the end")
	}
	if err := c.removeOrphanFolders(ctx); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Storage provisioner ready", "provisioner", Provisioner, "root", c.root)
	ready()
	for range claimWorkers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) { work(ctx, "claims", c.claimQueue, c.syncClaim) }, time.Second)
	}
	for range volumeWorkers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) { work(ctx, "volumes", c.volumeQueue, c.syncVolume) }, time.Second)
	}
	<-ctx.Done()
	return nil
}

// work syncs keys from q until q shuts down; a failed sync is retried with backoff.
func work(ctx context.Context, name string, q workqueue.TypedRateLimitingInterface[string], sync func(context.Context, string) error) {
	for {
		key, quit := q.Get()
		if quit {
			return
		}
		if err := sync(ctx, key); err != nil {
			klog.FromContext(ctx).Error(err, "Sync failed; retrying", "queue", name, "key", key)
			q.AddRateLimited(key)
		} else {
			q.Forget(key)
		}
		q.Done(key)
	}
}

// syncClaim provisions a volume for a pending claim of a class of Provisioner, or grows the volume
// of a bound one.
func (c *Controller) syncClaim(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	claim, err := c.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil // kube-controller-manager releases its volume; syncVolume reclaims it
	}
	if err != nil {
		return err
	}
	className := ptr.Deref(claim.Spec.StorageClassName, "")
	if className == "" {
		return nil
	}
	class, err := c.classes.Get(className)
	if apierrors.IsNotFound(err) {
		return nil // the class's arrival queues the claim again
	}
	if err != nil {
		return err
	}
	if class.Provisioner != Provisioner {
		return nil
	}
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("claim", klog.KObj(claim)))
	if claim.Spec.VolumeName == "" {
		return c.provision(ctx, claim, class)
	}
	pv, err := c.volumes.Get(claim.Spec.VolumeName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if size, ok := planResize(claim, class, pv); ok {
		return c.resize(ctx, claim, pv, size)
	}
	return nil
}

// syncVolume keeps the folder of a volume of Provisioner while the volume exists, removes it once
// the volume is gone, and deletes a volume that is to be reclaimed.
func (c *Controller) syncVolume(ctx context.Context, name string) error {
	pv, err := c.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return c.removeFolder(ctx, name)
	}
	if err != nil {
		return err
	}
	if !ours(pv) {
		return nil
	}
	if pv.DeletionTimestamp == nil {
		if err := makeFolder(volumeDir(c.root, name)); err != nil {
			return fmt.Errorf("make the folder of volume %s: %w", name, err)
		}
	}
	if reclaimable(pv) {
		return c.reclaim(ctx, pv)
	}
	return nil
}
