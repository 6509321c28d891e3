package workloadloop

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// Base is what every pod workload reconciler holds: its clients, clock, expectations and engine,
// and what the loop keeps between reconciles. A reconciler embeds it.
type Base struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Expectations hold the writes not yet seen in the cache, so a stale cache never causes a
	// second create or delete.
	Expectations *podcontrol.Expectations
	// APIReader reads the pods around the cache, from the API server, when the cache has not shown
	// the controller's writes within ExpectationTimeout. Setup defaults it to the manager's.
	APIReader client.Reader
	// Engine carries out in-place updates (pkg/machinery/engine).
	Engine engine.Engine
	// Updates are the in-place updates left to finish in the background (podcontrol.Updates),
	// made by Setup; a test's reconciler that updates pods sets its own and waits on it. Nil: each
	// reconcile finishes its own (a reconciler that only plans, as kubectl-kruise's forecasts).
	Updates *podcontrol.Updates
	// OwnerIndexed says the client's cache indexes pods and revisions by controller
	// (podcontrol.IndexOwned), so that pods relabelled out of the selector are found and released,
	// and the revisions are read by their owner.
	OwnerIndexed bool
	// PreDownload is the kind's pre-download feature gate: an update revision with new images
	// gets ImagePullJobs that pull them onto the nodes of the pods still to update.
	PreDownload bool

	loop State
	// podIndex reads the pods from the manager's pod informer without copies (Setup); nil:
	// Client lists them.
	podIndex *podcontrol.PodIndex
}

// Defaults fills what a reconciler built for tests or the manager leaves unset; opts are the
// engine's (a default engine is built with them).
func (b *Base) Defaults(opts inplace.Options) {
	if b.Clock == nil {
		b.Clock = clock.RealClock{}
	}
	if b.Expectations == nil {
		b.Expectations = podcontrol.NewExpectations()
	}
	if b.Engine == nil {
		b.Engine = engine.New(b.Client, b.Clock, opts)
	}
}

// Setup fills the defaults, leaves in-place updates to finish in the background
// (podcontrol.Updates) and reads pods through the manager's pod informer and API reader.
func (b *Base) Setup(mgr ctrl.Manager, opts inplace.Options) error {
	b.Defaults(opts)
	if b.Updates == nil {
		b.Updates = podcontrol.NewUpdates()
	}
	idx, err := podcontrol.NewPodIndex(context.Background(), mgr.GetCache())
	if err != nil {
		return err
	}
	b.podIndex = idx
	if b.APIReader == nil {
		b.APIReader = mgr.GetAPIReader()
	}
	return nil
}

// Control is the pod writer over the reconciler's client, clock, engine and expectations.
func (b *Base) Control() *podcontrol.Control {
	return &podcontrol.Control{Client: b.Client, Clock: b.Clock, Engine: b.Engine, Expectations: b.Expectations, Recorder: b.Recorder, APIReader: b.APIReader,
		Updates: b.Updates}
}

// Shared is the loop's view of b for the kind named name ("cloneset").
func (b *Base) Shared(name string) Shared {
	return Shared{Client: b.Client, Recorder: b.Recorder, Clock: b.Clock, Expectations: b.Expectations, Control: b.Control(),
		State: &b.loop, Name: name, PreDownload: b.PreDownload}
}

// ReadPods reads owner's pods that sel matches, and the orphans and strays around them
// (podcontrol.ReadPods): the cache's own objects, or (live) the API server's. From the cache, a
// pod whose in-place update runs on in the background is read as it will stand once its writes
// land (podcontrol.Updates.Overlay).
func (b *Base) ReadPods(ctx context.Context, live bool, owner client.Object, sel labels.Selector) (podcontrol.WorkloadPods, error) {
	pods := client.Reader(b.Client)
	if live {
		pods = b.APIReader
	}
	read, err := podcontrol.ReadPods(ctx, b.podIndex, pods, !live, !live && b.OwnerIndexed, owner, sel)
	if err == nil && !live && b.Updates != nil {
		read.Matching = b.Updates.Overlay(owner.GetNamespace()+"/"+owner.GetName(), read.Matching, b.Clock.Now(), ExpectationTimeout)
	}
	return read, err
}

// Revisions reads owner's revisions and decides its update revision from in
// (podcontrol.ObserveRevisions).
//
// pods are the workload's pods as read: when one names a revision the cache does not hold (one
// this manager wrote a moment ago while the cache's watch was broken, after an API server
// restart), the revisions are read from the API server instead. A pod of a revision the planner
// does not know is recreated, so it must never see one only because the cache lags.
func (b *Base) Revisions(ctx context.Context, owner client.Object, gvk schema.GroupVersionKind, sel labels.Selector, in revision.Input,
	collisionCount *int32, pods []*corev1.Pod) (podcontrol.Revisions, error) {
	revs, err := podcontrol.ObserveRevisions(ctx, b.Client, b.OwnerIndexed, owner, gvk, sel, in, collisionCount)
	if err != nil || b.APIReader == nil {
		return revs, err
	}
	unknown := revs.Unknown(pods)
	if unknown == "" && !revs.Decision.Create {
		return revs, nil
	}
	// A revision a pod names or the one to create may be our predecessor's: a workload deleted with
	// propagation Orphan and created again under its name finds its revisions (and pods) without a
	// controller. They are adopted, as Kubernetes' workloads adopt theirs; creating the revision
	// again would only fail (AlreadyExists), and a pod of a revision not held is recreated. While
	// the predecessor still holds some (the garbage collector releases them one by one), the
	// observation fails with a podcontrol.PredecessorError, to be retried.
	adopted, err := podcontrol.AdoptRevisions(ctx, b.Client, b.APIReader, owner, gvk, sel)
	if err != nil {
		return revs, err
	}
	if unknown == "" && adopted == 0 {
		return revs, nil
	}
	ctrl.LoggerFrom(ctx).Info("reading the revisions from the API server", "unknownRevision", unknown, "adopted", adopted)
	return podcontrol.ObserveRevisions(ctx, b.APIReader, false, owner, gvk, sel, in, collisionCount)
}

// WriteStatus writes next as obj's status outside the loop (a kind's refusal of its spec), paced
// as the loop's writes.
func (b *Base) WriteStatus(ctx context.Context, key string, obj client.Object, cur, next any, significant bool, now time.Time) (time.Duration, error) {
	return b.loop.status.Write(ctx, b.Control(), key, obj, cur, next, significant, now)
}
