package restarter

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	internalapi "k8s.io/cri-api/pkg/apis"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/node/criruntime"
)

// The daemon's permissions for recreating, generated into config/rbac/daemon by `make generate`.
// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests/status,verbs=update

// Recreator carries out its node's requests.
type Recreator struct {
	// Client writes request status and reads pods (for an httpGet preStop's pod IP).
	Client  client.Client
	Runtime internalapi.RuntimeService
	Node    string
	Log     logr.Logger
	// Poll is how often a waiting request is looked at again.
	Poll time.Duration
	// Workers caps the requests processed at once (default DefaultWorkers): requests are
	// processed side by side, so a hanging preStop hook holds up only its own request.
	Workers int
	// MaxPreStop caps each preStop hook within its grace period; 0: the grace period only.
	MaxPreStop time.Duration

	mu      sync.Mutex
	retries map[string]int // request UID/container → restarts for stale env
}

// maxEnvRetries bounds the restarts of a container that keeps starting with stale env.
const maxEnvRetries = 3

func (r *Recreator) retry(crr *v1alpha1.ContainerRecreateRequest, name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.retries == nil {
		r.retries = map[string]int{}
	}
	k := string(crr.UID) + "/" + name
	r.retries[k]++
	return r.retries[k]
}

// EnvSettle is how long after a request is made that a container whose env reads the pod's labels
// or annotations is stopped: the kubelet starts the new container from its own copy of the pod,
// which lags behind the API, and such a request usually follows a change of that metadata (an
// in-place update's, made just before). On the sandbox's real node the kubelet lagged by more than
// the request takes to reach the daemon: the container restarted twice, the second time after a
// crash-loop backoff. staleEnv catches what the wait does not.
var EnvSettle = 2 * time.Second

// settle is how long to wait before stopping container name of pod for crr (see EnvSettle); 0 for
// a container that reads no metadata into its env.
func settle(crr *v1alpha1.ContainerRecreateRequest, pod *corev1.Pod, name string, now time.Time) time.Duration {
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == name })
	if i < 0 || len(inplace.MetadataEnv(pod, &pod.Spec.Containers[i])) == 0 {
		return 0
	}
	// The creation time has whole seconds: count from the end of its second.
	return max(crr.CreationTimestamp.Add(time.Second+EnvSettle).Sub(now), 0)
}

// EnvCheckedMessage is a recreated container's state message when its env read from the pod's
// metadata was checked against the runtime's.
const EnvCheckedMessage = "env from labels and annotations checked"

// staleEnv names an env var of the running container id that was read from the pod's labels or
// annotations and does not have the value they give now ("" when all do); checked is false when
// there is nothing to check or the runtime does not report the container's env.
func (r *Recreator) staleEnv(ctx context.Context, pod *corev1.Pod, name, id string) (stale string, checked bool, err error) {
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == name })
	if i < 0 {
		return "", false, nil
	}
	want := inplace.MetadataEnv(pod, &pod.Spec.Containers[i])
	if len(want) == 0 {
		return "", false, nil
	}
	have, ok, err := r.runtimeEnv(ctx, id)
	if err != nil || !ok {
		return "", false, err
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if have[k] != want[k] {
			return k, true, nil
		}
	}
	return "", true, nil
}

// runtimeEnv is the env the runtime started container id with, from its verbose status (containerd
// reports the OCI spec); ok is false when the runtime does not report it.
func (r *Recreator) runtimeEnv(ctx context.Context, id string) (map[string]string, bool, error) {
	st, err := r.Runtime.ContainerStatus(ctx, id, true)
	if err != nil {
		return nil, false, fmt.Errorf("container status: %w", err)
	}
	var info struct {
		RuntimeSpec struct {
			Process struct {
				Env []string `json:"env"`
			} `json:"process"`
		} `json:"runtimeSpec"`
	}
	raw, ok := st.GetInfo()["info"]
	if !ok || json.Unmarshal([]byte(raw), &info) != nil || info.RuntimeSpec.Process.Env == nil {
		return nil, false, nil
	}
	env := map[string]string{}
	for _, kv := range info.RuntimeSpec.Process.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env, true, nil
}

// Selector limits a cache to the active requests of node.
func Selector(node string) map[string]string {
	return map[string]string{v1alpha1.ContainerRecreateRequestNodeNameKey: node, v1alpha1.ContainerRecreateRequestActiveKey: "true"}
}

// DefaultWorkers is how many requests a Recreator processes at once when Workers is unset.
const DefaultWorkers = 4

// Requests is where Run reads requests from: a cache limited by Selector.
type Requests interface {
	client.Reader
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// Run processes the requests in requests until ctx ends, Workers at a time (the queue never hands
// out one request twice at once); it returns once its workers have stopped.
func (r *Recreator) Run(ctx context.Context, requests Requests) error {
	if r.Poll == 0 {
		r.Poll = 500 * time.Millisecond
	}
	workers := r.Workers
	if workers < 1 {
		workers = DefaultWorkers
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[client.ObjectKey]())
	defer q.ShutDown()
	inf, err := requests.GetInformer(ctx, &v1alpha1.ContainerRecreateRequest{})
	if err != nil {
		return err
	}
	add := func(o any) {
		if crr, ok := o.(*v1alpha1.ContainerRecreateRequest); ok {
			q.Add(client.ObjectKeyFromObject(crr))
		}
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: add, UpdateFunc: func(_, o any) { add(o) }})
	if err != nil {
		return err
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }() // a restarted Run adds its own
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				again, err := r.process(ctx, requests, key)
				switch {
				case apierrors.IsNotFound(err):
					q.Forget(key)
				case err != nil:
					r.Log.Error(err, "container recreate request", "request", key)
					q.AddRateLimited(key)
				default:
					q.Forget(key)
					if again > 0 {
						q.AddAfter(key, again)
					}
				}
				q.Done(key)
			}
		})
	}
	<-ctx.Done()
	q.ShutDown()
	wg.Wait()
	return nil
}

// process steps request key; a panic is logged with its stack and returned as an error, so the
// request is retried later and the other requests go on.
func (r *Recreator) process(ctx context.Context, requests client.Reader, key client.ObjectKey) (again time.Duration, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
			r.Log.Error(err, "recovered a panic processing a request", "request", key, "stack", string(debug.Stack()))
		}
	}()
	crr := &v1alpha1.ContainerRecreateRequest{}
	if err := requests.Get(ctx, key, crr); err != nil {
		return 0, err
	}
	return r.Step(ctx, crr.DeepCopy())
}

// Step moves crr one step and says when to look again (0: on its next change).
func (r *Recreator) Step(ctx context.Context, crr *v1alpha1.ContainerRecreateRequest) (time.Duration, error) {
	st := &crr.Status
	if st.Phase == v1alpha1.ContainerRecreateRequestCompleted || crr.DeletionTimestamp != nil {
		return 0, nil
	}
	now := time.Now()
	pod, wait, err := r.podToAct(ctx, crr, now)
	if pod == nil || err != nil {
		return wait, err
	}
	before := st.DeepCopy()
	st.Phase = v1alpha1.ContainerRecreateRequestRecreating
	again, err := r.recreate(ctx, crr, pod, now)
	if err != nil {
		return 0, err
	}
	done := true
	for _, s := range st.ContainerRecreateStates {
		done = done && final(s.Phase)
	}
	if done {
		t := metav1.NewTime(now)
		st.Phase, st.CompletionTime, st.Message = v1alpha1.ContainerRecreateRequestCompleted, &t, summary(st)
		again = 0
		r.Log.Info("containers recreated", "request", client.ObjectKeyFromObject(crr), "result", st.Message)
	}
	if !equalStatus(before, st) {
		if err := r.Client.Status().Update(ctx, crr); err != nil {
			return 0, err // a conflict (the manager ended it meanwhile) retries from the new object
		}
	}
	return again, nil
}

// podToAct is the request's pod once the request may act on it, read once per step (its
// containers' env sources, terminationGracePeriodSeconds and IP); nil while the unready grace
// period runs (with how long), or when the pod is gone, replaced or on another node.
func (r *Recreator) podToAct(ctx context.Context, crr *v1alpha1.ContainerRecreateRequest, now time.Time) (*corev1.Pod, time.Duration, error) {
	if s := crr.Spec.Strategy; s != nil && s.UnreadyGracePeriodSeconds != nil {
		acquired, err := time.Parse(time.RFC3339, crr.Annotations[v1alpha1.ContainerRecreateRequestUnreadyAcquiredKey])
		if err != nil {
			return nil, 0, nil // the manager has not seen the pod not ready yet; its annotation wakes us
		}
		if wait := acquired.Add(time.Duration(*s.UnreadyGracePeriodSeconds) * time.Second).Sub(now); wait > 0 {
			return nil, wait, nil
		}
	}
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: crr.Namespace, Name: crr.Spec.PodName}, pod); err != nil {
		return nil, 0, client.IgnoreNotFound(err) // a gone pod: the manager ends the request
	}
	// Only the pod the request was made for, on this node: a replaced pod of the same name, or
	// one on another node, is left alone (the manager ends such a request).
	if want := crr.Labels[v1alpha1.ContainerRecreateRequestPodUIDKey]; string(pod.UID) != want || pod.Spec.NodeName != r.Node {
		r.Log.Info("not acting on a request for another pod", "request", client.ObjectKeyFromObject(crr), "pod", pod.Name,
			"podUID", pod.UID, "requestPodUID", want, "podNode", pod.Spec.NodeName, "node", r.Node)
		return nil, 0, r.noteMismatch(ctx, crr, fmt.Sprintf("not acted on: pod %s is %s on node %q, the request is for pod UID %s on node %q",
			pod.Name, pod.UID, pod.Spec.NodeName, want, r.Node))
	}
	return pod, 0, nil
}

// recreate moves each container of the request a step (one at a time with orderedRecreate; with
// failurePolicy Fail the first failure fails the rest) and says when to look again (0: nothing in
// progress).
func (r *Recreator) recreate(ctx context.Context, crr *v1alpha1.ContainerRecreateRequest, pod *corev1.Pod, now time.Time) (time.Duration, error) {
	st := &crr.Status
	ordered := crr.Spec.Strategy != nil && crr.Spec.Strategy.OrderedRecreate
	failFast := crr.Spec.Strategy == nil || crr.Spec.Strategy.FailurePolicy != v1alpha1.ContainerRecreateRequestFailurePolicyIgnore
	again := time.Duration(0)
	var failedName string
	for _, c := range crr.Spec.Containers {
		s := state(st, c.Name)
		if failedName != "" && !final(s.Phase) {
			s.Phase, s.Message = v1alpha1.ContainerRecreateRequestFailed, "not recreated: container "+failedName+" failed (failurePolicy Fail)"
			continue
		}
		if final(s.Phase) {
			if s.Phase == v1alpha1.ContainerRecreateRequestFailed && failFast {
				failedName = c.Name
			}
			continue
		}
		if err := r.stepContainer(ctx, crr, pod, c, s, now); err != nil {
			return 0, err
		}
		switch s.Phase {
		case v1alpha1.ContainerRecreateRequestFailed:
			if failFast {
				failedName = c.Name
			}
			continue
		case v1alpha1.ContainerRecreateRequestSucceeded:
			continue
		}
		again = r.Poll
		if ordered {
			// The next container waits for this one; mark the rest pending.
			for _, rest := range crr.Spec.Containers {
				if rs := state(st, rest.Name); rs.Phase == "" {
					rs.Phase = v1alpha1.ContainerRecreateRequestPending
				}
			}
			break
		}
	}
	return again, nil
}

// stepContainer moves container c of the request a step and records it in s: done, stopped (or
// waiting to be), or failed.
func (r *Recreator) stepContainer(ctx context.Context, crr *v1alpha1.ContainerRecreateRequest, pod *corev1.Pod,
	c v1alpha1.ContainerRecreateRequestContainer, s *v1alpha1.ContainerRecreateRequestContainerRecreateState, now time.Time) error {
	cur, err := r.newest(ctx, string(pod.UID), c.Name)
	if err != nil {
		return err
	}
	action, doneMsg := Decide(crr, c, *s, cur, now), ""
	if ended := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed; ended {
		action, doneMsg = DecideEnded(*s, cur), EndedMessage
	} else if action == Done {
		stale, checked, err := r.staleEnv(ctx, pod, c.Name, cur.ID)
		if err != nil {
			return err
		}
		if checked {
			doneMsg = EnvCheckedMessage
		}
		if stale != "" {
			// The kubelet started it before it saw the pod's new labels or annotations: again.
			if r.retry(crr, c.Name) > maxEnvRetries {
				s.Phase, s.Message = v1alpha1.ContainerRecreateRequestFailed, "restarted with stale env "+stale+" "+strconv.Itoa(maxEnvRetries)+" times"
				return nil
			}
			action, s.Message = Stop, "restarted with stale env "+stale+"; restarting it again"
		}
	}
	switch action {
	case Done:
		s.Phase, s.Message = v1alpha1.ContainerRecreateRequestSucceeded, doneMsg
	case Stop:
		s.Phase = v1alpha1.ContainerRecreateRequestRecreating
		if wait := settle(crr, pod, c.Name, now); wait > 0 {
			s.Message = "waiting for the kubelet to see the pod's new labels and annotations"
			return nil
		}
		if err := r.stop(ctx, crr, pod, c, cur); err != nil {
			s.Phase, s.Message = v1alpha1.ContainerRecreateRequestFailed, err.Error()
			return nil
		}
		if !s.IsKilled || strings.HasPrefix(s.Message, "waiting") {
			s.Message = "stopped; waiting for the kubelet to start it again"
		}
		s.IsKilled = true
	default:
		s.Phase = v1alpha1.ContainerRecreateRequestRecreating
	}
	return nil
}

// state is the status entry of container name, added when missing.
func state(st *v1alpha1.ContainerRecreateRequestStatus, name string) *v1alpha1.ContainerRecreateRequestContainerRecreateState {
	i := slices.IndexFunc(st.ContainerRecreateStates, func(s v1alpha1.ContainerRecreateRequestContainerRecreateState) bool { return s.Name == name })
	if i < 0 {
		st.ContainerRecreateStates = append(st.ContainerRecreateStates, v1alpha1.ContainerRecreateRequestContainerRecreateState{Name: name})
		i = len(st.ContainerRecreateStates) - 1
	}
	return &st.ContainerRecreateStates[i]
}

func summary(st *v1alpha1.ContainerRecreateRequestStatus) string {
	ok := 0
	for _, s := range st.ContainerRecreateStates {
		if s.Phase == v1alpha1.ContainerRecreateRequestSucceeded {
			ok++
		}
	}
	return fmt.Sprintf("%d/%d containers recreated", ok, len(st.ContainerRecreateStates))
}

func equalStatus(a, b *v1alpha1.ContainerRecreateRequestStatus) bool {
	if a.Phase != b.Phase || a.Message != b.Message || len(a.ContainerRecreateStates) != len(b.ContainerRecreateStates) {
		return false
	}
	return slices.Equal(a.ContainerRecreateStates, b.ContainerRecreateStates)
}

// newest is the runtime's newest container named name in pod uid, or nil.
func (r *Recreator) newest(ctx context.Context, uid, name string) (*Container, error) {
	return criruntime.Newest(ctx, r.Runtime, uid, name)
}

// noteMismatch records once, in the request's status message, why kruise-daemon does not act on it.
func (r *Recreator) noteMismatch(ctx context.Context, crr *v1alpha1.ContainerRecreateRequest, msg string) error {
	if crr.Status.Message == msg {
		return nil
	}
	crr.Status.Message = msg
	return client.IgnoreNotFound(r.Client.Status().Update(ctx, crr))
}
