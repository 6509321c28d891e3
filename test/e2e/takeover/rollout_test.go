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
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/test/harness"
)

// After the takeover each Advanced StatefulSet rolls to a new image in place, through its
// partition: first the ordinals above it, then, with partition 0, the rest; every pod keeps its UID
// and its claims.
func rollsStatefulSetsForwardInPlace(t *testing.T) {
	ctx := context.Background()
	const image = "example.com/app:v3"
	for _, set := range fixture.StatefulSets {
		replicas := int(*set.Spec.Replicas)
		part := int(*set.Spec.UpdateStrategy.RollingUpdate.Partition)
		patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":%q}]`, image)
		setPatch(t, set.Name, patch)
		waitImages(t, set.Name, image, replicas-part)
		setPatch(t, set.Name, `[{"op":"replace","path":"/spec/updateStrategy/rollingUpdate/partition","value":0}]`)
		waitImages(t, set.Name, image, replicas)
	}
	for _, want := range fixture.Claims {
		got, err := cs.CoreV1().PersistentVolumeClaims(Namespace).Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil || got.DeletionTimestamp != nil {
			t.Errorf("claim %s: %v (deleting %v)", want.Name, err, got.DeletionTimestamp)
		}
	}
}

// After the takeover each Advanced DaemonSet's partition is lowered to 0: the nodes OpenKruise
// kept old are updated in place, every pod keeping its UID.
func rollsDaemonSetsForwardInPlace(t *testing.T) {
	for _, ds := range fixture.DaemonSets {
		image := ds.Spec.Template.Spec.Containers[0].Image
		obj := &appsv1beta1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: ds.Name}}
		patch := `[{"op":"replace","path":"/spec/updateStrategy/rollingUpdate/partition","value":0}]`
		if err := kc.Patch(context.Background(), obj, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
			t.Fatalf("DaemonSet %s: %v", ds.Name, err)
		}
		waitImages(t, ds.Name, image, int(ds.Status.DesiredNumberScheduled))
	}
}

// After the takeover each UnitedDeployment's template gets a new image: its subset CloneSets are
// rewritten with the new revision and update their pods in place, every pod keeping its UID.
func rollsUnitedDeploymentsForwardInPlace(t *testing.T) {
	const image = "example.com/app:v3"
	for _, ud := range fixture.UnitedDeployments {
		obj := &appsv1alpha1.UnitedDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: ud.Name}}
		patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/template/cloneSetTemplate/spec/template/spec/containers/0/image","value":%q}]`, image)
		if err := kc.Patch(context.Background(), obj, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
			t.Fatalf("UnitedDeployment %s: %v", ud.Name, err)
		}
		waitImages(t, ud.Name, image, int(*ud.Spec.Replicas))
	}
}

func setPatch(t *testing.T, name, patch string) {
	t.Helper()
	obj := &appsv1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name}}
	if err := kc.Patch(context.Background(), obj, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
		t.Fatalf("StatefulSet %s: %v", name, err)
	}
}

// waitImages waits until n pods of the workload labelled app=name run image in place: ready, the
// gate open, each the pod OpenKruise created (a Failed pod and one held in PreparingDelete are left
// out: they are left alone).
func waitImages(t *testing.T, name, image string, n int) {
	t.Helper()
	harness.Eventually(t, 90*time.Second, fmt.Sprintf("%d pods of %s on %s in place", n, name, image), func() (bool, string) {
		pods, err := cs.CoreV1().Pods(Namespace).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + name})
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
		return len(serving) == n, strings.Join(seen, "; ")
	})
}

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
		waitImages(t, c.Name, image, int(*c.Spec.Replicas))
	}
	// The held and the evicted pods are left as they were.
	for _, name := range []string{"cs-lifecycle-ndzn4", "cs-evicted-hzfxs"} {
		p, err := cs.CoreV1().Pods(Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil || p.UID != objs.podUIDs[name] || p.Spec.Containers[0].Image == image {
			t.Errorf("pod %s: %v; want it left alone", name, err)
		}
	}
}
