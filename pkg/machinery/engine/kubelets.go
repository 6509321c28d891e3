package engine

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

// Kubelets is what the engine has learned of each node's kubelet (pkg/core/inplace.KubeletRecord):
// whether it reports a pod not Ready after the engine took it out of service, and how fast. One
// per manager, shared by the engines of every workload (WithKubelets); in memory only: a new leader
// learns again (one probe per node, or per kind of kubelet). Safe for concurrent use.
type Kubelets struct {
	policy inplace.KubeletPolicy
	// nodes reads Nodes (the manager's cache): a node's UID (a node re-created under its name
	// starts over) and its kind of kubelet (status.nodeInfo.kubeletVersion). nil: all nodes of one
	// kind, and no events.
	nodes    client.Reader
	recorder events.EventRecorder

	mu      sync.Mutex
	records map[string]*kubeletEntry // by node name
	// classProbes is when a silent node of each kind of kubelet was last probed again: one node of
	// a kind at a time, so that nodes that fell silent together do not all hold a rollout again
	// together.
	classProbes map[string]time.Time
}

type kubeletEntry struct {
	uid   types.UID
	class string
	rec   inplace.KubeletRecord
}

// NewKubelets returns an empty registry with policy; nodes and recorder may be nil.
func NewKubelets(nodes client.Reader, recorder events.EventRecorder, policy inplace.KubeletPolicy) *Kubelets {
	return &Kubelets{policy: policy, nodes: nodes, recorder: recorder, records: map[string]*kubeletEntry{}, classProbes: map[string]time.Time{}}
}

// WithKubelets makes the engine learn into k (by default each engine has its own).
func WithKubelets(k *Kubelets) Option {
	return func(e *engine) { e.kubelets = k }
}

var (
	silentKubelets = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kruise_inplace_node_kubelet_silent",
		Help: "1 for each node whose kubelet does not report a pod not Ready after an in-place update set its readiness gate False: the engine writes Ready False itself and does not wait for it (inPlaceUpdateStrategy.gracePeriodSeconds is then what keeps traffic off restarting containers)."},
		[]string{"node"})
	kubeletProbes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kruise_inplace_kubelet_probes_total",
		Help: "Waits that told whether a node's kubelet reports a pod not Ready (a node not heard from yet, or a silent one tried again), by result: answered or silent."},
		[]string{"result"})
)

func init() { metrics.Registry.MustRegister(silentKubelets, kubeletProbes) }

// Event reasons on a Node whose kubelet turns silent, or answers again.
const (
	ReasonKubeletSilent   = "KubeletDoesNotReportNotReady"
	ReasonKubeletAnswers  = "KubeletReportsNotReady"
	kubeletEventAction    = "InPlaceUpdate"
	kubeletSilentNoteTmpl = "the kubelet did not report pod %s not Ready within %s after an in-place update set its readiness gate False (%s): Kruise writes Ready False itself on this node and no longer waits for the kubelet; only inPlaceUpdateStrategy.gracePeriodSeconds keeps traffic off containers that restart here. It is tried again every %s."
)

// Decide is the wait for the kubelet of node; a probe it decides on counts as made.
func (k *Kubelets) Decide(ctx context.Context, node string, now time.Time) inplace.WaitDecision {
	return k.decide(ctx, node, now, true)
}

// WritesReady reports whether the engine writes a pod on node Ready False itself when it takes it
// out of service: when its kubelet is not waited for (Decide, without counting a probe), as it
// does not report a gate's change. Elsewhere the gate alone is written, and the kubelet's own
// Ready False is waited for.
func (k *Kubelets) WritesReady(ctx context.Context, node string, now time.Time) bool {
	return !k.decide(ctx, node, now, false).Wait
}

func (k *Kubelets) decide(ctx context.Context, node string, now time.Time, probe bool) inplace.WaitDecision {
	uid, class := k.identity(ctx, node)
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.entry(node, uid, class)
	var rec *inplace.KubeletRecord
	if e != nil {
		rec = &e.rec
	}
	d := inplace.DecideWait(rec, k.classSilent(class), now, k.policy)
	if d.Probe && e != nil && e.rec.Silent {
		if probe {
			e.rec.LastProbe = now // one probe of the node at a time
		}
		if class != "" && now.Sub(k.classProbes[class]) < k.policy.Reprobe {
			return inplace.WaitDecision{Why: "its kubelet does not report Ready False (a node of its kind was probed again lately)"}
		}
		if probe {
			k.classProbes[class] = now
		}
	}
	return d
}

// Record learns from one wait on node: the latencies of the pods its kubelet answered for, whether
// it let the wait run out for any; pod names the pod it let run out, for the event.
func (k *Kubelets) Record(ctx context.Context, node string, d inplace.WaitDecision, answered []time.Duration, missed bool, pod string, now time.Time) {
	nodeObj := k.nodeObject(ctx, node)
	uid, class := identityOf(nodeObj)
	k.mu.Lock()
	e := k.entry(node, uid, class)
	if e == nil {
		e = &kubeletEntry{uid: uid, class: class}
		k.records[node] = e
	}
	var tr inplace.KubeletTransition
	e.rec, tr = e.rec.ObserveWait(answered, missed, now, k.policy)
	k.mu.Unlock()
	if d.Probe && (len(answered) > 0 || missed) {
		result := "answered"
		if len(answered) == 0 {
			result = "silent"
		}
		kubeletProbes.WithLabelValues(result).Inc()
	}
	switch tr {
	case inplace.KubeletBecameSilent:
		silentKubelets.WithLabelValues(node).Set(1)
		if k.recorder != nil && nodeObj != nil {
			k.recorder.Eventf(nodeObj, nil, corev1.EventTypeWarning, ReasonKubeletSilent, kubeletEventAction, kubeletSilentNoteTmpl,
				pod, d.Bound, d.Why, k.policy.Reprobe)
		}
	case inplace.KubeletAnswersAgain:
		silentKubelets.DeleteLabelValues(node)
		if k.recorder != nil && nodeObj != nil {
			k.recorder.Eventf(nodeObj, nil, corev1.EventTypeNormal, ReasonKubeletAnswers, kubeletEventAction,
				"the kubelet reports pods not Ready again: Kruise waits for it before changing containers in place")
		}
	}
}

// entry is node's record, dropped when the node was re-created (another UID); nil when there is
// none. k.mu is held.
func (k *Kubelets) entry(node string, uid types.UID, class string) *kubeletEntry {
	e := k.records[node]
	if e != nil && uid != "" && e.uid != "" && e.uid != uid {
		if e.rec.Silent {
			silentKubelets.DeleteLabelValues(node)
		}
		delete(k.records, node)
		return nil
	}
	if e != nil && e.class == "" {
		e.class = class
	}
	return e
}

// classSilent reports whether nodes of class count as silent: ClassSilent of them are, and none of
// them answers. k.mu is held.
func (k *Kubelets) classSilent(class string) bool {
	silent := 0
	for _, e := range k.records {
		if e.class != class {
			continue
		}
		if e.rec.Silent {
			silent++
		} else if e.rec.Answers > 0 {
			return false
		}
	}
	return k.policy.ClassSilent > 0 && silent >= k.policy.ClassSilent
}

// identity is the node's UID and kind of kubelet (empty when unknown).
func (k *Kubelets) identity(ctx context.Context, name string) (types.UID, string) {
	return identityOf(k.nodeObject(ctx, name))
}

func identityOf(n *corev1.Node) (types.UID, string) {
	if n == nil {
		return "", ""
	}
	return n.UID, n.Status.NodeInfo.KubeletVersion
}

// nodeObject reads the Node (the cache's own object: read only); nil when unknown.
func (k *Kubelets) nodeObject(ctx context.Context, name string) *corev1.Node {
	if k.nodes == nil {
		return nil
	}
	n := &corev1.Node{}
	if err := k.nodes.Get(ctx, client.ObjectKey{Name: name}, n, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	return n
}
