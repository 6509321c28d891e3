package cloneset

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// A pod whose in-place update has completed (its containers run the new image, its gate still
// closed) and which a newer revision updates in place again is not opened and taken out again in
// one reconcile: it stays out of service and gets its next spec alone. Opened and closed 130 ms
// apart, it had its kubelet's Ready False from the update before taken as the answer to the new
// take-out, and its open expectation outlived the new update, whose end it then never opened (the
// soak, seed 3: db-3 left with its gate False). A pod opened by an earlier reconcile, which the
// cache does not show open yet, is not updated until it does.
func TestAPodUpdatedAgainIsNotOpenedFirst(t *testing.T) {
	for _, tc := range []struct {
		name       string
		openedOnce bool
		want       string
	}{
		{name: "completed in the cache: its next spec alone", want: "patch"},
		{name: "opened by an earlier reconcile, not seen open yet: nothing", openedOnce: true, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, rev1 := webAndRevision(t, 1)
			cs.Spec.UpdateStrategy.Type = v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
			cs.Spec.Template.Spec.Containers[0].Image = "app:v2"
			pod := completedPod(t, cs, rev1.Name)
			var writes writeLog
			c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(cs, rev1, pod).WithStatusSubresource(cs, pod).
				WithInterceptorFuncs(writes.funcs()).Build()
			exp := podcontrol.NewExpectations()
			now := time.Now()
			if tc.openedOnce {
				exp.ExpectOpen("ns/web", pod, now.Add(-time.Second))
			}
			r := &Reconciler{Base: workloadloop.Base{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(100),
				Clock: clocktesting.NewFakePassiveClock(now), Expectations: exp, Engine: engine.New(c, nil, inplace.Options{}),
				Updates: podcontrol.NewUpdates()}, Scheme: c.Scheme()}
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}}); err != nil {
				t.Fatal(err)
			}
			r.Updates.Wait() // the spec write runs on after the reconcile, as in the manager
			if got := writes.pods(); got != tc.want {
				t.Fatalf("pod writes %q, want %q", got, tc.want)
			}
			got := &corev1.Pod{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(pod), got); err != nil {
				t.Fatal(err)
			}
			if !inplace.GateFalse(got) {
				t.Error("the pod's gate was opened")
			}
			if tc.openedOnce {
				return
			}
			if img := got.Spec.Containers[0].Image; img != "app:v2" {
				t.Errorf("image %s, want app:v2", img)
			}
			// The new update's end opens it: the expectation of an open does not outlive the update
			// it was made for.
			exp.ExpectOpen("ns/web", pod, now)
			if exp.Opening("ns/web", got) {
				t.Error("an open made at the end of the update before holds back the end of the new one")
			}
		})
	}
}

// completedPod is web-a at revision rev on a node, whose in-place update to rev has completed:
// its container runs a new image ID, its gate is still False and its kubelet reports it not Ready.
func completedPod(t *testing.T, cs *v1alpha1.CloneSet, rev string) *corev1.Pod {
	t.Helper()
	state, err := json.Marshal(appspub.InPlaceUpdateState{Revision: rev, UpdateTimestamp: metav1.Now(), UpdateImages: true,
		LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"app": {ImageID: "app@sha256:v0"}}})
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-a", UID: "web-a", OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cs, gvk)},
			Labels:      map[string]string{"app": "web", v1alpha1.CloneSetInstanceIDLabelKey: "a", inplace.RevisionLabel: rev},
			Annotations: map[string]string{appspub.InPlaceUpdateStateKey: string(state)}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app", Image: "app:v1"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse, Reason: engine.StartReason},
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ReadinessGatesNotReady"}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "app:v1", ImageID: "app@sha256:v1", Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
	}
}
