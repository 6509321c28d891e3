package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// latencyUser is the client identity of the pod creations, so the audit log finds them alone.
const latencyUser = "kruise-bench-pods"

// latencyPods pods are created, one at a time, per number of SidecarSets; latencyWarmup more
// before them are not counted (the API server's first calls of a new webhook entry set up its
// client and connection).
const (
	latencyPods   = 200
	latencyWarmup = 5
)

// latencySidecarSets are the numbers of SidecarSets that select the pods.
var latencySidecarSets = []int{0, 1, 20}

// latency is the pod creation latency with a number of SidecarSets selecting the pods; its JSON
// form is appended to BENCH_JSON with the scenarios'.
type latency struct {
	Scenario    string `json:"scenario"`
	SidecarSets int    `json:"sidecarsets"`
	Pods        int    `json:"pods"`
	// ClientP50Ms and ClientP99Ms are the pod CREATE calls as the client sees them: the round trip
	// to the API server, its admission chain — with SidecarSets, the call to the injection webhook
	// (kruise-manager) and the injected pod's validation — and the write to etcd.
	ClientP50Ms float64 `json:"client_p50_ms"`
	ClientP99Ms float64 `json:"client_p99_ms"`
	// ServerP50Ms and ServerP99Ms are the same calls inside the API server, from its audit log
	// (requestReceivedTimestamp to ResponseComplete): the round trip and the client left out.
	ServerP50Ms float64 `json:"server_p50_ms"`
	ServerP99Ms float64 `json:"server_p99_ms"`
	// WebhookCallsPerPod and WebhookMsPerCall are the mutating webhook calls of the pods' creation
	// and their mean duration, from the API server's apiserver_admission_webhook_admission_duration_seconds
	// (its buckets are too coarse for percentiles); absent when /metrics cannot be read.
	WebhookCallsPerPod *float64 `json:"webhook_calls_per_pod,omitempty"`
	WebhookMsPerCall   *float64 `json:"webhook_ms_per_call,omitempty"`
	// ManagerCPUMsPerPod is kruise-manager's CPU time over the creations, per pod: the injection,
	// and whatever else the manager does meanwhile (the SidecarSet controller counts the pods).
	ManagerCPUMsPerPod float64 `json:"manager_cpu_ms_per_pod"`
	// ManagerWritesPerPod are kruise-manager's successful writes over the creations, per pod (the
	// SidecarSets' status as their controller counts the new pods).
	ManagerWritesPerPod float64   `json:"manager_writes_per_pod"`
	Nodes               int       `json:"nodes"`
	Time                time.Time `json:"time"`
}

// runWebhookLatency measures what the pod webhook adds to a pod's creation: bare pods with a plain
// label (no Kruise workload's, so with 0 SidecarSets no Kruise webhook is called for them — only
// a Kruise workload's pods call the readiness-gate webhook) are created one at a time on the kwok
// nodes (nodeName set: no scheduler in the way) with 0, 1 and 20 SidecarSets selecting them, each
// SidecarSet with its own sidecar, registration awaited. With 20, the first entry called injects
// all 20 sidecars and the API server skips the others by their matchConditions.
func runWebhookLatency(ctx context.Context, sb *sandbox.Sandbox, nodes int, prof *profiler) ([]latency, error) {
	cfg, err := unlimitedConfig(sb, latencyUser, warnings)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c, err := harness.NewKruiseClient(cfg)
	if err != nil {
		return nil, err
	}
	mgrPID, err := processPID(sb, "kruise-manager")
	if err != nil {
		return nil, err
	}
	var out []latency
	for _, k := range latencySidecarSets {
		l, err := podCreateLatency(ctx, sb, c, cs, nodes, mgrPID, k, prof)
		if err != nil {
			return nil, fmt.Errorf("pod creation with %d SidecarSets: %w", k, err)
		}
		out = append(out, l)
	}
	return out, nil
}

func podCreateLatency(ctx context.Context, sb *sandbox.Sandbox, c client.Client, cs kubernetes.Interface, nodes, mgrPID, k int, prof *profiler) (latency, error) {
	l := latency{Scenario: fmt.Sprintf("pod-create-sidecarsets-%d", k), SidecarSets: k, Pods: latencyPods}
	ns, err := namespace(ctx, c, fmt.Sprintf("bench-webhook-%d", k))
	if err != nil {
		return l, err
	}
	labels := map[string]string{"app": "bench-webhook"}
	var sets []*appsv1beta1.SidecarSet
	for i := range k {
		sets = append(sets, benchSidecarSet(fmt.Sprintf("%s-%02d", ns, i), ns, labels, fmt.Sprintf("sidecar-%02d", i)))
	}
	if err := createSidecarSets(ctx, c, sets...); err != nil {
		return l, err
	}
	create := func(name string, i int) (time.Duration, error) {
		spec := podSpec(image("v1"))
		spec.NodeName = sandbox.FakeNodeName(i % nodes)
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: spec}
		t0 := time.Now()
		got, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		d := time.Since(t0)
		if err != nil {
			return d, err
		}
		if len(got.Spec.Containers) != 1+k {
			return d, fmt.Errorf("pod %s was created with %d containers, want %d (the app and %d sidecars)", name, len(got.Spec.Containers), 1+k, k)
		}
		return d, nil
	}
	for i := range latencyWarmup {
		if _, err := create(fmt.Sprintf("warmup-%d", i), i); err != nil {
			return l, err
		}
	}
	count0, sum0, metricsErr := webhookAdmissions(ctx, cs)
	cpu0, err := cpuSeconds(mgrPID)
	if err != nil {
		return l, err
	}
	stopProfile := prof.start(l.Scenario)
	offset := harness.AuditSize(sb.AuditLog)
	durations := make([]time.Duration, latencyPods)
	for i := range latencyPods {
		if durations[i], err = create(fmt.Sprintf("pod-%d", i), i); err != nil {
			return l, err
		}
	}
	cpu1, err := cpuSeconds(mgrPID)
	if err != nil {
		return l, err
	}
	if err := stopProfile(); err != nil {
		return l, err
	}
	l.ManagerCPUMsPerPod = (cpu1 - cpu0) * 1000 / float64(latencyPods)
	l.ClientP50Ms, l.ClientP99Ms = percentileMs(durations, 0.50), percentileMs(durations, 0.99)
	// The API server may answer a request before its audit event is written: wait a little.
	var server []time.Duration
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if server, err = auditCreateDurations(sb.AuditLog, offset, latencyUser, ns, "pod-"); err != nil {
			return l, err
		}
		if len(server) == latencyPods {
			break
		}
		if time.Now().After(deadline) {
			return l, fmt.Errorf("the audit log shows %d pod creations, want %d", len(server), latencyPods)
		}
	}
	l.ServerP50Ms, l.ServerP99Ms = percentileMs(server, 0.50), percentileMs(server, 0.99)
	writes, err := countWrites(sb.AuditLog, offset, isUser(sandbox.KruiseManagerUser))
	if err != nil {
		return l, err
	}
	l.ManagerWritesPerPod = float64(writes.PodWrites+writes.OtherWrites) / float64(latencyPods)
	if metricsErr == nil {
		var count1, sum1 float64
		if count1, sum1, metricsErr = webhookAdmissions(ctx, cs); metricsErr == nil {
			calls := (count1 - count0) / float64(latencyPods)
			l.WebhookCallsPerPod = &calls
			if count1 > count0 {
				ms := (sum1 - sum0) / (count1 - count0) * 1000
				l.WebhookMsPerCall = &ms
			}
		}
	}
	if metricsErr != nil {
		fmt.Fprintf(os.Stderr, "bench: the API server's webhook metrics: %v\n", metricsErr)
	}
	if err := deleteNamespace(ctx, c, ns); err != nil {
		return l, err
	}
	return l, deleteSidecarSets(ctx, c, sets...)
}

// percentileMs is the nearest-rank q-quantile of ds, in milliseconds.
func percentileMs(ds []time.Duration, q float64) float64 {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return float64(s[max(i, 0)]) / float64(time.Millisecond)
}

// webhookAdmissions sums the API server's mutating webhook calls on CREATE (any entry) and
// their seconds, from its /metrics.
func webhookAdmissions(ctx context.Context, cs kubernetes.Interface) (count, sum float64, err error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, 0, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return 0, 0, err
	}
	f := families["apiserver_admission_webhook_admission_duration_seconds"]
	if f == nil {
		return 0, 0, nil // no webhook called yet
	}
	for _, m := range f.GetMetric() {
		if !hasLabel(m, "operation", "CREATE") || !hasLabel(m, "type", "admit") || m.GetHistogram() == nil {
			continue
		}
		count += float64(m.GetHistogram().GetSampleCount())
		sum += m.GetHistogram().GetSampleSum()
	}
	return count, sum, nil
}

// auditCreateEvent is the part of an audit event that times a request.
type auditCreateEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceived metav1.MicroTime `json:"requestReceivedTimestamp"`
	StageTimestamp  metav1.MicroTime `json:"stageTimestamp"`
}

// auditCreateDurations reads the audit log from offset and returns how long the API server took
// over each successful creation by user of a pod of ns whose name starts with prefix.
func auditCreateDurations(path string, offset int64, user, ns, prefix string) ([]time.Duration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	var out []time.Duration
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(user)) {
			continue
		}
		var e auditCreateEvent
		if err := json.Unmarshal(line, &e); err != nil || e.Stage != "ResponseComplete" || e.Verb != "create" || e.User.Username != user ||
			e.ObjectRef == nil || e.ObjectRef.Resource != "pods" || e.ObjectRef.Subresource != "" || e.ObjectRef.Namespace != ns ||
			!strings.HasPrefix(e.ObjectRef.Name, prefix) || e.ResponseStatus == nil || e.ResponseStatus.Code != 201 {
			continue
		}
		out = append(out, e.StageTimestamp.Sub(e.RequestReceived.Time))
	}
	return out, sc.Err()
}

func printLatency(ls []latency) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "pod create\tSidecarSets\tpods\tp50 ms\tp99 ms\tserver p50 ms\tserver p99 ms\twebhook calls/pod\twebhook ms/call\tmanager CPU ms/pod\tmanager writes/pod\t")
	opt := func(v *float64, format string) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf(format, *v)
	}
	for _, l := range ls {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t%s\t%.2f\t%.2f\t\n", l.Scenario, l.SidecarSets, l.Pods, l.ClientP50Ms, l.ClientP99Ms,
			l.ServerP50Ms, l.ServerP99Ms, opt(l.WebhookCallsPerPod, "%.2f"), opt(l.WebhookMsPerCall, "%.1f"), l.ManagerCPUMsPerPod, l.ManagerWritesPerPod)
	}
	_ = tw.Flush()
}
