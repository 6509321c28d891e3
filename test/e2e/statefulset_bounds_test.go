package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/manager"
	"github.com/kruise-ng/kruise/pkg/controller/statefulset"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/test/harness"
)

// managerMemoryBound is the resident memory kruise-manager must stay under while it runs a set
// of 30 million reserved ordinals (it was OOM-killed by such a set before issue 33).
const managerMemoryBound = 200 << 20

// attackRanges are 300 reserveOrdinals ranges of 100,000 ordinals from ordinal 1: 30 million
// ordinals reserved by 4 KiB of spec.
func attackRanges() []intstr.IntOrString {
	out := make([]intstr.IntOrString, 300)
	for i := range out {
		first := 1 + i*ordinal.MaxReservedRange
		out[i] = intstr.FromString(fmt.Sprintf("%d-%d", first, first+ordinal.MaxReservedRange-1))
	}
	return out
}

// Issue 33: a 300-range reserveOrdinals (and replicas 2^31-1) is refused at admission with 422
// naming the field and the bound. With the StatefulSet validating webhook off for the namespace,
// the same spec is stored; the manager then leaves the set's pods alone, reports condition
// InvalidSpec and a Warning event, and its memory stays under 200 MiB without a restart. Fixing
// the spec brings the set back.
func TestStatefulSetBoundsSurviveADisabledWebhook(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	refused := newStatefulSet(ns, "refused", 2, appsv1.ParallelPodManagement)
	refused.Spec.ReserveOrdinals = attackRanges()
	expectInvalid(t, c.Create(ctx, refused), "spec.reserveOrdinals: Too many: 300: must have at most 100 entries")
	huge := newStatefulSet(ns, "huge", math.MaxInt32, appsv1.ParallelPodManagement)
	expectInvalid(t, c.Create(ctx, huge), "spec.replicas: Invalid value: 2147483647: must be at most 100000")

	set := newStatefulSet(ns, "bounded", 2, appsv1.ParallelPodManagement)
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "bounded", "2 ready", func(s *appsv1beta1.StatefulSet) bool { return s.Status.ReadyReplicas == 2 })
	before := podsByName(t, ns, "app=bounded")
	pid, rss := managerMemory(t)
	t.Logf("kruise-manager (pid %d) resident: %d MiB", pid, rss>>20)

	skipStatefulSetValidation(t, c, ns)
	patch := fmt.Sprintf(`{"spec":{"reserveOrdinals":%s}}`, jsonEntries(attackRanges()))
	harness.Eventually(t, 30*time.Second, "the 300-range spec stored past the disabled webhook", func() (bool, string) {
		err := c.Patch(ctx, set, client.RawPatch("application/merge-patch+json", []byte(patch)))
		return err == nil, fmt.Sprint(err)
	})
	peak := rss
	watchMemory := func() (bool, string) {
		now, mem := managerMemory(t)
		peak = max(peak, mem)
		if now != pid {
			return false, fmt.Sprintf("kruise-manager restarted: pid %d, then %d", pid, now)
		}
		return mem < managerMemoryBound, fmt.Sprintf("resident %d MiB (bound %d MiB)", mem>>20, managerMemoryBound>>20)
	}
	harness.Eventually(t, 60*time.Second, "condition InvalidSpec True naming spec.reserveOrdinals", func() (bool, string) {
		if ok, seen := watchMemory(); !ok {
			t.Fatal(seen)
		}
		got := &appsv1beta1.StatefulSet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(set), got); err != nil {
			return false, err.Error()
		}
		cond := findSetCondition(got, statefulset.ConditionInvalidSpec)
		return cond != nil && cond.Status == corev1.ConditionTrue && cond.Reason == statefulset.ReasonSpecOutOfBounds &&
			strings.Contains(cond.Message, "spec.reserveOrdinals: 300 entries, more than the 100 accepted") &&
			got.Status.ObservedGeneration == got.Generation, fmt.Sprintf("%+v", got.Status.Conditions)
	})
	harness.Consistently(t, 10*time.Second, "the manager's memory and the set's pods", func() (bool, string) {
		if ok, seen := watchMemory(); !ok {
			return false, seen
		}
		pods := podsByName(t, ns, "app=bounded")
		for name, p := range before {
			if pods[name] == nil || pods[name].UID != p.UID {
				return false, fmt.Sprintf("pod %s was replaced or deleted (bounded-1 is reserved by the refused spec)", name)
			}
		}
		return len(pods) == len(before), fmt.Sprintf("%d pods", len(pods))
	})
	t.Logf("peak resident memory %d MiB", peak>>20)
	if notes := eventNotes(t, ns); !strings.Contains(notes, statefulset.ReasonSpecOutOfBounds+": spec.reserveOrdinals") {
		t.Errorf("no Warning %s event: %s", statefulset.ReasonSpecOutOfBounds, notes)
	}

	patchStatefulSet(t, c, set, `{"spec":{"reserveOrdinals":[1]}}`)
	waitStatefulSet(t, c, ns, "bounded", "accepted again and rolled to ordinals 0 and 2", func(s *appsv1beta1.StatefulSet) bool {
		cond := findSetCondition(s, statefulset.ConditionInvalidSpec)
		pods := podsByName(t, ns, "app=bounded")
		return cond != nil && cond.Status == corev1.ConditionFalse && pods["bounded-2"] != nil && pods["bounded-1"] == nil && s.Status.ReadyReplicas == 2
	})
}

// expectInvalid fails unless err is a 422 whose message says want.
func expectInvalid(t *testing.T, err error, want string) {
	t.Helper()
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("create: %v; want 422 Invalid saying %q", err, want)
	}
	t.Logf("refused: %.300s", err)
}

func jsonEntries(entries []intstr.IntOrString) string {
	parts := make([]string, len(entries))
	for i, e := range entries {
		parts[i] = strconv.Quote(e.String())
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func findSetCondition(s *appsv1beta1.StatefulSet, typ appsv1.StatefulSetConditionType) *appsv1beta1.StatefulSetCondition {
	for i := range s.Status.Conditions {
		if s.Status.Conditions[i].Type == typ {
			return &s.Status.Conditions[i]
		}
	}
	return nil
}

// managerMemory is the pid of the sandbox's kruise-manager and its resident memory in bytes
// (VmRSS of /proc/PID/status).
func managerMemory(t *testing.T) (int, uint64) {
	t.Helper()
	for _, p := range sb.Processes {
		if p.Name != "kruise-manager" || !p.Alive() {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
		if err != nil {
			t.Fatalf("kruise-manager (pid %d): %v", p.PID, err)
		}
		for line := range strings.Lines(string(data)) {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				if err != nil {
					t.Fatalf("VmRSS %q: %v", v, err)
				}
				return p.PID, kb << 10
			}
		}
		t.Fatalf("no VmRSS in /proc/%d/status", p.PID)
	}
	t.Fatal("no kruise-manager runs in the sandbox")
	return 0, 0
}

// skipStatefulSetValidation turns the Advanced StatefulSet validating webhooks off for namespace
// ns only (a namespaceSelector that leaves it out) and restores them when the test ends.
func skipStatefulSetValidation(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	key := client.ObjectKey{Name: manager.ValidatingWebhookConfiguration}
	isStatefulSet := func(w *admissionregistrationv1.ValidatingWebhook) bool {
		return strings.HasPrefix(w.Name, "vstatefulset-")
	}
	saved := map[string]*metav1.LabelSelector{}
	update := func(change func(w *admissionregistrationv1.ValidatingWebhook)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := c.Get(ctx, key, cfg); err != nil {
				return err
			}
			for i := range cfg.Webhooks {
				if isStatefulSet(&cfg.Webhooks[i]) {
					change(&cfg.Webhooks[i])
				}
			}
			return c.Update(ctx, cfg)
		})
	}
	err := update(func(w *admissionregistrationv1.ValidatingWebhook) {
		saved[w.Name] = w.NamespaceSelector.DeepCopy()
		sel := ptr.Deref(w.NamespaceSelector.DeepCopy(), metav1.LabelSelector{})
		sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{ns}})
		w.NamespaceSelector = &sel
	})
	if err != nil {
		t.Fatalf("turn the StatefulSet validating webhooks off for %s: %v", ns, err)
	}
	if len(saved) != 2 {
		t.Fatalf("%d StatefulSet validating webhooks in %s, want 2 (v1alpha1, v1beta1)", len(saved), key.Name)
	}
	t.Cleanup(func() {
		if err := update(func(w *admissionregistrationv1.ValidatingWebhook) { w.NamespaceSelector = saved[w.Name] }); err != nil {
			t.Errorf("restore the StatefulSet validating webhooks: %v", err)
		}
	})
}
