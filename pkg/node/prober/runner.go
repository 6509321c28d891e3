package prober

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	internalapi "k8s.io/cri-api/pkg/apis"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/node/containeraction"
	"github.com/kruise-ng/kruise/pkg/node/criruntime"
)

// The daemon's permissions for probing, generated into config/rbac/daemon by `make generate`.
// +kubebuilder:rbac:groups=apps.kruise.io,resources=nodepodprobes,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=nodepodprobes/status,verbs=patch

// DefaultWorkers is how many probes run at once by default.
const DefaultWorkers = 8

// Runner runs the probes of its node's NodePodProbe and writes their states into its status.
type Runner struct {
	// Client patches the NodePodProbe's status.
	Client  client.Client
	Runtime internalapi.RuntimeService
	Node    string
	// Workers caps the probes running at once (default DefaultWorkers).
	Workers int
	Log     logr.Logger

	mu      sync.Mutex
	workers map[key]*worker
	states  map[key]v1alpha1.NodePodProbeContainerProbeState
	sem     chan struct{}
	dirty   chan struct{}
}

// key is one probe of one pod.
type key struct{ uid, probe string }

// target is what a probe runs against.
type target struct {
	namespace, pod, uid, ip, container, probe string
}

type worker struct {
	target target
	spec   v1alpha1.PodProbeMarkerProbeSpec
	cancel context.CancelFunc
}

// Run starts the workers its node's NodePodProbe (in objects, which holds that one) lists and
// keeps them and its status current until ctx ends.
func (r *Runner) Run(ctx context.Context, objects cache.Cache) error {
	r.init()
	kick := make(chan struct{}, 1)
	notify := func(any) { poke(kick) }
	inf, err := objects.GetInformer(ctx, &v1alpha1.NodePodProbe{})
	if err != nil {
		return err
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: notify,
		UpdateFunc: func(_, o any) { notify(o) }, DeleteFunc: notify})
	if err != nil {
		return err
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	if !objects.WaitForCacheSync(ctx) {
		return ctx.Err()
	}
	defer r.stopAll()
	if npp, err := r.current(ctx, objects); err == nil && npp != nil {
		r.seed(npp)
	}
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
			if err := r.sync(ctx, objects); err != nil {
				r.Log.Error(err, "sync probes")
			}
			poke(r.dirty)
		case <-r.dirty:
			time.Sleep(100 * time.Millisecond) // gather the states that change together
			if err := r.write(ctx, objects); err != nil {
				r.Log.Error(err, "write the NodePodProbe status")
				retry.Reset(time.Second)
			}
		case <-retry.C:
			poke(r.dirty)
		}
	}
}

func (r *Runner) init() {
	r.workers, r.states = map[key]*worker{}, map[key]v1alpha1.NodePodProbeContainerProbeState{}
	n := r.Workers
	if n <= 0 {
		n = DefaultWorkers
	}
	r.sem, r.dirty = make(chan struct{}, n), make(chan struct{}, 1)
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (r *Runner) current(ctx context.Context, objects client.Reader) (*v1alpha1.NodePodProbe, error) {
	npp := &v1alpha1.NodePodProbe{}
	if err := objects.Get(ctx, client.ObjectKey{Name: r.Node}, npp); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return npp, nil
}

// seed takes the states the status holds (a restarted daemon keeps them until its probes decide).
func (r *Runner) seed(npp *v1alpha1.NodePodProbe) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ps := range npp.Status.PodProbeStatuses {
		for _, st := range ps.ProbeStates {
			r.states[key{ps.UID, st.Name}] = st
		}
	}
}

// sync starts a worker for every probe the spec lists, restarts one whose probe or pod changed,
// and stops (and forgets the state of) those it no longer lists.
func (r *Runner) sync(ctx context.Context, objects client.Reader) error {
	npp, err := r.current(ctx, objects)
	if err != nil {
		return err
	}
	want := map[key]*worker{}
	if npp != nil && npp.DeletionTimestamp == nil {
		for _, pp := range npp.Spec.PodProbes {
			for _, p := range pp.Probes {
				want[key{pp.UID, p.Name}] = &worker{spec: p.Probe, target: target{namespace: pp.Namespace, pod: pp.Name, uid: pp.UID,
					ip: pp.IP, container: p.ContainerName, probe: p.Name}}
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, w := range r.workers {
		if n, ok := want[k]; !ok || n.target != w.target || !equality.Semantic.DeepEqual(n.spec, w.spec) {
			w.cancel()
			delete(r.workers, k)
		}
	}
	for k := range r.states {
		if _, ok := want[k]; !ok {
			delete(r.states, k)
		}
	}
	for k, w := range want {
		if _, ok := r.workers[k]; ok {
			continue
		}
		wctx, cancel := context.WithCancel(ctx)
		w.cancel = cancel
		r.workers[k] = w
		go r.work(wctx, k, w.target, w.spec)
	}
	return nil
}

func (r *Runner) stopAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, w := range r.workers {
		w.cancel()
		delete(r.workers, k)
	}
}

// work runs one probe every period until ctx ends, and records each state it reaches.
func (r *Runner) work(ctx context.Context, k key, t target, spec v1alpha1.PodProbeMarkerProbeSpec) {
	var c Counter
	period := time.Duration(max(spec.PeriodSeconds, 1)) * time.Second
	for {
		res, msg := r.once(ctx, t, &spec)
		if ctx.Err() != nil {
			return
		}
		if res == Missing {
			r.Log.Info("probe's container is not in the pod", "pod", t.namespace+"/"+t.pod, "container", t.container, "probe", t.probe)
		}
		if st := c.Add(res, &spec); st != "" {
			r.set(k, st, msg)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
	}
}

// once runs the probe once, when a worker slot is free.
func (r *Runner) once(ctx context.Context, t target, spec *v1alpha1.PodProbeMarkerProbeSpec) (Result, string) {
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return Skipped, ""
	}
	defer func() { <-r.sem }()
	c, err := criruntime.Newest(ctx, r.Runtime, t.uid, t.container)
	if err != nil {
		r.Log.Error(err, "find the probe's container", "pod", t.namespace+"/"+t.pod, "container", t.container)
		return Skipped, ""
	}
	if c == nil {
		observe(t, Missing, 0)
		return Missing, fmt.Sprintf("container %q is not in pod %s/%s", t.container, t.namespace, t.pod)
	}
	h := handler(spec)
	if !c.Running || !Due(spec, c.Started, time.Now()) || (h.Exec == nil && t.ip == "") {
		return Skipped, ""
	}
	pctx, cancel := context.WithTimeout(ctx, time.Duration(max(spec.TimeoutSeconds, 1))*time.Second)
	defer cancel()
	start := time.Now()
	out, err := containeraction.Do(pctx, r.Runtime, c.ID, t.ip, h)
	res, msg := Judge(h, out, err)
	observe(t, res, time.Since(start))
	return res, msg
}

// handler is the probe's action aimed at the pod's own IP: a host the spec names is ignored
// (admission refuses it), so a marker never makes the daemon, on the node's network, dial
// anything but the pod it probes.
func handler(spec *v1alpha1.PodProbeMarkerProbeSpec) containeraction.Handler {
	core := spec.CoreProbe() // a copy
	if core.HTTPGet != nil {
		core.HTTPGet.Host = ""
	}
	if core.TCPSocket != nil {
		core.TCPSocket.Host = ""
	}
	return containeraction.Handler{Exec: core.Exec, HTTPGet: core.HTTPGet, TCPSocket: core.TCPSocket}
}

// set records a state a probe reached; a change of state or message marks the status dirty.
func (r *Runner) set(k key, st v1alpha1.PodProbeMarkerState, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.workers[k]; !ok {
		return // stopped meanwhile
	}
	cur, ok := r.states[k]
	if ok && cur.State == st && cur.Message == msg {
		return
	}
	now := metav1.Now().Rfc3339Copy()
	next := v1alpha1.NodePodProbeContainerProbeState{Name: k.probe, State: st, Message: msg, LastProbeTime: now, LastTransitionTime: now}
	if ok && cur.State == st {
		next.LastTransitionTime = cur.LastTransitionTime
	}
	r.states[k] = next
	poke(r.dirty)
}

// write patches the status to the states of the probes the spec lists, in its order.
func (r *Runner) write(ctx context.Context, objects client.Reader) error {
	npp, err := r.current(ctx, objects)
	if err != nil || npp == nil || npp.DeletionTimestamp != nil {
		return err
	}
	var status v1alpha1.NodePodProbeStatus
	r.mu.Lock()
	for _, pp := range npp.Spec.PodProbes {
		ps := v1alpha1.NodePodProbePodStatus{Name: pp.Name, Namespace: pp.Namespace, UID: pp.UID}
		for _, p := range pp.Probes {
			if st, ok := r.states[key{pp.UID, p.Name}]; ok {
				ps.ProbeStates = append(ps.ProbeStates, st)
			}
		}
		if len(ps.ProbeStates) > 0 {
			status.PodProbeStatuses = append(status.PodProbeStatuses, ps)
		}
	}
	r.mu.Unlock()
	if reflect.DeepEqual(npp.Status, status) {
		return nil
	}
	raw, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": npp.UID}, "status": status})
	if err != nil {
		return err
	}
	target := &v1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: npp.Name}}
	if err := r.Client.Status().Patch(ctx, target, client.RawPatch(types.MergePatchType, raw)); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
