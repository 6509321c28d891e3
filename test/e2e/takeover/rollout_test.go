package takeover

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/test/harness"
)

// After the takeover each CloneSet rolls to a new image in place: every pod OpenKruise created
// keeps its UID (the pod held in PreparingDelete and the evicted one aside, left as they are).
func rollsForwardInPlace(t *testing.T) {
	ctx := context.Background()
	const image = "example.com/app:v3"
	for _, c := range fixture.CloneSets {
		// partition 0: cs-partition's keeps two pods back.
		patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":%q},`+
			`{"op":"add","path":"/spec/updateStrategy/partition","value":0}]`, image)
		if c.Name == graceCloneSet {
			// Its second pod waits in a grace period of an hour; without one it goes at once.
			patch = strings.TrimSuffix(patch, "]") + `,{"op":"replace","path":"/spec/updateStrategy/inPlaceUpdateStrategy/gracePeriodSeconds","value":0}]`
		}
		obj := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: c.Name}}
		if err := kc.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
			t.Fatalf("CloneSet %s: %v", c.Name, err)
		}
	}
	for _, c := range fixture.CloneSets {
		want := int(*c.Spec.Replicas)
		harness.Eventually(t, 90*time.Second, c.Name+" rolled to "+image+" in place", func() (bool, string) {
			pods, err := cs.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + c.Name})
			if err != nil {
				return false, err.Error()
			}
			var serving, seen []string
			for i := range pods.Items {
				p := &pods.Items[i]
				seen = append(seen, harness.DescribePod(p))
				if p.Status.Phase == corev1.PodFailed || p.Labels[appspub.LifecycleStateKey] == string(appspub.LifecycleStatePreparingDelete) {
					continue
				}
				if uid, ok := objs.podUIDs[p.Name]; !ok || uid != p.UID {
					return false, "pod " + p.Name + " was created or recreated: " + strings.Join(seen, "; ")
				}
				if p.Spec.Containers[0].Image == image && harness.PodCondition(p, corev1.PodReady) == corev1.ConditionTrue &&
					harness.PodCondition(p, appspub.InPlaceUpdateReady) == corev1.ConditionTrue {
					serving = append(serving, p.Name)
				}
			}
			return len(serving) == want, strings.Join(seen, "; ")
		})
	}
	// The held and the evicted pods are left as they were.
	for _, name := range []string{"cs-lifecycle-ndzn4", "cs-evicted-hzfxs"} {
		p, err := cs.CoreV1().Pods(Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil || p.UID != objs.podUIDs[name] || p.Spec.Containers[0].Image == image {
			t.Errorf("pod %s: %v; want it left alone", name, err)
		}
	}
}
