package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/test/harness"
)

const imgV1, imgV2 = "registry.example/app:v1", "registry.example/app:v2"

// Rollback: reverting the template during a partial rollout brings the updated pods back to the
// old revision in place. With the feature gate CloneSetPartitionRollback, raising the partition
// moves updated pods back to the current revision, in place.
func TestCloneSetRollback(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const replicas = 6
	clone := newCloneSet(ns, "back", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	clone.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "back", "all ready", func(cs *appsv1alpha1.CloneSet) bool { return cs.Status.ReadyReplicas == replicas })
	before := podsByName(t, ns, "app=back")
	images := func(v1, v2 int) func(*appsv1alpha1.CloneSet) bool {
		return func(cs *appsv1alpha1.CloneSet) bool {
			n := countImages(t, ns, "back")
			return cs.Status.ObservedGeneration == cs.Generation && cs.Status.ReadyReplicas == replicas &&
				cs.Status.UpdatedReadyReplicas == cs.Status.UpdatedReplicas && n[imgV1] == v1 && n[imgV2] == v2
		}
	}
	image := func(img string) string {
		return fmt.Sprintf(`"template":{"spec":{"containers":[{"name":"app","image":%q}]}}`, img)
	}

	patchCloneSet(t, c, clone, `{"spec":{"updateStrategy":{"partition":3},`+image(imgV2)+`}}`)
	waitCloneSet(t, c, ns, "back", "3 pods on v2 above the partition", images(3, 3))
	patchCloneSet(t, c, clone, `{"spec":{"updateStrategy":{"partition":0},`+image(imgV1)+`}}`)
	waitCloneSet(t, c, ns, "back", "every pod back on v1", images(replicas, 0))
	after := podsByName(t, ns, "app=back")
	restarted := 0
	for name, p := range after {
		if b, ok := before[name]; !ok || b.UID != p.UID {
			t.Errorf("pod %s was recreated by the revert", name)
		}
		switch p.Status.ContainerStatuses[0].RestartCount {
		case 2:
			restarted++
		case 0:
		default:
			t.Errorf("pod %s: %s", name, describe(p))
		}
	}
	if restarted != 3 {
		t.Errorf("%d pods restarted twice (v1→v2→v1); want the 3 that were updated", restarted)
	}

	// The gate: raising the partition rolls pods back.
	if err := sb.RestartKruiseManager(ctx, "CloneSetPartitionRollback=true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.RestartKruiseManager(context.Background(), ""); err != nil {
			t.Errorf("restore the manager's feature gates: %v", err)
		}
	})
	patchCloneSet(t, c, clone, `{"spec":{"updateStrategy":{"partition":2},`+image(imgV2)+`}}`)
	waitCloneSet(t, c, ns, "back", "4 pods on v2 above partition 2", images(2, 4))
	patchCloneSet(t, c, clone, `{"spec":{"updateStrategy":{"partition":5}}}`)
	waitCloneSet(t, c, ns, "back", "partition 5: 3 pods rolled back to v1", images(5, 1))
	harness.Consistently(t, 2*time.Second, "partition 5 holds", func() (bool, string) {
		n := countImages(t, ns, "back")
		return n[imgV1] == 5 && n[imgV2] == 1, fmt.Sprint(n)
	})
	for name, p := range podsByName(t, ns, "app=back") {
		if b, ok := before[name]; !ok || b.UID != p.UID {
			t.Errorf("pod %s was recreated by the partition rollback", name)
		}
	}
}
