package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/install"
	"github.com/kruise-ng/kruise/pkg/manager"
	"github.com/kruise-ng/kruise/pkg/sandbox"
	wswebhook "github.com/kruise-ng/kruise/pkg/webhook/workloadspread"
	"github.com/kruise-ng/kruise/test/harness"
)

// spreadLatency is what a WorkloadSpread adds to the creation of a CloneSet's pods: the API
// server's time for each pod CREATE of kruise-manager (from its audit log) while an n-pod
// CloneSet scales up, without and with a WorkloadSpread of 3 subsets over it.
type spreadLatency struct {
	Scenario string `json:"scenario"`
	Pods     int    `json:"pods"`
	// BaseP50Ms and BaseP99Ms are without a WorkloadSpread; SpreadP50Ms and SpreadP99Ms with one.
	BaseP50Ms   float64 `json:"base_p50_ms"`
	BaseP99Ms   float64 `json:"base_p99_ms"`
	SpreadP50Ms float64 `json:"spread_p50_ms"`
	SpreadP99Ms float64 `json:"spread_p99_ms"`
	// AddedP99Ms is SpreadP99Ms - BaseP99Ms: the target is at most 5 ms.
	AddedP99Ms float64   `json:"added_p99_ms"`
	Nodes      int       `json:"nodes"`
	Time       time.Time `json:"time"`
}

// runSpreadLatency scales an n-pod CloneSet up twice, in namespaces of their own: bare, then under
// a WorkloadSpread whose subsets hold n/3, n/3 and the rest (each subset patches a label in, so
// every pod goes through the spread's admission), and compares the pod creations' durations.
func runSpreadLatency(ctx context.Context, sb *sandbox.Sandbox, c client.Client, n int) (spreadLatency, error) {
	l := spreadLatency{Scenario: "pod-create-workloadspread-3", Pods: n}
	base, err := scaleUpCreations(ctx, sb, c, "bench-spread-base", n, false)
	if err != nil {
		return l, fmt.Errorf("scale-up without a WorkloadSpread: %w", err)
	}
	spread, err := scaleUpCreations(ctx, sb, c, "bench-spread", n, true)
	if err != nil {
		return l, fmt.Errorf("scale-up under a WorkloadSpread: %w", err)
	}
	l.BaseP50Ms, l.BaseP99Ms = percentileMs(base, 0.50), percentileMs(base, 0.99)
	l.SpreadP50Ms, l.SpreadP99Ms = percentileMs(spread, 0.50), percentileMs(spread, 0.99)
	l.AddedP99Ms = l.SpreadP99Ms - l.BaseP99Ms
	return l, nil
}

// scaleUpCreations creates an n-pod CloneSet (under a WorkloadSpread when spread) in a namespace
// of its own, waits until its n pods exist, and returns the API server's duration of each of
// kruise-manager's pod creations.
func scaleUpCreations(ctx context.Context, sb *sandbox.Sandbox, c client.Client, prefix string, n int, spread bool) ([]time.Duration, error) {
	ns, err := namespace(ctx, c, prefix)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{"app": "bench-spread"}
	// Created at 0 replicas: a spread's webhook entry needs its workload's selector.
	cs := benchCloneSet(ns, 0, labels)
	if err := c.Create(ctx, cs); err != nil {
		return nil, err
	}
	if spread {
		third := intstr.FromInt32(int32(max(1, n/3)))
		subset := func(name string, maxReplicas *intstr.IntOrString) appsv1alpha1.WorkloadSpreadSubset {
			return appsv1alpha1.WorkloadSpreadSubset{Name: name, MaxReplicas: maxReplicas,
				Patch: runtime.RawExtension{Raw: fmt.Appendf(nil, `{"metadata":{"labels":{"bench.kruise.io/subset":%q}}}`, name)}}
		}
		ws := &appsv1alpha1.WorkloadSpread{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bench"},
			Spec: appsv1alpha1.WorkloadSpreadSpec{
				TargetReference: &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "CloneSet", Name: cs.Name},
				Subsets:         []appsv1alpha1.WorkloadSpreadSubset{subset("a", &third), subset("b", &third), subset("c", nil)}}}
		if err := c.Create(ctx, ws); err != nil {
			return nil, err
		}
		if err := waitSpreadRegistered(ctx, c, ws); err != nil {
			return nil, err
		}
	}
	offset := harness.AuditSize(sb.AuditLog)
	if err := patch(ctx, c, cs, fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)); err != nil {
		return nil, err
	}
	if err := waitCloneSet(ctx, c, cs, func(s *appsv1alpha1.CloneSetStatus) bool { return s.Replicas == int32(n) }); err != nil {
		return nil, err
	}
	var out []time.Duration
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if out, err = auditCreateDurations(sb.AuditLog, offset, sandbox.KruiseManagerUser, ns, cs.Name+"-"); err != nil {
			return nil, err
		}
		if len(out) >= n {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the audit log shows %d pod creations, want %d", len(out), n)
		}
	}
	if spread {
		if err := checkSpread(ctx, c, ns, n); err != nil {
			return nil, err
		}
	}
	return out, deleteNamespace(ctx, c, ns)
}

// waitSpreadRegistered waits until the API server calls Kruise for the spread's pods: its entry is
// in the WorkloadSpread webhook configuration.
func waitSpreadRegistered(ctx context.Context, c client.Client, ws *appsv1alpha1.WorkloadSpread) error {
	want := wswebhook.EntryName(ws.Namespace, ws.Name)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: install.WorkloadSpreadConfiguration}, cfg); err != nil {
			return err
		}
		for _, w := range cfg.Webhooks {
			if w.Name == want {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("WorkloadSpread %s/%s: no webhook entry %s after a minute", ws.Namespace, ws.Name, want)
		}
	}
}

// checkSpread fails unless every pod went through the spread: each carries a subset's label.
func checkSpread(ctx context.Context, c client.Client, ns string, n int) error {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(ns), client.HasLabels{"bench.kruise.io/subset"}); err != nil {
		return err
	}
	if len(pods.Items) < n {
		return fmt.Errorf("%d of %d pods carry a subset's label: the WorkloadSpread did not admit every pod", len(pods.Items), n)
	}
	return nil
}

func printSpreadLatency(l spreadLatency) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "pod create (server)\tpods\tbare p50 ms\tbare p99 ms\tspread p50 ms\tspread p99 ms\tadded p99 ms (target ≤ 5)\t")
	fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", l.Scenario, l.Pods, l.BaseP50Ms, l.BaseP99Ms, l.SpreadP50Ms, l.SpreadP99Ms, l.AddedP99Ms)
	_ = tw.Flush()
}

// runSpreadLatencyIn runs runSpreadLatency with a client of the sandbox.
func runSpreadLatencyIn(ctx context.Context, sb *sandbox.Sandbox, n int) (spreadLatency, error) {
	cfg, err := sb.RESTConfig()
	if err != nil {
		return spreadLatency{}, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	cfg.WarningHandler = warnings
	scheme, err := manager.NewScheme()
	if err != nil {
		return spreadLatency{}, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return spreadLatency{}, err
	}
	return runSpreadLatency(ctx, sb, c, n)
}
