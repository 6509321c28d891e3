package nodeimage

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func TestExpiredTags(t *testing.T) {
	now := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	done := metav1.NewTime(now.Add(-time.Minute))
	ttl := func(s int32) *v1beta1.NodeImageTagPullPolicy {
		return &v1beta1.NodeImageTagPullPolicy{TTLSecondsAfterFinished: ptr.To(s)}
	}
	ni := &v1beta1.NodeImage{
		Spec: v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{"app": {Tags: []v1beta1.NodeImageTagSpec{
			{Tag: "old", Version: 1, PullPolicy: ttl(30)},  // finished a minute ago: expired
			{Tag: "new", Version: 1, PullPolicy: ttl(90)},  // expires in 30 s
			{Tag: "again", Version: 2, PullPolicy: ttl(0)}, // its report is of version 1: not finished
			{Tag: "keep", Version: 1},                      // no TTL
		}}}},
		Status: v1beta1.NodeImageStatus{ImageStatuses: map[string]v1beta1.NodeImageImageStatus{"app": {Tags: []v1beta1.NodeImageTagStatus{
			{Tag: "old", Version: 1, CompletionTime: &done}, {Tag: "new", Version: 1, CompletionTime: &done},
			{Tag: "again", Version: 1, CompletionTime: &done}, {Tag: "keep", Version: 1, CompletionTime: &done},
		}}}},
	}
	expired, next := ExpiredTags(ni, now)
	if len(expired["app"]) != 1 || expired["app"][0] != "old" || next != 30*time.Second {
		t.Errorf("expired %v, next %s; want [old] and 30s", expired, next)
	}
}
