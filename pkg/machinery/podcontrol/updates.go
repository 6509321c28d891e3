package podcontrol

import (
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
)

// Updates are the in-place updates a workload's reconcile started and left to finish in the
// background (UpdateInPlaceAll): the reconcile takes its pods out of service and returns; the
// wait for their kubelets and the spec writes run on, while the workload's next reconciles open
// the gates of the pods whose updates ended and take out the next ones. A reconcile that waited
// for its batch's kubelets held every pod event of its workload behind it: at 2,000 pods and
// maxUnavailable 20% an Advanced StatefulSet's worker was busy for 66 s of a 73 s rollout, and a
// pod's gate opened 3.7 s after its containers ran again (370 ms for the bench's floor).
//
// Until the cache shows a started update's spec write, the workload's reads see the pod as it
// will stand (Overlay): at the new revision, with the update's labels and annotations, out of
// service. The plan then counts it as updated and unavailable, and never plans it again. The zero
// Updates is not ready; use NewUpdates.
type Updates struct {
	mu     sync.Mutex
	pods   map[string]map[string]started // workload key → pod name
	failed map[string][]error            // workload key → failures not reported by a reconcile yet
	wg     sync.WaitGroup
}

// started is one pod's in-place update under way: the pod it was planned on (its UID), the
// revision it moves to and the labels and annotations the spec write sets.
type started struct {
	uid                 types.UID
	revision            string
	labels, annotations map[string]string
	takenOut            bool      // its containers change: the pod was taken out of service
	written             time.Time // when its spec write was made; zero while the update runs
}

// BackgroundSettle is how soon a workload whose reconcile left in-place updates to finish in the
// background runs again at the latest, to report and retry any that failed: the longest wait for a
// kubelet (inplace.KubeletPolicy's probe bound, 10 s) and the writes after it. Pod events bring it
// sooner.
const BackgroundSettle = 15 * time.Second

// NewUpdates returns an empty set.
func NewUpdates() *Updates {
	return &Updates{pods: map[string]map[string]started{}, failed: map[string][]error{}}
}

func (u *Updates) start(key string, pod *corev1.Pod, revision string, opts engine.UpdateOptions, labels map[string]string,
	takenOut bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pods[key] == nil {
		u.pods[key] = map[string]started{}
	}
	all := maps.Clone(labels)
	maps.Copy(all, opts.Labels)
	u.pods[key][pod.Name] = started{uid: pod.UID, revision: revision, labels: all, annotations: opts.Annotations,
		takenOut: takenOut}
}

// wrote records that pod's spec write was made at now: the cache shows it soon.
func (u *Updates) wrote(key, pod string, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if rec, ok := u.pods[key][pod]; ok {
		rec.written = now
		u.pods[key][pod] = rec
	}
}

// underWay reports whether an update of pod (the workload key's) started in the background and
// the cache has not shown it yet: the pod is read as updated (Overlay), and a plan that moves it
// on (a newer revision) waits until the cache shows where it stands.
func (u *Updates) underWay(key string, pod *corev1.Pod) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	rec, ok := u.pods[key][pod.Name]
	return ok && rec.uid == pod.UID
}

// fail drops the record of pod's update, whose writes failed (the next plan sees the pod as the
// cache has it, and plans it again), and keeps err for the workload's next reconcile (Failed).
func (u *Updates) fail(key, pod string, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.dropLocked(key, pod)
	u.failed[key] = append(u.failed[key], err)
}

// drop forgets pod's update, which has nothing left to do (the pod is gone).
func (u *Updates) drop(key, pod string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.dropLocked(key, pod)
}

func (u *Updates) dropLocked(key, pod string) {
	delete(u.pods[key], pod)
	if len(u.pods[key]) == 0 {
		delete(u.pods, key)
	}
}

// Failed returns the failures of the workload key's background updates since the last call (nil
// for none): the reconcile reports them as its own (the FailedUpdate condition).
func (u *Updates) Failed(key string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	errs := u.failed[key]
	delete(u.failed, key)
	return errors.Join(errs...)
}

// Overlay returns pods (a workload's, as the cache has them) with each pod whose update is under
// way and not shown by the cache yet replaced by a copy of it as it will stand: its revision
// labels and the update's labels and annotations set and, when it was taken out of service, its
// InPlaceUpdateReady gate and Ready False. pods is not modified. A record the cache meets (the pod at the
// revision, gone, or replaced under its name) is dropped, as is one whose write the cache has not
// shown within timeout: the next plan then sees the pod as the cache has it (a record is never
// dropped so while its update still runs: under load a batch's writes take tens of seconds, and
// its pods planned again were updated twice).
func (u *Updates) Overlay(key string, pods []*corev1.Pod, now time.Time, timeout time.Duration) []*corev1.Pod {
	u.mu.Lock()
	defer u.mu.Unlock()
	recs := u.pods[key]
	if len(recs) == 0 {
		return pods
	}
	out, copied := pods, false
	seen := make(map[string]bool, len(recs))
	for i, pod := range pods {
		rec, ok := recs[pod.Name]
		if !ok {
			continue
		}
		seen[pod.Name] = true
		if pod.UID != rec.uid || inplace.AtRevision(pod.Labels[inplace.RevisionLabel], rec.revision) ||
			(!rec.written.IsZero() && now.Sub(rec.written) > timeout) {
			delete(recs, pod.Name)
			continue
		}
		if !copied {
			out, copied = slices.Clone(pods), true
		}
		out[i] = rec.as(pod, now)
	}
	for name := range recs {
		if !seen[name] {
			delete(recs, name)
		}
	}
	if len(recs) == 0 {
		delete(u.pods, key)
	}
	return out
}

// as is pod (the cache's) as it will stand once the update's writes land, as far as a plan reads
// it: the update under way (inplace.Inspect: Updating), not the one before.
func (s started) as(pod *corev1.Pod, now time.Time) *corev1.Pod {
	cp := *pod
	cp.Labels = maps.Clone(pod.Labels)
	if cp.Labels == nil {
		cp.Labels = map[string]string{}
	}
	maps.Copy(cp.Labels, s.labels)
	// The state of the pod's update before (its containers run it) is not this update's: read
	// with the gate False, it would say this one completed, and the gate would open before the
	// containers change. The spec write replaces it; until then the update has no state.
	cp.Annotations = maps.Clone(pod.Annotations)
	if cp.Annotations == nil {
		cp.Annotations = map[string]string{}
	}
	delete(cp.Annotations, appspub.InPlaceUpdateStateKey)
	maps.Copy(cp.Annotations, s.annotations)
	if s.takenOut {
		// Out of service: its gate False, and not Ready, as the kubelet's answer (or the engine,
		// where none comes) makes it before its containers change. A workload's status counts it
		// so: a rollout whose last spec writes are still to come is not reported done.
		conds := slices.Clone(pod.Status.Conditions)
		for _, typ := range []corev1.PodConditionType{appspub.InPlaceUpdateReady, corev1.PodReady} {
			i := slices.IndexFunc(conds, func(c corev1.PodCondition) bool { return c.Type == typ })
			if i >= 0 && conds[i].Status == corev1.ConditionFalse {
				continue
			}
			c := corev1.PodCondition{Type: typ, Status: corev1.ConditionFalse, Reason: engine.StartReason, LastTransitionTime: metav1.NewTime(now)}
			if i >= 0 {
				conds[i] = c
			} else {
				conds = append(conds, c)
			}
		}
		cp.Status.Conditions = conds
	}
	return &cp
}

// Forget drops what was recorded for the workload key, which is gone.
func (u *Updates) Forget(key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.pods, key)
	delete(u.failed, key)
}

// Wait blocks until every update started in the background has ended.
func (u *Updates) Wait() { u.wg.Wait() }
