package containermeta

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/node/criruntime"
)

// The kubelet's labels and annotations on the containers it creates.
const (
	containerHashAnnotation = "io.kubernetes.container.hash"
	restartCountAnnotation  = "io.kubernetes.container.restartCount"
)

// Reporter keeps the annotation of the pods of one node.
type Reporter struct {
	Client  kubernetes.Interface
	Runtime internalapi.RuntimeService
	// RuntimeName prefixes container IDs as the kubelet does (containerd://ID).
	RuntimeName string
	Node        string
	Log         logr.Logger
}

// Wanted reports whether the daemon reports on pod: it takes in-place updates (it has the
// InPlaceUpdateReady readiness gate) and is not terminating.
func Wanted(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	return slices.ContainsFunc(pod.Spec.ReadinessGates, func(g corev1.PodReadinessGate) bool {
		return g.ConditionType == appspub.InPlaceUpdateReady
	})
}

// Meta builds the report of pod from the runtime's containers of it: per container name the newest
// container, in the order of the pod's spec.
func Meta(pod *corev1.Pod, containers []*runtimeapi.Container, runtimeName string) appspub.RuntimeContainerMetaSet {
	newest := map[string]*runtimeapi.Container{}
	for _, c := range containers {
		name := c.Labels[criruntime.ContainerNameLabel]
		if cur, ok := newest[name]; !ok || c.CreatedAt > cur.CreatedAt {
			newest[name] = c
		}
	}
	set := appspub.RuntimeContainerMetaSet{Containers: []appspub.RuntimeContainerMeta{}}
	for _, sc := range pod.Spec.Containers {
		c, ok := newest[sc.Name]
		if !ok {
			continue
		}
		restarts, _ := strconv.ParseInt(c.Annotations[restartCountAnnotation], 10, 32)
		hash, _ := strconv.ParseUint(c.Annotations[containerHashAnnotation], 16, 64)
		set.Containers = append(set.Containers, appspub.RuntimeContainerMeta{Name: sc.Name,
			ContainerID: runtimeName + "://" + c.Id, RestartCount: int32(restarts),
			Hashes: appspub.RuntimeContainerHashes{PlainHash: hash}})
	}
	return set
}

// Run watches the node's pods until ctx ends.
func (r *Reporter) Run(ctx context.Context) error {
	factory := informers.NewSharedInformerFactoryWithOptions(r.Client, 10*time.Minute,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", r.Node).String()
		}))
	pods := factory.Core().V1().Pods()
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())
	defer queue.ShutDown()
	enqueue := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok && Wanted(pod) {
			queue.Add(types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
		}
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.Informer().HasSynced) {
		return ctx.Err()
	}
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	for {
		key, shutdown := queue.Get()
		if shutdown {
			return nil
		}
		err := r.report(ctx, pods.Lister().Pods(key.Namespace), key.Name)
		if err != nil {
			r.Log.Error(err, "report container meta", "pod", key)
			queue.AddRateLimited(key)
		} else {
			queue.Forget(key)
		}
		queue.Done(key)
	}
}

// report writes the pod's annotation when what the runtime runs differs from it.
func (r *Reporter) report(ctx context.Context, lister interface {
	Get(string) (*corev1.Pod, error)
}, name string) error {
	pod, err := lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || !Wanted(pod) {
		return err
	}
	containers, err := r.Runtime.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{criruntime.PodUIDLabel: string(pod.UID)}})
	if err != nil {
		return fmt.Errorf("list the containers of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	meta, err := json.Marshal(Meta(pod, containers, r.RuntimeName))
	if err != nil {
		return err
	}
	if pod.Annotations[appspub.RuntimeContainerMetaKey] == string(meta) {
		return nil
	}
	// Through pods/status, which carries metadata too: the daemon may write no pod spec. The UID
	// makes the patch fail on a pod of the same name made since.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": pod.UID,
		"annotations": map[string]string{appspub.RuntimeContainerMetaKey: string(meta)}}})
	if err != nil {
		return err
	}
	_, err = r.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or replaced: the new pod's event brings it back
	}
	return err
}
