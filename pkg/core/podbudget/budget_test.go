package podbudget

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
)

// now is the time of every test; readySince is when the test pods became Ready.
var (
	now        = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	readySince = now.Add(-time.Hour)
)

// pod is a Running, Ready pod whose container app runs the image its spec asks (app:v1).
func pod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(readySince)}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "docker.io/library/app:v1",
				ImageID: "docker.io/library/app@sha256:1111", Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
		},
	}
}

func annotate(p *corev1.Pod, kv ...string) *corev1.Pod {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	for i := 0; i < len(kv); i += 2 {
		p.Annotations[kv[i]] = kv[i+1]
	}
	return p
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReady(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*corev1.Pod)
		want   bool
	}{
		{"running and ready", func(*corev1.Pod) {}, true},
		{"pending", func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }, false},
		{"succeeded", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }, false},
		{"not ready", func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }, false},
		{"readiness unknown", func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionUnknown }, false},
		{"no Ready condition", func(p *corev1.Pod) { p.Status.Conditions = nil }, false},
		{"only other conditions", func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}}
		}, false},
		{"an unavailable label", func(p *corev1.Pod) { p.Labels[appspub.PubUnavailablePodLabelPrefix+"maintenance"] = "true" }, false},
		{"an unavailable label of any value", func(p *corev1.Pod) { p.Labels[appspub.PubUnavailablePodLabelPrefix+"x"] = "" }, false},
		{"another kruise label", func(p *corev1.Pod) { p.Labels["pod.kruise.io/unavailable"] = "true" }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := pod("p")
			c.mutate(p)
			if got := Ready(p); got != c.want {
				t.Errorf("Ready = %v, want %v", got, c.want)
			}
		})
	}
}

// inPlaceUpdating marks p as in a CloneSet in-place update of container app from image ID before:
// the InPlaceUpdateReady gate False and the engine's state.
func inPlaceUpdating(t *testing.T, p *corev1.Pod, before string, mutate func(*appspub.InPlaceUpdateState)) *corev1.Pod {
	state := appspub.InPlaceUpdateState{Revision: "web-2", UpdateTimestamp: metav1.NewTime(now.Add(-time.Minute)),
		LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"app": {ImageID: before}}, UpdateImages: true}
	if mutate != nil {
		mutate(&state)
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse})
	// The update's spec write names the new image (a container that runs the image its spec names
	// has nothing to restart).
	for i, c := range p.Spec.Containers {
		if c.Name == "app" && c.Image == "app:v1" {
			p.Spec.Containers[i].Image = "app:v2"
		}
	}
	return annotate(p, appspub.InPlaceUpdateStateKey, mustJSON(t, state))
}

// withSidecar adds the injected sidecar log (spec image log:v2) of SidecarSet logset to p, its
// status reporting image ID id and image log:v1; upgradedFrom, when set, is the image ID the
// SidecarSet recorded before its in-place upgrade.
func withSidecar(t *testing.T, p *corev1.Pod, id, upgradedFrom string) *corev1.Pod {
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "log", Image: "log:v2",
		Env: []corev1.EnvVar{{Name: sidecarrules.InjectedEnv, Value: "true"}}})
	p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "log", Image: "log:v1", ImageID: id,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
	annotate(p, sidecarrules.InjectedListAnnotation, "logset")
	if upgradedFrom != "" {
		annotate(p, sidecarrules.InplaceUpdateStateAnnotation, mustJSON(t, map[string]appspub.InPlaceUpdateState{"logset": {
			Revision: "logset-2", LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"log": {ImageID: upgradedFrom}}}}))
	}
	return p
}

func TestConsistent(t *testing.T) {
	digest := func(p *corev1.Pod, image, imageID string) *corev1.Pod {
		p.Spec.Containers[0].Image = image
		p.Status.ContainerStatuses[0].ImageID = imageID
		return p
	}
	cases := []struct {
		name string
		pod  func(t *testing.T) *corev1.Pod
		want bool
	}{
		{"tags, no update", func(*testing.T) *corev1.Pod { return pod("p") }, true},

		// Digest-pinned images: the image ID is not compared with the spec's digest (on containerd it
		// is the image's config digest, kruise#2570); only an in-place update under way counts.
		{"digest, image ID of the same digest", func(*testing.T) *corev1.Pod {
			return digest(pod("p"), "app@sha256:2222", "docker-pullable://app@sha256:2222")
		}, true},
		{"digest, image ID of another digest (containerd's config digest)", func(*testing.T) *corev1.Pod {
			return digest(pod("p"), "app@sha256:2222", "sha256:9999")
		}, true},
		{"digests only, an in-place update not restarted yet", func(t *testing.T) *corev1.Pod {
			return inPlaceUpdating(t, digest(pod("p"), "app@sha256:2222", "app@sha256:1111"), "app@sha256:1111", nil)
		}, false},
		{"digests only, an in-place update restarted", func(t *testing.T) *corev1.Pod {
			return inPlaceUpdating(t, digest(pod("p"), "app@sha256:2222", "app@sha256:2222"), "app@sha256:1111", nil)
		}, true},
		{"a digest beside a tag, an in-place update under way", func(t *testing.T) *corev1.Pod {
			p := pod("p")
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "pinned", Image: "pinned@sha256:3333"})
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "pinned", ImageID: "pinned@sha256:3333"})
			return inPlaceUpdating(t, p, "docker.io/library/app@sha256:1111", nil)
		}, false},

		// A CloneSet in-place update (apps.kruise.io/inplace-update-state, gate InPlaceUpdateReady).
		{"in-place update, container not restarted", func(t *testing.T) *corev1.Pod {
			return inPlaceUpdating(t, pod("p"), "docker.io/library/app@sha256:1111", nil)
		}, false},
		{"in-place update, container restarted on the new image", func(t *testing.T) *corev1.Pod {
			return inPlaceUpdating(t, pod("p"), "docker.io/library/app@sha256:0000", nil)
		}, true},
		{"in-place update, the restarted container not running", func(t *testing.T) *corev1.Pod {
			p := inPlaceUpdating(t, pod("p"), "docker.io/library/app@sha256:0000", nil)
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
			return p
		}, false},
		{"in-place update, a next batch due", func(t *testing.T) *corev1.Pod {
			return inPlaceUpdating(t, pod("p"), "docker.io/library/app@sha256:0000", func(s *appspub.InPlaceUpdateState) {
				s.NextContainerImages = map[string]string{"other": "other:v2"}
			})
		}, false},
		{"in-place update, unreadable state", func(*testing.T) *corev1.Pod {
			p := pod("p")
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse})
			return annotate(p, appspub.InPlaceUpdateStateKey, "{")
		}, false},
		{"in-place update done, gate released", func(t *testing.T) *corev1.Pod {
			p := inPlaceUpdating(t, pod("p"), "docker.io/library/app@sha256:1111", nil)
			p.Status.Conditions[1].Status = corev1.ConditionTrue
			return p
		}, true},
		{"in-place update waiting for its grace period", func(*testing.T) *corev1.Pod {
			return annotate(pod("p"), appspub.InPlaceUpdateGraceKey, `{"revision":"web-2","containerImages":{"app":"app:v2"},"graceSeconds":30}`)
		}, false},

		// An injected sidecar's in-place upgrade (kruise.io/sidecarset-inplace-update-state).
		{"sidecar never upgraded", func(t *testing.T) *corev1.Pod { return withSidecar(t, pod("p"), "log@sha256:1", "") }, true},
		{"sidecar upgrade under way", func(t *testing.T) *corev1.Pod {
			return withSidecar(t, pod("p"), "log@sha256:1", "log@sha256:1")
		}, false},
		{"sidecar upgraded", func(t *testing.T) *corev1.Pod {
			return withSidecar(t, pod("p"), "log@sha256:2", "log@sha256:1")
		}, true},
		{"sidecar upgrade state unreadable", func(t *testing.T) *corev1.Pod {
			return annotate(withSidecar(t, pod("p"), "log@sha256:1", ""), sidecarrules.InplaceUpdateStateAnnotation, "[")
		}, false},
		{"sidecar upgrade state of another SidecarSet", func(t *testing.T) *corev1.Pod {
			p := withSidecar(t, pod("p"), "log@sha256:1", "log@sha256:1")
			return annotate(p, sidecarrules.InjectedListAnnotation, "otherset")
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.pod(t)
			if got := Consistent(p); got != c.want {
				t.Errorf("Consistent = %v, want %v", got, c.want)
			}
			wantAvailable := c.want && Ready(p)
			if got := Available(p); got != wantAvailable {
				t.Errorf("Available = %v, want %v", got, wantAvailable)
			}
		})
	}
}

func TestAvailable(t *testing.T) {
	if !Available(pod("p")) {
		t.Error("a ready, consistent pod is not available")
	}
	p := pod("p")
	p.DeletionTimestamp = ptr.To(metav1.NewTime(now))
	if Available(p) {
		t.Error("a terminating pod is available")
	}
	p = pod("p")
	p.Status.Phase = corev1.PodPending
	if Available(p) {
		t.Error("a pending pod is available")
	}
}

func TestExpected(t *testing.T) {
	cases := []struct {
		annotations map[string]string
		workloads   int32
		want        int32
	}{
		{nil, 5, 5},
		{map[string]string{policyv1alpha1.PubProtectTotalReplicasAnnotation: "7"}, 5, 7},
		{map[string]string{policyv1alpha1.PubProtectTotalReplicasAnnotation: "0"}, 5, 0},
		{map[string]string{policyv1alpha1.PubProtectTotalReplicasAnnotation: ""}, 5, 5},
		// What OpenKruise's controller counts for values its webhook lets through or not.
		{map[string]string{policyv1alpha1.PubProtectTotalReplicasAnnotation: "-1"}, 5, -1},
		{map[string]string{policyv1alpha1.PubProtectTotalReplicasAnnotation: "many"}, 5, 0},
	}
	for _, c := range cases {
		pub := &policyv1alpha1.PodUnavailableBudget{ObjectMeta: metav1.ObjectMeta{Annotations: c.annotations}}
		if got := Expected(pub, c.workloads); got != c.want {
			t.Errorf("Expected(%v, %d) = %d, want %d", c.annotations, c.workloads, got, c.want)
		}
	}
}

func TestDesiredAvailable(t *testing.T) {
	maxU := func(v intstr.IntOrString) *policyv1alpha1.PodUnavailableBudgetSpec {
		return &policyv1alpha1.PodUnavailableBudgetSpec{MaxUnavailable: &v}
	}
	minA := func(v intstr.IntOrString) *policyv1alpha1.PodUnavailableBudgetSpec {
		return &policyv1alpha1.PodUnavailableBudgetSpec{MinAvailable: &v}
	}
	i, s := intstr.FromInt32, intstr.FromString
	cases := []struct {
		name     string
		spec     *policyv1alpha1.PodUnavailableBudgetSpec
		expected int32
		want     int32
		err      bool
	}{
		{"maxUnavailable 1 of 5", maxU(i(1)), 5, 4, false},
		{"maxUnavailable 0", maxU(i(0)), 5, 5, false},
		{"maxUnavailable 25% of 10 rounds up to 3", maxU(s("25%")), 10, 7, false},
		{"maxUnavailable 50% of 3 rounds up to 2", maxU(s("50%")), 3, 1, false},
		{"maxUnavailable 1% of 10 rounds up to 1", maxU(s("1%")), 10, 9, false},
		{"maxUnavailable 100%", maxU(s("100%")), 10, 0, false},
		{"maxUnavailable above the replicas, never negative", maxU(i(10)), 5, 0, false},
		{"maxUnavailable of no pods", maxU(s("50%")), 0, 0, false},
		{"minAvailable 3 of 5", minA(i(3)), 5, 3, false},
		{"minAvailable above the replicas, kept", minA(i(10)), 5, 10, false},
		{"minAvailable 50% of 3 rounds up to 2", minA(s("50%")), 3, 2, false},
		{"minAvailable 33% of 10 rounds up to 4", minA(s("33%")), 10, 4, false},
		{"minAvailable 100%", minA(s("100%")), 7, 7, false},
		{"minAvailable 0%", minA(s("0%")), 7, 0, false},
		{"neither", &policyv1alpha1.PodUnavailableBudgetSpec{}, 5, 0, false},
		{"maxUnavailable wins over minAvailable", &policyv1alpha1.PodUnavailableBudgetSpec{
			MaxUnavailable: ptr.To(i(2)), MinAvailable: ptr.To(i(1))}, 5, 3, false},
		{"maxUnavailable not a percentage", maxU(s("half")), 5, 0, true},
		{"minAvailable not a percentage", minA(s("half")), 5, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DesiredAvailable(c.spec, c.expected)
			if (err != nil) != c.err {
				t.Fatalf("err = %v, want an error: %v", err, c.err)
			}
			if err == nil && got != c.want {
				t.Errorf("DesiredAvailable = %d, want %d", got, c.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "spec.") {
				t.Errorf("error %q does not name the field", err)
			}
		})
	}
}

// budget is a budget of the test pods with the given records and counts.
func budget(disrupted, unavailable map[string]metav1.Time) *policyv1alpha1.PodUnavailableBudget {
	return &policyv1alpha1.PodUnavailableBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Generation: 3},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			MaxUnavailable: ptr.To(intstr.FromInt32(1))},
		Status: policyv1alpha1.PodUnavailableBudgetStatus{DisruptedPods: disrupted, UnavailablePods: unavailable},
	}
}

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func TestStatus(t *testing.T) {
	notReady := pod("c")
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	// A pod recorded for an update, back since: Ready again after the record.
	back := pod("h")
	back.Status.Conditions[0].LastTransitionTime = ago(time.Second)
	// Recorded for an update, Ready again since, but carrying an unavailable label: not back.
	backUnavailable := pod("i")
	backUnavailable.Status.Conditions[0].LastTransitionTime = ago(time.Second)
	backUnavailable.Labels[appspub.PubUnavailablePodLabelPrefix+"x"] = "true"
	pods := []*corev1.Pod{pod("a"), pod("b"), notReady, pod("d"), pod("e"), pod("f"), pod("g"), back, backUnavailable, pod("j"), pod("k")}
	pub := budget(map[string]metav1.Time{
		"d":    ago(5 * time.Second),  // kept: due in 15s
		"f":    ago(30 * time.Second), // expired: dropped, f counts again
		"gone": ago(time.Second),      // the pod is gone: dropped
		"j":    ago(DeletionTimeout),  // due now: kept
	}, map[string]metav1.Time{
		"e":    ago(5 * time.Second),  // kept: due in 5s, the pod still Ready since before
		"g":    ago(11 * time.Second), // expired: dropped
		"h":    ago(3 * time.Second),  // back since: dropped before its timeout
		"i":    ago(3 * time.Second),  // not back: kept, due in 7s
		"k":    ago(UpdateTimeout),    // due now: kept
		"gone": ago(time.Second),
	})
	before := pub.DeepCopy()

	st, recheck := Status(pub, pods, 10, 5, now)
	want := policyv1alpha1.PodUnavailableBudgetStatus{
		ObservedGeneration: 3, TotalReplicas: 10, DesiredAvailable: 5,
		DisruptedPods:   map[string]metav1.Time{"d": ago(5 * time.Second), "j": ago(DeletionTimeout)},
		UnavailablePods: map[string]metav1.Time{"e": ago(5 * time.Second), "i": ago(3 * time.Second), "k": ago(UpdateTimeout)},
		// a, b, f, g, h; not c (not ready), d, j, e, k (recorded), i (recorded, and unavailable).
		CurrentAvailable: 5, UnavailableAllowed: 0,
	}
	if !equality.Semantic.DeepEqual(st, want) {
		t.Errorf("Status:\n got  %+v\n want %+v", st, want)
	}
	if !recheck.Equal(now) {
		t.Errorf("recheck = %v, want the earliest due, now (%v)", recheck, now)
	}
	if !equality.Semantic.DeepEqual(pub, before) {
		t.Error("Status modified the budget")
	}

	// Without the entries due now, the earliest due is e's, 5s ahead of d's.
	delete(pub.Status.DisruptedPods, "j")
	delete(pub.Status.UnavailablePods, "k")
	st, recheck = Status(pub, pods, 10, 4, now)
	if want := now.Add(5 * time.Second); !recheck.Equal(want) {
		t.Errorf("recheck = %v, want %v", recheck, want)
	}
	if st.CurrentAvailable != 7 || st.UnavailableAllowed != 3 {
		t.Errorf("currentAvailable %d, unavailableAllowed %d, want 7 and 3", st.CurrentAvailable, st.UnavailableAllowed)
	}
}

func TestStatusWithoutRecords(t *testing.T) {
	st, recheck := Status(budget(nil, nil), []*corev1.Pod{pod("a"), pod("b")}, 2, 3, now)
	if !recheck.IsZero() {
		t.Errorf("recheck = %v without records", recheck)
	}
	if st.DisruptedPods == nil || st.UnavailablePods == nil || len(st.DisruptedPods)+len(st.UnavailablePods) != 0 {
		t.Errorf("records = %v, %v; want empty maps", st.DisruptedPods, st.UnavailablePods)
	}
	// Fewer available than desired: none more allowed, never a negative count.
	if st.CurrentAvailable != 2 || st.UnavailableAllowed != 0 {
		t.Errorf("currentAvailable %d, unavailableAllowed %d, want 2 and 0", st.CurrentAvailable, st.UnavailableAllowed)
	}
	st, _ = Status(budget(nil, nil), nil, 0, 0, now)
	if st.CurrentAvailable != 0 || st.UnavailableAllowed != 0 {
		t.Errorf("no pods: currentAvailable %d, unavailableAllowed %d", st.CurrentAvailable, st.UnavailableAllowed)
	}
}

func TestGuards(t *testing.T) {
	ops := []policyv1alpha1.PubOperation{policyv1alpha1.PubDeleteOperation, policyv1alpha1.PubUpdateOperation,
		policyv1alpha1.PubEvictOperation, policyv1alpha1.PubResizeOperation}
	cases := []struct {
		annotations map[string]string
		want        string // the operations guarded
	}{
		{nil, "DELETE,UPDATE,EVICT,RESIZE"},
		{map[string]string{policyv1alpha1.PubProtectOperationAnnotation: ""}, "DELETE,UPDATE,EVICT,RESIZE"},
		{map[string]string{policyv1alpha1.PubProtectOperationAnnotation: "DELETE,EVICT"}, "DELETE,EVICT"},
		{map[string]string{policyv1alpha1.PubProtectOperationAnnotation: "UPDATE"}, "UPDATE"},
		{map[string]string{policyv1alpha1.PubProtectOperationAnnotation: "RESIZE"}, "RESIZE"},
		{map[string]string{policyv1alpha1.PubProtectOperationAnnotation: "DELETE, EVICT"}, "DELETE"},
		{map[string]string{policyv1alpha1.PubProtectOperationAnnotation: "delete"}, ""},
	}
	for _, c := range cases {
		pub := &policyv1alpha1.PodUnavailableBudget{ObjectMeta: metav1.ObjectMeta{Annotations: c.annotations}}
		var got []string
		for _, op := range ops {
			if Guards(pub, op) {
				got = append(got, string(op))
			}
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("Guards with %v: %v, want %s", c.annotations, got, c.want)
		}
	}
}

// admitting is a budget that allows allowed more unavailable pods of desired 2.
func admitting(allowed int32) *policyv1alpha1.PodUnavailableBudget {
	pub := budget(nil, nil)
	pub.Status.DesiredAvailable, pub.Status.CurrentAvailable, pub.Status.UnavailableAllowed = 2, 2+allowed, allowed
	return pub
}

// unmet is a budget of desired 2 with 1 available pod.
func unmet() *policyv1alpha1.PodUnavailableBudget {
	pub := admitting(0)
	pub.Status.CurrentAvailable = 1
	return pub
}

func TestAdmitForFree(t *testing.T) {
	cases := []struct {
		name string
		pub  func() *policyv1alpha1.PodUnavailableBudget
		pod  func() *corev1.Pod
		op   policyv1alpha1.PubOperation
	}{
		{"no budget", func() *policyv1alpha1.PodUnavailableBudget { return nil }, func() *corev1.Pod { return pod("p") }, policyv1alpha1.PubDeleteOperation},
		{"a pod marked no-protect", func() *policyv1alpha1.PodUnavailableBudget { return admitting(0) },
			func() *corev1.Pod { return annotate(pod("p"), policyv1alpha1.PodPubNoProtectionAnnotation, "true") }, policyv1alpha1.PubDeleteOperation},
		{"a pod not ready", func() *policyv1alpha1.PodUnavailableBudget { return admitting(0) }, func() *corev1.Pod {
			p := pod("p")
			p.Status.Conditions[0].Status = corev1.ConditionFalse
			return p
		}, policyv1alpha1.PubEvictOperation},
		{"a pod with an unavailable label", func() *policyv1alpha1.PodUnavailableBudget { return admitting(0) }, func() *corev1.Pod {
			p := pod("p")
			p.Labels[appspub.PubUnavailablePodLabelPrefix+"x"] = "true"
			return p
		}, policyv1alpha1.PubUpdateOperation},
		{"a pod in an in-place update", func() *policyv1alpha1.PodUnavailableBudget { return admitting(0) }, func() *corev1.Pod {
			return inPlaceUpdating(t, pod("p"), "docker.io/library/app@sha256:1111", nil)
		}, policyv1alpha1.PubDeleteOperation},
		{"an unavailable pod evicted, the budget met", func() *policyv1alpha1.PodUnavailableBudget { return admitting(0) }, func() *corev1.Pod {
			p := pod("p")
			p.Status.Phase = corev1.PodPending
			return p
		}, policyv1alpha1.PubEvictOperation},
		{"an unavailable pod deleted, the budget not met", func() *policyv1alpha1.PodUnavailableBudget { return unmet() }, func() *corev1.Pod {
			p := pod("p")
			p.Status.Phase = corev1.PodPending
			return p
		}, policyv1alpha1.PubDeleteOperation},
		{"a recorded pod evicted, the budget not met", func() *policyv1alpha1.PodUnavailableBudget {
			pub := unmet()
			pub.Status.DisruptedPods = map[string]metav1.Time{"p": ago(time.Second)}
			return pub
		}, func() *corev1.Pod { return pod("p") }, policyv1alpha1.PubEvictOperation},
		{"a pod marked no-protect evicted, the budget not met", func() *policyv1alpha1.PodUnavailableBudget { return unmet() },
			func() *corev1.Pod { return annotate(pod("p"), policyv1alpha1.PodPubNoProtectionAnnotation, "true") }, policyv1alpha1.PubEvictOperation},
		{"a budget that needs none available", func() *policyv1alpha1.PodUnavailableBudget {
			pub := admitting(0)
			pub.Status.DesiredAvailable = 0
			return pub
		}, func() *corev1.Pod { return pod("p") }, policyv1alpha1.PubDeleteOperation},
		{"an operation not guarded", func() *policyv1alpha1.PodUnavailableBudget {
			pub := admitting(0)
			pub.Annotations = map[string]string{policyv1alpha1.PubProtectOperationAnnotation: "DELETE,EVICT"}
			return pub
		}, func() *corev1.Pod { return pod("p") }, policyv1alpha1.PubUpdateOperation},
		{"resize not guarded", func() *policyv1alpha1.PodUnavailableBudget {
			pub := admitting(0)
			pub.Annotations = map[string]string{policyv1alpha1.PubProtectOperationAnnotation: "UPDATE"}
			return pub
		}, func() *corev1.Pod { return pod("p") }, policyv1alpha1.PubResizeOperation},
		{"a pod recorded disrupted", func() *policyv1alpha1.PodUnavailableBudget {
			pub := admitting(0)
			pub.Status.DisruptedPods = map[string]metav1.Time{"p": ago(time.Second)}
			return pub
		}, func() *corev1.Pod { return pod("p") }, policyv1alpha1.PubDeleteOperation},
		{"a pod recorded unavailable, deleted", func() *policyv1alpha1.PodUnavailableBudget {
			pub := admitting(0)
			pub.Status.UnavailablePods = map[string]metav1.Time{"p": ago(time.Second)}
			return pub
		}, func() *corev1.Pod { return pod("p") }, policyv1alpha1.PubDeleteOperation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pub := c.pub()
			var before *policyv1alpha1.PodUnavailableBudget
			if pub != nil {
				before = pub.DeepCopy()
			}
			dec := Admit(pub, c.pod(), c.op, now)
			if dec != (Decision{Allowed: true}) {
				t.Errorf("Admit = %+v, want allowed without a record", dec)
			}
			if pub != nil && !equality.Semantic.DeepEqual(pub, before) {
				t.Errorf("Admit modified the budget: %+v", pub.Status)
			}
		})
	}
}

func TestAdmitRefused(t *testing.T) {
	full := map[string]metav1.Time{}
	for i := 0; i <= MaxRecorded; i++ {
		full[fmt.Sprintf("old-%d", i)] = ago(time.Second)
	}
	cases := []struct {
		name   string
		pub    *policyv1alpha1.PodUnavailableBudget
		reason string
	}{
		{"none allowed", admitting(0), "allows no more unavailable pods (2 available, 2 must stay available): pub unavailable allowed is negative"},
		{"a negative allowance", admitting(-1), "allows no more unavailable pods"},
		{"too many records", func() *policyv1alpha1.PodUnavailableBudget {
			pub := admitting(5)
			pub.Status.DisruptedPods = full
			return pub
		}(), "too many unavailable pods not yet confirmed by its controller (too many unavailable not confirmed by PUB controller)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, op := range []policyv1alpha1.PubOperation{policyv1alpha1.PubDeleteOperation, policyv1alpha1.PubEvictOperation,
				policyv1alpha1.PubUpdateOperation, policyv1alpha1.PubResizeOperation} {
				before := c.pub.DeepCopy()
				dec := Admit(c.pub, pod("p"), op, now)
				if dec.Allowed || dec.Record || !strings.Contains(dec.Reason, c.reason) || !strings.Contains(dec.Reason, "PodUnavailableBudget web") {
					t.Errorf("%s: Admit = %+v, want refused for %q", op, dec, c.reason)
				}
				if !equality.Semantic.DeepEqual(c.pub, before) {
					t.Errorf("%s: Admit modified the budget", op)
				}
			}
		})
	}
}

func TestAdmitRecords(t *testing.T) {
	cases := []struct {
		op          policyv1alpha1.PubOperation
		unavailable bool // recorded in unavailablePods, else in disruptedPods
	}{
		{policyv1alpha1.PubDeleteOperation, false},
		{policyv1alpha1.PubEvictOperation, false},
		{policyv1alpha1.PubResizeOperation, false},
		{policyv1alpha1.PubUpdateOperation, true},
	}
	for _, c := range cases {
		t.Run(string(c.op), func(t *testing.T) {
			pub := admitting(2)
			dec := Admit(pub, pod("p"), c.op, now)
			if dec != (Decision{Allowed: true, Record: true}) {
				t.Fatalf("Admit = %+v, want allowed and recorded", dec)
			}
			if pub.Status.UnavailableAllowed != 1 {
				t.Errorf("unavailableAllowed = %d, want 1", pub.Status.UnavailableAllowed)
			}
			recorded, other := pub.Status.DisruptedPods, pub.Status.UnavailablePods
			if c.unavailable {
				recorded, other = other, recorded
			}
			if at, ok := recorded["p"]; !ok || !at.Time.Equal(now) || len(recorded) != 1 {
				t.Errorf("records %v, want p at %v", recorded, now)
			}
			if _, ok := other["p"]; ok {
				t.Errorf("p recorded in both maps")
			}
			// The next pod takes the last unit; the one after is refused.
			if dec := Admit(pub, pod("q"), c.op, now); !dec.Record || pub.Status.UnavailableAllowed != 0 {
				t.Errorf("second pod: %+v, unavailableAllowed %d", dec, pub.Status.UnavailableAllowed)
			}
			if dec := Admit(pub, pod("r"), c.op, now); dec.Allowed {
				t.Errorf("third pod admitted: %+v", dec)
			}
			// A pod recorded passes again for free.
			before := pub.DeepCopy()
			if dec := Admit(pub, pod("p"), c.op, now); dec != (Decision{Allowed: true}) || !equality.Semantic.DeepEqual(pub, before) {
				t.Errorf("recorded pod again: %+v", dec)
			}
		})
	}

	// Records already there are kept; exactly MaxRecorded of them still admit one more.
	pub := admitting(1)
	pub.Status.UnavailablePods = map[string]metav1.Time{}
	for i := 0; i < MaxRecorded; i++ {
		pub.Status.UnavailablePods[fmt.Sprintf("old-%d", i)] = ago(time.Second)
	}
	if dec := Admit(pub, pod("p"), policyv1alpha1.PubDeleteOperation, now); !dec.Record {
		t.Errorf("with %d records: %+v, want recorded", MaxRecorded, dec)
	}
	if len(pub.Status.UnavailablePods) != MaxRecorded || len(pub.Status.DisruptedPods) != 1 {
		t.Errorf("records: %d unavailable, %d disrupted", len(pub.Status.UnavailablePods), len(pub.Status.DisruptedPods))
	}
	// The no-protect annotation counts only as "true".
	if dec := Admit(admitting(1), annotate(pod("p"), policyv1alpha1.PodPubNoProtectionAnnotation, "false"), policyv1alpha1.PubDeleteOperation, now); !dec.Record {
		t.Errorf("no-protect=false: %+v, want recorded", dec)
	}
}

// A pod recorded for an update and back since (Ready again after the record) is not under that
// update any more: the controller's next count drops the record, so a new update of the pod is
// priced like any other, not passed for free on it (soak seed 5: after a leader change, a
// rollback's take-out rode on the record of the update before, the first count dropped it, and a
// second pod went out beyond the budget).
func TestAdmitAfterTheRecordedUpdate(t *testing.T) {
	back := func() *corev1.Pod {
		p := pod("p")
		p.Status.Conditions[0].LastTransitionTime = ago(time.Minute)
		return p
	}
	recorded := func(allowed int32) *policyv1alpha1.PodUnavailableBudget {
		pub := admitting(allowed)
		pub.Status.UnavailablePods = map[string]metav1.Time{"p": ago(2 * time.Minute)}
		return pub
	}
	for _, op := range []policyv1alpha1.PubOperation{policyv1alpha1.PubUpdateOperation, policyv1alpha1.PubDeleteOperation} {
		if dec := Admit(recorded(0), back(), op, now); dec.Allowed {
			t.Errorf("%s of a pod back since its record, none allowed: %+v, want refused", op, dec)
		}
		pub := recorded(1)
		if dec := Admit(pub, back(), op, now); dec != (Decision{Allowed: true, Record: true}) || pub.Status.UnavailableAllowed != 0 {
			t.Errorf("%s of a pod back since its record, one allowed: %+v, unavailableAllowed %d", op, dec, pub.Status.UnavailableAllowed)
		}
	}
	// Recorded and not back (Ready since before the record): its update is under way, free.
	if dec := Admit(recorded(0), pod("p"), policyv1alpha1.PubUpdateOperation, now); dec != (Decision{Allowed: true}) {
		t.Errorf("a pod whose recorded update is under way: %+v, want allowed without a record", dec)
	}
	// The new update is recorded at now: the record of the update before is replaced.
	pub := recorded(1)
	Admit(pub, back(), policyv1alpha1.PubUpdateOperation, now)
	if at := pub.Status.UnavailablePods["p"]; !at.Time.Equal(now) {
		t.Errorf("record at %v, want %v", at, now)
	}
}

func TestUpdateDisrupts(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(old, new *corev1.Pod)
		want   bool
	}{
		{"nothing changed", func(_, _ *corev1.Pod) {}, false},
		{"labels changed", func(_, n *corev1.Pod) { n.Labels["version"] = "2" }, false},
		{"annotations changed", func(_, n *corev1.Pod) { annotate(n, "a", "b") }, false},
		{"status changed", func(_, n *corev1.Pod) { n.Status.Phase = corev1.PodFailed }, false},
		{"image changed", func(_, n *corev1.Pod) { n.Spec.Containers[0].Image = "app:v2" }, true},
		{"a toleration added", func(_, n *corev1.Pod) {
			n.Spec.Tolerations = append(n.Spec.Tolerations, corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists})
		}, true},
		{"an unavailable label added", func(_, n *corev1.Pod) { n.Labels[appspub.PubUnavailablePodLabelPrefix+"x"] = "true" }, true},
		{"an unavailable label kept", func(o, n *corev1.Pod) {
			o.Labels[appspub.PubUnavailablePodLabelPrefix+"x"] = "true"
			n.Labels[appspub.PubUnavailablePodLabelPrefix+"x"] = "true"
			n.Labels["other"] = "y"
		}, false},
		{"a second unavailable label", func(o, n *corev1.Pod) {
			o.Labels[appspub.PubUnavailablePodLabelPrefix+"x"] = "true"
			n.Labels[appspub.PubUnavailablePodLabelPrefix+"x"] = "true"
			n.Labels[appspub.PubUnavailablePodLabelPrefix+"y"] = "true"
		}, false},
		{"an unavailable label removed", func(o, _ *corev1.Pod) { o.Labels[appspub.PubUnavailablePodLabelPrefix+"x"] = "true" }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, n := pod("p"), pod("p")
			c.mutate(o, n)
			if got := UpdateDisrupts(o, n); got != c.want {
				t.Errorf("UpdateDisrupts = %v, want %v", got, c.want)
			}
		})
	}
}

func TestPodSelector(t *testing.T) {
	own := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	target := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "workload"}}
	ref := &policyv1alpha1.PodUnavailableBudgetTargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	cases := []struct {
		name   string
		spec   policyv1alpha1.PodUnavailableBudgetSpec
		target *metav1.LabelSelector
		want   *metav1.LabelSelector
	}{
		{"selector", policyv1alpha1.PodUnavailableBudgetSpec{Selector: own}, target, own},
		{"targetRef", policyv1alpha1.PodUnavailableBudgetSpec{TargetReference: ref}, target, target},
		{"targetRef of a workload that does not exist", policyv1alpha1.PodUnavailableBudgetSpec{TargetReference: ref}, nil, nil},
		{"targetRef wins over selector", policyv1alpha1.PodUnavailableBudgetSpec{Selector: own, TargetReference: ref}, target, target},
		{"neither", policyv1alpha1.PodUnavailableBudgetSpec{}, target, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pub := &policyv1alpha1.PodUnavailableBudget{Spec: c.spec}
			if got := PodSelector(pub, c.target); got != c.want {
				t.Errorf("PodSelector = %v, want %v", got, c.want)
			}
		})
	}
}

// An unavailable pod costs the budget nothing, but its eviction is refused while the budget is not
// met, as Kubernetes' PodDisruptionBudget refuses it (kruise#1469); other operations on it pass.
func TestAdmitEvictionOfUnavailablePods(t *testing.T) {
	notReady := pod("p")
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	updating := inPlaceUpdating(t, pod("p"), "docker.io/library/app@sha256:1111", nil)
	for _, p := range []*corev1.Pod{notReady, updating} {
		pub := unmet()
		before := pub.DeepCopy()
		dec := Admit(pub, p, policyv1alpha1.PubEvictOperation, now)
		if dec.Allowed || dec.Record || !strings.Contains(dec.Reason, "PodUnavailableBudget web is not met (1 available, 2 must be)") {
			t.Errorf("eviction of an unavailable pod, budget not met: %+v", dec)
		}
		for _, op := range []policyv1alpha1.PubOperation{policyv1alpha1.PubDeleteOperation, policyv1alpha1.PubUpdateOperation, policyv1alpha1.PubResizeOperation} {
			if dec := Admit(pub, p, op, now); dec != (Decision{Allowed: true}) {
				t.Errorf("%s of an unavailable pod, budget not met: %+v", op, dec)
			}
		}
		if !equality.Semantic.DeepEqual(pub, before) {
			t.Error("Admit modified the budget")
		}
		// A budget that needs none available, or that does not guard evictions, lets it go.
		pub.Status.DesiredAvailable = 0
		if dec := Admit(pub, p, policyv1alpha1.PubEvictOperation, now); !dec.Allowed {
			t.Errorf("desiredAvailable 0: %+v", dec)
		}
		pub = unmet()
		pub.Annotations = map[string]string{policyv1alpha1.PubProtectOperationAnnotation: "DELETE"}
		if dec := Admit(pub, p, policyv1alpha1.PubEvictOperation, now); !dec.Allowed {
			t.Errorf("evictions not guarded: %+v", dec)
		}
	}
}

// A budget created moments ago that its controller has not counted yet refuses every guarded
// disruption; one it cannot count (past UncountedFor) decides from its status, as OpenKruise does;
// an operation it does not guard passes at once.
func TestAdmitUncountedBudget(t *testing.T) {
	fresh := budget(nil, nil)
	fresh.CreationTimestamp = ago(time.Second)
	for _, op := range []policyv1alpha1.PubOperation{policyv1alpha1.PubDeleteOperation, policyv1alpha1.PubEvictOperation,
		policyv1alpha1.PubUpdateOperation, policyv1alpha1.PubResizeOperation} {
		if dec := Admit(fresh.DeepCopy(), pod("p"), op, now); dec.Allowed || !strings.Contains(dec.Reason, "has not counted its pods yet") {
			t.Errorf("%s under a budget created a second ago: %+v, want refused", op, dec)
		}
	}
	old := fresh.DeepCopy()
	old.CreationTimestamp = ago(UncountedFor + time.Second)
	if dec := Admit(old, pod("p"), policyv1alpha1.PubDeleteOperation, now); !dec.Allowed {
		t.Errorf("a budget uncounted for longer than %v: %+v, want its status to decide (nothing desired: allowed)", UncountedFor, dec)
	}
	onlyDeletes := fresh.DeepCopy()
	onlyDeletes.Annotations = map[string]string{policyv1alpha1.PubProtectOperationAnnotation: "DELETE"}
	if dec := Admit(onlyDeletes, pod("p"), policyv1alpha1.PubEvictOperation, now); !dec.Allowed {
		t.Errorf("an eviction under a new budget that guards deletions only: %+v, want allowed", dec)
	}
}
