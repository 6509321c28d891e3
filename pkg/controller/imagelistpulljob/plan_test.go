package imagelistpulljob

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func TestPlanList(t *testing.T) {
	now := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	list := &v1beta1.ImageListPullJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "l", UID: "u"},
		Spec: v1beta1.ImageListPullJobSpec{Images: []string{"a:1", "b:1"}, ImagePullJobTemplate: v1beta1.ImagePullJobTemplate{
			CompletionPolicy: v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways, TTLSecondsAfterFinished: ptr.To[int32](30)}}}}
	p := PlanList(list, nil, now)
	if len(p.Create) != 2 || p.Status.Desired != 2 || p.Status.Active != 2 || p.Status.CompletionTime != nil {
		t.Fatalf("first plan %+v", p)
	}
	if c := p.Create[0]; c.Spec.CompletionPolicy.TTLSecondsAfterFinished != nil || metav1.GetControllerOf(c).UID != "u" || c.Spec.Parallelism == nil {
		t.Errorf("child %+v: want no TTL, owned by the list, defaulted", c.Spec)
	}
	done := metav1.NewTime(now)
	a, b, stale := p.Create[0], p.Create[1], Child(list, "old:1")
	a.Status = v1beta1.ImagePullJobStatus{CompletionTime: &done, Desired: 2, Succeeded: 2}
	b.Status = v1beta1.ImagePullJobStatus{CompletionTime: &done, Desired: 2, Succeeded: 1, Failed: 1, FailedNodes: []string{"n2"}}
	list.Status = p.Status
	p = PlanList(list, []*v1beta1.ImagePullJob{a, b, stale}, now)
	if len(p.Create) != 0 || len(p.Update) != 0 || len(p.Delete) != 1 || p.Delete[0].Name != stale.Name {
		t.Errorf("second plan writes %d/%d/%d", len(p.Create), len(p.Update), len(p.Delete))
	}
	st := p.Status
	if st.Completed != 2 || st.Succeeded != 1 || len(st.FailedImageStatuses) != 1 || st.FailedImageStatuses[0].Name != "b:1" ||
		st.CompletionTime == nil || p.RequeueAfter != 30*time.Second {
		t.Errorf("status %+v requeue %s", st, p.RequeueAfter)
	}
	list.Status = st
	if late := PlanList(list, []*v1beta1.ImagePullJob{a, b}, now.Add(30*time.Second)); !late.DeleteList {
		t.Error("the list was not deleted after its TTL")
	}
	// A template change reaches unfinished jobs.
	list.Status = v1beta1.ImageListPullJobStatus{}
	a.Status = v1beta1.ImagePullJobStatus{}
	list.Spec.Parallelism = nil
	list.Spec.PullSecrets = []string{"reg"}
	if p := PlanList(list, []*v1beta1.ImagePullJob{a, b}, now); len(p.Update) != 1 || p.Update[0].Name != a.Name {
		t.Errorf("updates %v, want the unfinished job %s", p.Update, a.Name)
	}
}
