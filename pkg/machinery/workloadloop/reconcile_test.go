package workloadloop

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/predownload"
)

// stub is a kind whose steps are recorded and whose apply returns errs.
type stub struct {
	steps   *[]string
	errs    Errors
	replica int32
	next    time.Duration
}

type stubObs struct{ pods map[string]*corev1.Pod }

func (k stub) Observe(context.Context, *v1alpha1.CloneSet, bool) (stubObs, error) {
	*k.steps = append(*k.steps, "observe")
	return stubObs{pods: map[string]*corev1.Pod{}}, nil
}
func (k stub) ObserveFailed(context.Context, string, *v1alpha1.CloneSet, error) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}
func (stub) Pods(o stubObs) map[string]*corev1.Pod { return o.pods }
func (k stub) Plan(stubObs, time.Time) string {
	*k.steps = append(*k.steps, "plan")
	return "plan"
}
func (k stub) Apply(context.Context, *v1alpha1.CloneSet, stubObs, string) Errors {
	*k.steps = append(*k.steps, "apply")
	return k.errs
}
func (stub) PreDownload(*v1alpha1.CloneSet, stubObs) (predownload.Input, bool) {
	return predownload.Input{}, false
}
func (stub) Waits(*v1alpha1.CloneSet, string) (string, []string) { return "", nil }
func (k stub) Status(_ *v1alpha1.CloneSet, _ stubObs, _ Errors, _ time.Time) (v1alpha1.CloneSetStatus, bool) {
	*k.steps = append(*k.steps, "status")
	return v1alpha1.CloneSetStatus{Replicas: k.replica}, true
}
func (stub) StatusOf(cs *v1alpha1.CloneSet) v1alpha1.CloneSetStatus { return cs.Status }
func (k stub) Requeue(_ *v1alpha1.CloneSet, _ string, _ v1alpha1.CloneSetStatus, _ time.Time, q *podcontrol.Requeue) {
	q.After(k.next)
}
func (k stub) Forget(ctrl.Request) { *k.steps = append(*k.steps, "forget") }

// The loop runs a kind's steps in order, writes the status before it returns the apply's errors
// (scale before update), waits for the controller's own writes, and forgets a workload that is gone.
func TestReconcileOrder(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}}
	scaleErr, updateErr := errors.New("scale"), errors.New("update")
	for _, tc := range []struct {
		name      string
		errs      Errors
		expect    bool
		gone      bool
		wantSteps string
		wantErr   error
		wantAfter time.Duration
		wantWrite bool
	}{
		{name: "errors after the status, scale first", errs: Errors{Scale: scaleErr, Update: updateErr},
			wantSteps: "observe plan apply status", wantErr: scaleErr, wantWrite: true},
		{name: "update error", errs: Errors{Update: updateErr}, wantSteps: "observe plan apply status", wantErr: updateErr, wantWrite: true},
		{name: "budget waits retry soon", errs: Errors{BudgetWaits: []string{"web-a"}}, wantSteps: "observe plan apply status",
			wantAfter: podcontrol.BudgetRetry, wantWrite: true},
		{name: "own writes not seen: no plan", expect: true, wantSteps: "observe", wantAfter: time.Second},
		{name: "gone: forgotten", gone: true, wantSteps: "forget"},
		{name: "gone as the API server shows it: no status, a look again soon", errs: Errors{Scale: podcontrol.ErrOwnerGone},
			wantSteps: "observe plan apply", wantAfter: time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&v1alpha1.CloneSet{})
			if !tc.gone {
				b = b.WithObjects(cs.DeepCopy())
			}
			c := b.Build()
			exp := podcontrol.NewExpectations()
			if tc.expect {
				exp.ExpectCreate(req.String(), "web-new", t0)
			}
			var steps []string
			sh := Shared{Client: c, Clock: clocktesting.NewFakePassiveClock(t0), Expectations: exp,
				Control: &podcontrol.Control{Client: c}, State: &State{}, Name: "cloneset"}
			res, err := Reconcile(context.Background(), req, sh, stub{steps: &steps, errs: tc.errs, replica: 3, next: time.Minute}, &v1alpha1.CloneSet{})
			if got := strings.Join(steps, " "); got != tc.wantSteps {
				t.Errorf("steps %q, want %q", got, tc.wantSteps)
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && !tc.gone && res.RequeueAfter != tc.wantAfter && !(tc.wantAfter == 0 && res.RequeueAfter == time.Minute) {
				t.Errorf("requeue after %v, want %v", res.RequeueAfter, tc.wantAfter)
			}
			if tc.gone {
				return
			}
			got := &v1alpha1.CloneSet{}
			if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			if wrote := got.Status.Replicas == 3; wrote != tc.wantWrite {
				t.Errorf("status written %v, want %v", wrote, tc.wantWrite)
			}
		})
	}
}

// A workload that finds orphans to adopt while the API server shows it gone (deleted with
// propagation Orphan, still in the cache) writes nothing: neither its update revision nor any pod.
func TestApplyWritesNothingForAGoneOwner(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := appsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "old"}}
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-a", UID: "pod-a"}}
	for name, live := range map[string][]client.Object{
		"gone":     nil,
		"replaced": {&v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "new"}}},
	} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(orphan.DeepCopy()).Build()
			api := fake.NewClientBuilder().WithScheme(scheme).WithObjects(live...).Build()
			rev := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-2"}}
			errs := Apply(context.Background(), cs, Writes{Control: &podcontrol.Control{Client: c, APIReader: api},
				Owner:       podcontrol.Owner{Object: cs, GVK: v1alpha1.SchemeGroupVersion.WithKind("CloneSet")},
				NewRevision: &revision.Decision{Update: rev, Create: true}, Adopt: []*corev1.Pod{orphan}})
			if !errors.Is(errs.Scale, podcontrol.ErrOwnerGone) {
				t.Fatalf("errors %+v, want ErrOwnerGone", errs)
			}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(rev), &appsv1.ControllerRevision{}); err == nil {
				t.Error("the revision was created")
			}
			got := &corev1.Pod{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(orphan), got); err != nil || len(got.OwnerReferences) > 0 {
				t.Errorf("the orphan was adopted: %+v (%v)", got.OwnerReferences, err)
			}
		})
	}
}
