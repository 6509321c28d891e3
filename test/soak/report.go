package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// eventLog keeps the campaign's last operations and faults, printed with a violation.
type eventLog struct {
	mu    sync.Mutex
	lines []string
}

const eventLogSize = 20_000

func (l *eventLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, time.Now().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
	if len(l.lines) > eventLogSize {
		l.lines = l.lines[len(l.lines)-eventLogSize:]
	}
}

// around are the lines from 30 s before t to 5 s after.
func (l *eventLog) around(t time.Time) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		at, err := time.ParseInLocation("15:04:05.000", line[:12], time.Local)
		if err != nil {
			continue
		}
		at = time.Date(t.Year(), t.Month(), t.Day(), at.Hour(), at.Minute(), at.Second(), at.Nanosecond(), time.Local)
		if !at.Before(t.Add(-30*time.Second)) && !at.After(t.Add(5*time.Second)) {
			out = append(out, line)
		}
	}
	return out
}

// report is what the campaign did and found.
type report struct {
	seed          uint64
	duration      time.Duration
	faults        map[string]int
	faultFailures []string
	revived       int
	ops           int
	checks        int64
	violations    []violation
	converged     []time.Duration
	log           *eventLog
	events        *eventLog
	// writers are, per violation, the writes to its pods in the audit log.
	writers map[string][]string
	// foreign are the pod deletions the checker saw that others than Kruise made (not violations).
	foreign []string
}

// managerUser is kruise-manager's user name in the sandbox's audit log.
const managerUser = "kruise-manager"

// addWriters looks up who wrote to each violation's pods (deletions, evictions, status and
// metadata changes) in the sandbox's audit log, and sets apart the deletions Kruise did not make.
func (r *report) addWriters(auditLog string) {
	writes, err := harness.AuditWrites(auditLog, 0, func(string) bool { return true })
	if err != nil {
		return
	}
	r.setApartForeignDeletions(writes)
	r.writers = map[string][]string{}
	for _, v := range r.violations {
		for _, wr := range writes {
			if wr.Resource == "pods" && wr.Namespace == ns && slices.Contains(v.Pods, wr.Name) && (wr.Verb == "delete" || wr.Subresource == "eviction") {
				key := v.Check + v.At.String()
				r.writers[key] = append(r.writers[key], fmt.Sprintf("%s %s %s/%s %d", wr.User, wr.Verb, wr.Name, wr.Subresource, wr.Code))
			}
		}
	}
}

// setApartForeignDeletions moves the no-unasked-pod-deletion violations whose pod no one but
// others deleted (kwok, say: after a restart it may delete by name a pod recreated under the name of
// the one it was removing; a real kubelet deletes by UID) from the violations to r.foreign: the
// check is about what Kruise deletes. A deletion by kruise-manager, or one the log does not show,
// stays a violation.
func (r *report) setApartForeignDeletions(writes []harness.AuditWrite) {
	kept := r.violations[:0]
	for _, v := range r.violations {
		var others []string
		kruise := false
		for _, wr := range writes {
			if v.Check != checkDeletion || wr.Resource != "pods" || wr.Namespace != ns || wr.Verb != "delete" || !wr.OK() ||
				!slices.Contains(v.Pods, wr.Name) || wr.At.Before(v.At.Add(-10*time.Second)) || wr.At.After(v.At.Add(2*time.Second)) {
				continue
			}
			if wr.User == managerUser {
				kruise = true
			} else if !slices.Contains(others, wr.User) {
				others = append(others, wr.User)
			}
		}
		if kruise || len(others) == 0 {
			kept = append(kept, v)
			continue
		}
		r.foreign = append(r.foreign, fmt.Sprintf("%s (deleted by %s, not Kruise)", v.Message, strings.Join(others, ", ")))
	}
	r.violations = kept
}

func (r *report) failed() bool { return len(r.violations) > 0 || len(r.faultFailures) > 0 }

func (r *report) print(w io.Writer) {
	total := 0
	var kinds []string
	for _, k := range faultKinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, r.faults[k]))
		total += r.faults[k]
	}
	fmt.Fprintf(w, "faults: %s\n", strings.Join(kinds, ", "))
	fmt.Fprintf(w, "manager restarts: %d (%d killed by the injector, %d exited on their own: leader election lost while the API server or etcd was away)\n",
		r.faults[killManager]+r.revived, r.faults[killManager], r.revived)
	for _, f := range r.faultFailures {
		fmt.Fprintf(w, "FAULT NOT CARRIED OUT: %s\n", f)
	}
	for _, f := range r.foreign {
		fmt.Fprintf(w, "not Kruise's: %s\n", f)
	}
	for _, v := range r.violations {
		fmt.Fprintf(w, "VIOLATION %s at %s (seed %d): %s\n", v.Check, v.At.Format("15:04:05.000"), r.seed, v.Message)
		for _, a := range r.writers[v.Check+v.At.String()] {
			fmt.Fprintf(w, "  write: %s\n", a)
		}
		fmt.Fprintf(w, "  operations and faults around it:\n    %s\n", strings.Join(r.log.around(v.At), "\n    "))
		var related []string
		for _, e := range r.events.around(v.At) {
			for _, p := range v.Pods {
				if strings.Contains(e, p) {
					related = append(related, e)
					break
				}
			}
		}
		fmt.Fprintf(w, "  events naming its pods:\n    %s\n", strings.Join(related, "\n    "))
	}
	p50, p99 := percentile(r.converged, 50), percentile(r.converged, 99)
	fmt.Fprintf(w, "converged after the last fault: p50 %.1f s, p99 %.1f s (%d workloads)\n", p50.Seconds(), p99.Seconds(), len(r.converged))
	fmt.Fprintf(w, "soak: %d faults, %d operations, %d checks, %d violations, converged p99 %.1f s\n",
		total, r.ops, r.checks, len(r.violations), p99.Seconds())
}

// percentile is the p-th percentile of ds (nearest rank); 0 for none.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (p*len(s) + 99) / 100
	return s[max(i-1, 0)]
}

// kwokNodes are the sandbox's kwok nodes, by name.
func kwokNodes(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sandbox.NodeTypeLabel + "=kwok"})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range list.Items {
		out = append(out, n.Name)
	}
	sort.Strings(out)
	return out, nil
}
