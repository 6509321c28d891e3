package e2e

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/manager"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// Two kruise-manager replicas: the leader is killed (SIGKILL) in the middle of an in-place
// rollout; the other takes the Lease within its duration and finishes the rollout with no pod
// recreated, and admission (defaulting, validation) and CRD conversion answer throughout, as every
// replica serves the webhooks. On a sandbox of its own (the replicas and their front are the
// test's).
func TestManagerFailoverMidRollout(t *testing.T) {
	ctx := context.Background()
	own, replicas := twoReplicas(t)
	leader := func() (sandbox.ManagerReplica, int) {
		var l sandbox.ManagerReplica
		n := 0
		for _, r := range replicas {
			if r.Leads(ctx) {
				l, n = r, n+1
			}
		}
		return l, n
	}
	var first sandbox.ManagerReplica
	harness.Eventually(t, 30*time.Second, "one leader", func() (bool, string) {
		l, n := leader()
		first = l
		return n == 1, fmt.Sprintf("%d leaders", n)
	})

	cfg, err := own.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	ocs := kubernetes.NewForConfigOrDie(cfg)
	c := harness.KruiseClient(t, cfg)
	ns := harness.Namespace(t, ocs)
	const n = 20
	clone := harness.NewCloneSet(ns, "failover", n, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, podSpec("registry.example/app:v1"))
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 2*time.Minute, ns, "failover", "all ready", harness.RolledOut(n))
	before := podsIn(t, ocs, ns, "app=failover")
	// An object for the conversion webhook to serve (its pods, none, are not the CloneSet's).
	convLabels := map[string]string{"app": "converted"}
	sts := &appsv1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "converted"},
		Spec: appsv1beta1.StatefulSetSpec{Replicas: ptr.To(int32(0)), Selector: &metav1.LabelSelector{MatchLabels: convLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: convLabels}, Spec: podSpec("registry.example/app:v1")}}}
	if err := c.Create(ctx, sts); err != nil {
		t.Fatal(err)
	}

	probe := probeAdmission(t, c, ns, clone)
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`))
	if err := c.Patch(ctx, clone, patch); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, time.Minute, ns, "failover", "mid-rollout", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.ObservedGeneration == cs.Generation && cs.Status.UpdatedReplicas >= 2 && cs.Status.UpdatedReadyReplicas < n
	})
	lease := func() *coordinationv1.Lease {
		l, err := ocs.CoordinationV1().Leases(sandbox.KruiseNamespace).Get(ctx, manager.LeaderElectionID, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if err := own.KillKruiseManagerReplica(first); err != nil {
		t.Fatal(err)
	}
	held := lease() // the killed leader's last renewal
	harness.Eventually(t, 30*time.Second, "the other replica leads", func() (bool, string) {
		l, count := leader()
		return count == 1 && l.Name != first.Name, fmt.Sprintf("%d leaders (%s)", count, l.Name)
	})
	// The Lease is taken once it expires unrenewed, as client-go's leader election decides it: the
	// candidate sees the last renewal at its next retry and takes the Lease at its first retry after
	// the lease duration from then; retries come every 2 s with a jitter of up to 1.2 × (≤ 4.4 s).
	taken := lease()
	handover := taken.Spec.AcquireTime.Sub(held.Spec.RenewTime.Time)
	const retry = 4400 * time.Millisecond
	if limit := time.Duration(*held.Spec.LeaseDurationSeconds)*time.Second + 2*retry + time.Second; taken.Spec.HolderIdentity == held.Spec.HolderIdentity || handover > limit {
		t.Errorf("Lease %s → %s taken %s after the last renewal, want a new holder within %s", *held.Spec.HolderIdentity,
			*taken.Spec.HolderIdentity, handover, limit)
	}
	harness.WaitCloneSet(t, c, 2*time.Minute, ns, "failover", "rolled out by the new leader", harness.RolledOut(n))
	after := podsIn(t, ocs, ns, "app=failover")
	for name, p := range after {
		if b, ok := before[name]; !ok || b.UID != p.UID {
			t.Errorf("pod %s was recreated", name)
		}
	}
	if len(after) != n {
		t.Errorf("%d pods after the rollout, want %d", len(after), n)
	}
	calls, failures := probe()
	t.Logf("leader %s killed; Lease taken %s after its last renewal; %d admission and conversion calls through the failover, %d failed", first.Name,
		handover.Round(100*time.Millisecond), calls, len(failures))
	if calls == 0 {
		t.Error("no admission or conversion call was made during the failover: the check proved nothing")
	}
	if len(failures) > 0 {
		t.Errorf("admission or conversion failed during the failover: %v", failures[:min(len(failures), 5)])
	}
}

// probeAdmission calls the webhooks through the API server every 50 ms until stopped: a dry-run
// CloneSet create (defaulting and validation) and a read of a StatefulSet in v1alpha1 (stored as
// v1beta1: the conversion webhook). stop returns the calls made and the failures.
func probeAdmission(t *testing.T, c client.Client, ns string, clone *appsv1alpha1.CloneSet) (stop func() (int, []string)) {
	t.Helper()
	var (
		calls    atomic.Int64
		mu       sync.Mutex
		failures []string
	)
	fail := func(what string, err error) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf("%s at %s: %v", what, time.Now().Format("15:04:05.000"), err))
		mu.Unlock()
	}
	stopProbe := harness.Every(50*time.Millisecond, func() {
		probe := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "probe-"}, Spec: *clone.Spec.DeepCopy()}
		calls.Add(2)
		if err := c.Create(context.Background(), probe, client.DryRunAll); err != nil {
			fail("dry-run create", err)
		}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "converted"}, &appsv1alpha1.StatefulSet{}); err != nil {
			fail("v1alpha1 read", err)
		}
	})
	return func() (int, []string) {
		stopProbe()
		mu.Lock()
		defer mu.Unlock()
		return int(calls.Load()), failures
	}
}

// twoReplicas starts a sandbox of the test's own with two kruise-manager replicas behind a front.
func twoReplicas(t *testing.T) (*sandbox.Sandbox, []sandbox.ManagerReplica) {
	t.Helper()
	own, err := harness.StartSandbox(3, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := harness.Down(own); err != nil {
			t.Errorf("sandbox down: %v", err)
		}
	})
	replicas, front, err := own.AddKruiseManagerReplica(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = front.Close() })
	return own, replicas
}
