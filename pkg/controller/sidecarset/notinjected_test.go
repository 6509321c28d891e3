package sidecarset

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// A pod the SidecarSet selects but that runs without its sidecars is told so once: created after
// the SidecarSet, and not while its injection is paused (then once it resumes); a pod older than
// the SidecarSet is counted, never told; a pod gone is forgotten.
func TestNewReports(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	set := &v1beta1.SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: "s", CreationTimestamp: created}}
	pod := func(uid string, at time.Duration) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, UID: types.UID(uid), CreationTimestamp: metav1.NewTime(created.Add(at))}}
	}
	older, during, after := pod("older", -time.Minute), pod("during", time.Minute), pod("after", 2*time.Minute)
	names := func(ps []*corev1.Pod) string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return strings.Join(out, ",")
	}
	reported := map[types.UID]bool{}
	set.Spec.InjectionStrategy.Paused = true
	if got := names(newReports(reported, set, []*corev1.Pod{older, during})); got != "" {
		t.Errorf("while paused: told %q, want none", got)
	}
	set.Spec.InjectionStrategy.Paused = false
	if got := names(newReports(reported, set, []*corev1.Pod{older, during, after})); got != "during,after" {
		t.Errorf("resumed: told %q, want during,after", got)
	}
	if got := names(newReports(reported, set, []*corev1.Pod{older, during, after})); got != "" {
		t.Errorf("told again: %q", got)
	}
	newReports(reported, set, []*corev1.Pod{older})
	if reported["during"] || reported["after"] || !reported["older"] {
		t.Errorf("pods gone are not forgotten: %v", reported)
	}
}
