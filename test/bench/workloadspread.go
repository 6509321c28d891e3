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
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/app/manager"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/webhook/podmutation"
	"github.com/kruise-ng/kruise/pkg/webhook/spreadplacement"
	"github.com/kruise-ng/kruise/test/harness"
)

// spreadLatency is what a WorkloadSpread adds to the creation of a CloneSet's pods: the API
// server's time for each pod CREATE of kruise-manager (from its audit log) while an n-pod
// CloneSet scales up, without and with a WorkloadSpread of 3 subsets over it.
type spreadLatency struct {
	Scenario string `json:"scenario"`
	Pods     int    `json:"pods"`
	// BaseP50Ms and BaseP99Ms are without a WorkloadSpread; SpreadP50Ms and SpreadP99Ms with one.
	BaseP50Ms float64 `json:"base_p50_ms"`
	BaseP99Ms float64 `json:"base_p99_ms"`
	// CallP50Ms and CallP99Ms are with a webhook call that does nothing (the same server and path
	// shape, for a spread that does not exist): what any second webhook costs a pod here.
	CallP50Ms   float64 `json:"call_p50_ms"`
	CallP99Ms   float64 `json:"call_p99_ms"`
	SpreadP50Ms float64 `json:"spread_p50_ms"`
	SpreadP99Ms float64 `json:"spread_p99_ms"`
	// AddedP99Ms is SpreadP99Ms - BaseP99Ms: the target is at most 5 ms. SpreadOverCallP99Ms is
	// SpreadP99Ms - CallP99Ms: what the spread's work adds beyond the webhook call itself.
	AddedP99Ms          float64 `json:"added_p99_ms"`
	SpreadOverCallP99Ms float64 `json:"spread_over_call_p99_ms"`
	// BaseWritesPerPod and SpreadWritesPerPod are kruise-manager's writes per pod over the scale-up
	// without and with the spread; SpreadWrites are the latter by verb and resource.
	BaseWritesPerPod   float64        `json:"base_writes_per_pod"`
	SpreadWritesPerPod float64        `json:"spread_writes_per_pod"`
	SpreadWrites       map[string]int `json:"spread_writes"`
	// CallMs and SpreadCallMs are the API server's mean time per mutating webhook call on pod
	// creation (the Kruise pod webhook's and the second one's alike) with the no-op call and under
	// the spread, from apiserver_admission_webhook_admission_duration_seconds; 0 when unreadable.
	CallMs       float64 `json:"call_ms"`
	SpreadCallMs float64 `json:"spread_call_ms"`
	// PlaceP50Ms and PlaceP99Ms are kruise-manager's own time per placement
	// (kruise_workloadspread_placement_seconds, interpolated within its buckets): Kruise's share
	// of what the spread adds, the rest being the API server's webhook round trip.
	PlaceP50Ms float64   `json:"place_p50_ms"`
	PlaceP99Ms float64   `json:"place_p99_ms"`
	Nodes      int       `json:"nodes"`
	Time       time.Time `json:"time"`
}

// placementMetric is kruise-manager's histogram of its time per WorkloadSpread placement.
const placementMetric = "kruise_workloadspread_placement_seconds"

// scaleUp is how a scale-up's pods are admitted.
type scaleUp int

const (
	bare     scaleUp = iota // by the Kruise pod webhook alone
	callOnly                // and by a webhook call to the spreads' path that places nothing
	spread                  // and by a WorkloadSpread of 3 subsets
)

// runSpreadLatency scales an n-pod CloneSet up three times, in namespaces of their own: bare, with
// a second webhook call that does nothing, and under a WorkloadSpread whose subsets hold n/3, n/3
// and the rest (each subset patches a label in, so every pod goes through the spread's
// admission), and compares the pod creations' durations.
func runSpreadLatency(ctx context.Context, sb *sandbox.Sandbox, c client.Client, api kubernetes.Interface, n int, prof *profiler) (spreadLatency, error) {
	l := spreadLatency{Scenario: "pod-create-workloadspread-3", Pods: n}
	base, err := scaleUpCreations(ctx, sb, c, api, "bench-spread-base", n, bare, prof)
	if err != nil {
		return l, fmt.Errorf("scale-up without a WorkloadSpread: %w", err)
	}
	call, err := scaleUpCreations(ctx, sb, c, api, "bench-spread-call", n, callOnly, prof)
	if err != nil {
		return l, fmt.Errorf("scale-up with a webhook call that does nothing: %w", err)
	}
	spread, err := scaleUpCreations(ctx, sb, c, api, "bench-spread", n, spread, prof)
	if err != nil {
		return l, fmt.Errorf("scale-up under a WorkloadSpread: %w", err)
	}
	l.BaseP50Ms, l.BaseP99Ms = percentileMs(base.durations, 0.50), percentileMs(base.durations, 0.99)
	l.CallP50Ms, l.CallP99Ms = percentileMs(call.durations, 0.50), percentileMs(call.durations, 0.99)
	l.SpreadP50Ms, l.SpreadP99Ms = percentileMs(spread.durations, 0.50), percentileMs(spread.durations, 0.99)
	l.BaseWritesPerPod, l.SpreadWritesPerPod = base.writesPerPod, spread.writesPerPod
	l.SpreadWrites, l.CallMs, l.SpreadCallMs = spread.writes, call.callMs, spread.callMs
	l.PlaceP50Ms, l.PlaceP99Ms = spread.placeP50Ms, spread.placeP99Ms
	l.AddedP99Ms = l.SpreadP99Ms - l.BaseP99Ms
	l.SpreadOverCallP99Ms = l.SpreadP99Ms - l.CallP99Ms
	return l, nil
}

// creations are the figures of one scale-up.
type creations struct {
	// durations are the API server's times of kruise-manager's pod creations.
	durations []time.Duration
	// writesPerPod are kruise-manager's writes over the scale-up, per pod; writes by verb and resource.
	writesPerPod float64
	writes       map[string]int
	// callMs is the API server's mean time per mutating webhook call on pod creation.
	callMs float64
	// placeP50Ms and placeP99Ms are kruise-manager's placement times (spread only).
	placeP50Ms, placeP99Ms float64
}

// scaleUpCreations creates an n-pod CloneSet (its pods admitted as mode says) in a namespace of
// its own, waits until its n pods exist, and returns the figures of its creations; prof, when
// set, records the manager's profiles of the scale-up as scenario prefix.
func scaleUpCreations(ctx context.Context, sb *sandbox.Sandbox, c client.Client, api kubernetes.Interface, prefix string, n int, mode scaleUp,
	prof *profiler) (creations, error) {
	var res creations
	ns, err := namespace(ctx, c, prefix)
	if err != nil {
		return res, err
	}
	labels := map[string]string{"app": "bench-spread"}
	// Created at 0 replicas: a spread's webhook entry needs its workload's selector.
	cs := benchCloneSet(ns, 0, labels)
	if err := c.Create(ctx, cs); err != nil {
		return res, err
	}
	switch mode {
	case callOnly:
		stop, err := callNothing(ctx, c, ns, labels)
		if err != nil {
			return res, err
		}
		defer stop()
	case spread:
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
			return res, err
		}
		if err := waitSpreadRegistered(ctx, c, ws); err != nil {
			return res, err
		}
	}
	offset := harness.AuditSize(sb.AuditLog)
	count0, sum0, metricsErr := webhookAdmissions(ctx, api)
	place0, placeErr := managerHistogram(ctx, sb, placementMetric, "", "")
	stopProfile := prof.start(prefix)
	if err := patch(ctx, c, cs, fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)); err != nil {
		return res, err
	}
	if err := waitCloneSet(ctx, c, cs, func(s *appsv1alpha1.CloneSetStatus) bool { return s.Replicas == int32(n) }); err != nil {
		return res, err
	}
	if err := stopProfile(); err != nil {
		return res, err
	}
	count1, sum1, err := webhookAdmissions(ctx, api)
	if metricsErr == nil && err == nil && count1 > count0 {
		res.callMs = (sum1 - sum0) / (count1 - count0) * 1000
	}
	if place1, err := managerHistogram(ctx, sb, placementMetric, "", ""); placeErr == nil && err == nil {
		res.placeP50Ms, res.placeP99Ms = quantile(place0, place1, 0.50)*1000, quantile(place0, place1, 0.99)*1000
	}
	var out []time.Duration
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if out, err = auditCreateDurations(sb.AuditLog, offset, sandbox.KruiseManagerUser, ns, cs.Name+"-"); err != nil {
			return res, err
		}
		if len(out) >= n {
			break
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("the audit log shows %d pod creations, want %d", len(out), n)
		}
	}
	if mode == spread {
		if err := checkSpread(ctx, c, ns, n); err != nil {
			return res, err
		}
	}
	writes, err := countWrites(sb.AuditLog, offset, isUser(sandbox.KruiseManagerUser))
	if err != nil {
		return res, err
	}
	res.durations, res.writes = out, writes.ByResource
	res.writesPerPod = float64(writes.PodWrites+writes.OtherWrites) / float64(n)
	return res, deleteNamespace(ctx, c, ns)
}

// callNothing registers a webhook entry like a spread's — same server, path and scope — for a
// spread of another workload, so that each of the pods labelled labels in ns costs a webhook call
// that places nothing (the spread, read from the manager's cache, does not spread them); stop
// removes it.
func callNothing(ctx context.Context, c client.Client, ns string, labels map[string]string) (stop func(), err error) {
	other := &appsv1alpha1.WorkloadSpread{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other"},
		Spec: appsv1alpha1.WorkloadSpreadSpec{
			TargetReference: &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "CloneSet", Name: "absent"},
			Subsets:         []appsv1alpha1.WorkloadSpreadSubset{{Name: "all"}}}}
	if err := c.Create(ctx, other); err != nil {
		return nil, err
	}
	src := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: manager.MutatingWebhookConfiguration}, src); err != nil {
		return nil, err
	}
	var base *admissionregistrationv1.WebhookClientConfig
	for i := range src.Webhooks {
		if src.Webhooks[i].Name == podmutation.WebhookName {
			base = &src.Webhooks[i].ClientConfig
		}
	}
	if base == nil {
		return nil, fmt.Errorf("no webhook %s in %s", podmutation.WebhookName, manager.MutatingWebhookConfiguration)
	}
	entry := spreadplacement.Entries([]spreadplacement.Spread{{Namespace: ns, Name: other.Name,
		Pods: &metav1.LabelSelector{MatchLabels: labels}}}, *base, 0)
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "bench-call-nothing"}, Webhooks: entry}
	if err := c.Create(ctx, cfg); err != nil {
		return nil, err
	}
	// The API server reads webhook configurations through an informer: give it a moment.
	time.Sleep(2 * time.Second)
	return func() { _ = c.Delete(context.WithoutCancel(ctx), cfg) }, nil
}

// waitSpreadRegistered waits until the API server calls Kruise for the spread's pods: its entry is
// in the WorkloadSpread webhook configuration.
func waitSpreadRegistered(ctx context.Context, c client.Client, ws *appsv1alpha1.WorkloadSpread) error {
	want := spreadplacement.EntryName(ws.Namespace, ws.Name)
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
	fmt.Fprintln(tw, "pod create (server)\tpods\tbare p50 ms\tbare p99 ms\tno-op call p50 ms\tno-op call p99 ms\tspread p50 ms\tspread p99 ms\tadded p99 ms (target ≤ 5)\tadded over the call p99 ms\tms/webhook call (no-op, spread)\tmanager writes/pod (bare, spread)\t")
	fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f, %.1f\t%.2f, %.2f\t\n", l.Scenario, l.Pods, l.BaseP50Ms, l.BaseP99Ms,
		l.CallP50Ms, l.CallP99Ms, l.SpreadP50Ms, l.SpreadP99Ms, l.AddedP99Ms, l.SpreadOverCallP99Ms, l.CallMs, l.SpreadCallMs, l.BaseWritesPerPod, l.SpreadWritesPerPod)
	_ = tw.Flush()
	fmt.Printf("  kruise-manager's own time per placement (kruise_workloadspread_placement_seconds): p50 %.2f ms, p99 %.2f ms\n", l.PlaceP50Ms, l.PlaceP99Ms)
	fmt.Printf("  manager writes under the spread: %v\n", l.SpreadWrites)
}

// runSpreadLatencyIn runs runSpreadLatency with a client of the sandbox.
func runSpreadLatencyIn(ctx context.Context, sb *sandbox.Sandbox, n int, prof *profiler) (spreadLatency, error) {
	cfg, err := benchConfig(sb)
	if err != nil {
		return spreadLatency{}, err
	}
	c, err := benchClient(sb)
	if err != nil {
		return spreadLatency{}, err
	}
	api, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return spreadLatency{}, err
	}
	return runSpreadLatency(ctx, sb, c, api, n, prof)
}
