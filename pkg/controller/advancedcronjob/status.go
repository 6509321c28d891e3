package advancedcronjob

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// lastScheduled is the latest tick the cron job has run: the latest of status.lastScheduleTime,
// its children's scheduled-at annotations and the manager's own record of its last creation.
// It never goes back when a child goes away (a TTL, a history limit of 0, a user's delete), so
// a tick that ran never runs again (kruise#862, #1488). Zero when nothing ran yet.
func lastScheduled(s *snapshot) time.Time {
	var last time.Time
	if lst := s.ACJ.Status.LastScheduleTime; lst != nil {
		last = lst.Time
	}
	for _, c := range s.Children {
		if c.ScheduledAt != nil && c.ScheduledAt.After(last) {
			last = *c.ScheduledAt
		}
	}
	if s.Created.After(last) {
		last = s.Created
	}
	return last
}

// computeStatus is the cron job's status after p was applied: the template's kind, the
// children still running (those p deletes left out, the one just created — name and uid —
// added), and the latest tick run.
func computeStatus(s *snapshot, p *Plan, created *child) v1beta1.AdvancedCronJobStatus {
	st := v1beta1.AdvancedCronJobStatus{Type: s.Kind}
	if s.TemplateErr != nil {
		st.Type = s.ACJ.Status.Type
	}
	deleted := map[string]bool{}
	for _, d := range p.Delete {
		deleted[d.Child.Name] = true
	}
	for _, c := range s.Children {
		if c.State == childActive && !c.Deleting && !deleted[c.Name] {
			st.Active = append(st.Active, childRef(s.ACJ, s.Kind, c.Name, c.UID))
		}
	}
	last := lastScheduled(s)
	if created != nil {
		if !slices.ContainsFunc(st.Active, func(r corev1.ObjectReference) bool { return r.Name == created.Name }) {
			st.Active = append(st.Active, childRef(s.ACJ, s.Kind, created.Name, created.UID))
		}
		if created.ScheduledAt != nil && created.ScheduledAt.After(last) {
			last = *created.ScheduledAt
		}
	}
	slices.SortFunc(st.Active, func(a, b corev1.ObjectReference) int { return strings.Compare(a.Name, b.Name) })
	if !last.IsZero() {
		t := metav1.NewTime(last).Rfc3339Copy()
		st.LastScheduleTime = &t
	}
	return st
}
