package takeover

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/test/harness"
)

// watched is how long Kruise runs on the taken-over objects before they are checked.
const watched = 60 * time.Second

// graceCloneSet is the CloneSet whose pods OpenKruise left in a deferred in-place update: the one
// whose pods Kruise may write to, to finish that update as OpenKruise would have.
const graceCloneSet = "cs-grace"

// forbiddenWrites are kruise-manager's writes since it started to pods, claims and revisions of
// the fixture, other than to cs-grace's pods and those of TestSidecarSetTakeover's upgrade (to the
// sidecar targets' pods after sidecarRollout).
func forbiddenWrites(t *testing.T) (bad []string, all int) {
	t.Helper()
	writes, err := harness.AuditWrites(sb.AuditLog, kruiseStart, isKruise)
	if err != nil {
		t.Fatal(err)
	}
	upgrade := upgradeStart(t, writes)
	for i, w := range writes {
		if w.Namespace != Namespace || !w.OK() {
			continue
		}
		all++
		if !slices.Contains([]string{"pods", "persistentvolumeclaims", "controllerrevisions"}, w.Resource) ||
			(w.Resource == "pods" && strings.HasPrefix(w.Name, graceCloneSet+"-")) ||
			(w.Resource == "pods" && i >= upgrade && sidecarTargetPod(w.Name)) {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s %s/%s %s", w.Verb, w.Resource, w.Subresource, w.Name))
	}
	return bad, all
}

// TestTakeover runs the takeover story in order: Kruise leaves the taken-over objects alone, then
// rolls each CloneSet forward in place, then lets CloneSets be deleted with their pods orphaned.
func TestTakeover(t *testing.T) {
	for _, step := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"touches nothing", touchesNothing},
		{"rolls forward in place", rollsForwardInPlace},
		{"rolls Advanced StatefulSets forward in place", rollsStatefulSetsForwardInPlace},
		{"rolls Advanced DaemonSets forward in place", rollsDaemonSetsForwardInPlace},
		{"rolls UnitedDeployments forward in place", rollsUnitedDeploymentsForwardInPlace},
		{"orphan delete", orphanDelete},
	} {
		if !t.Run(step.name, step.run) {
			return
		}
	}
}

// For a minute after it starts on objects OpenKruise v1.9.0 wrote, Kruise writes to no pod, claim
// or revision, but finishes the in-place update OpenKruise had deferred on cs-grace's first pod
// when its grace period ends; every CloneSet keeps the update revision OpenKruise recorded.
func touchesNothing(t *testing.T) {
	ctx := context.Background()
	first := "cs-grace-jxlnp"
	harness.Eventually(t, watched, "cs-grace's deferred update applied once its grace period ended", func() (bool, string) {
		p, err := cs.CoreV1().Pods(Namespace).Get(ctx, first, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, pending := p.Annotations[appspub.InPlaceUpdateGraceKey]
		done := p.UID == objs.podUIDs[first] && p.Spec.Containers[0].Image == "example.com/app:v2" && p.Labels["tier"] == "gold" &&
			!pending && harness.PodCondition(p, appspub.InPlaceUpdateReady) == corev1.ConditionTrue
		return done, fmt.Sprintf("%s labels=%v grace pending=%v", harness.DescribePod(p), p.Labels, pending)
	})
	for {
		bad, all := forbiddenWrites(t)
		if len(bad) > 0 {
			t.Fatalf("kruise-manager wrote to objects of the taken-over cluster:\n%s", strings.Join(bad, "\n"))
		}
		if time.Since(startedAt) >= watched {
			t.Logf("%s after kruise-manager started: %d writes of it in namespace %s (CloneSet status, events, cs-grace's pods), none to another pod, claim or revision",
				time.Since(startedAt).Round(time.Second), all, Namespace)
			break
		}
		time.Sleep(time.Second)
	}
	checkUnchanged(t)
}

// checkUnchanged checks the fixture's objects after the takeover: the same pods (cs-grace's
// aside) at the same revisions, the revisions and claims as loaded, each CloneSet's update
// revision as OpenKruise recorded it, the evicted pod left alone and not counted, the pod held in
// PreparingDelete still held.
func checkUnchanged(t *testing.T) {
	ctx := context.Background()
	for _, want := range fixture.Pods {
		p, err := cs.CoreV1().Pods(Namespace).Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil || p.UID != objs.podUIDs[want.Name] {
			t.Errorf("pod %s: %v (uid %v, loaded %s)", want.Name, err, p.UID, objs.podUIDs[want.Name])
			continue
		}
		if !strings.HasPrefix(want.Name, graceCloneSet+"-") && p.Labels["controller-revision-hash"] != want.Labels["controller-revision-hash"] {
			t.Errorf("pod %s: revision label %q, OpenKruise's %q", want.Name, p.Labels["controller-revision-hash"], want.Labels["controller-revision-hash"])
		}
	}
	for _, want := range fixture.Revisions {
		r, err := cs.AppsV1().ControllerRevisions(Namespace).Get(ctx, want.Name, metav1.GetOptions{})
		if wantData, _ := canonical(want.Data.Raw); err != nil || string(r.Data.Raw) != string(wantData) {
			t.Errorf("revision %s: %v, data changed", want.Name, err)
		}
	}
	revs, err := cs.AppsV1().ControllerRevisions(Namespace).List(ctx, metav1.ListOptions{})
	if err != nil || len(revs.Items) != len(fixture.Revisions) {
		t.Errorf("revisions %v (%v), want only OpenKruise's %v", revisionNames(revs.Items), err, revisionNames(fixture.Revisions))
	}
	for _, want := range fixture.Claims {
		if _, err := cs.CoreV1().PersistentVolumeClaims(Namespace).Get(ctx, want.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("claim %s: %v", want.Name, err)
		}
	}
	for _, want := range fixture.CloneSets {
		got := cloneSet(t, want.Name)
		if got.Status.UpdateRevision != want.Status.UpdateRevision {
			t.Errorf("CloneSet %s: update revision %s, OpenKruise's %s", want.Name, got.Status.UpdateRevision, want.Status.UpdateRevision)
		}
	}
	for _, want := range fixture.StatefulSets {
		got := &appsv1beta1.StatefulSet{}
		if err := kc.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: want.Name}, got); err != nil {
			t.Fatal(err)
		}
		// The same counts and revisions as OpenKruise wrote (observedGeneration is the new object's),
		// and Kruise's Progressing condition (an extension): its partition is rolled out.
		want.Status.ObservedGeneration = got.Status.ObservedGeneration
		var progressing []string
		got.Status.Conditions = slices.DeleteFunc(got.Status.Conditions, func(c appsv1beta1.StatefulSetCondition) bool {
			if c.Type == "Progressing" {
				progressing = append(progressing, c.Reason)
			}
			return c.Type == "Progressing"
		})
		if len(got.Status.Conditions) == 0 {
			got.Status.Conditions = want.Status.Conditions
		}
		if !slices.Equal(progressing, []string{"ProgressPartitionAvailable"}) {
			t.Errorf("StatefulSet %s: Progressing %v, want ProgressPartitionAvailable", want.Name, progressing)
		}
		if !equality.Semantic.DeepEqual(got.Status, want.Status) {
			var claims []string
			for _, c := range fixture.Claims {
				if pvc, err := cs.CoreV1().PersistentVolumeClaims(Namespace).Get(ctx, c.Name, metav1.GetOptions{}); err == nil {
					claims = append(claims, fmt.Sprintf("%s %s %v", pvc.Name, pvc.Status.Phase, pvc.Status.Capacity))
				}
			}
			t.Errorf("StatefulSet %s: status\n%+v\nOpenKruise's\n%+v\nclaims: %v", want.Name, got.Status, want.Status, claims)
		}
	}
	for _, want := range fixture.DaemonSets {
		got := &appsv1beta1.DaemonSet{}
		if err := kc.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: want.Name}, got); err != nil {
			t.Fatal(err)
		}
		want.Status.ObservedGeneration = got.Status.ObservedGeneration // the new object's
		if !equality.Semantic.DeepEqual(got.Status, want.Status) {
			t.Errorf("DaemonSet %s: status\n%+v\nOpenKruise's\n%+v", want.Name, got.Status, want.Status)
		}
	}
	for _, want := range fixture.UnitedDeployments {
		got := &appsv1alpha1.UnitedDeployment{}
		if err := kc.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: want.Name}, got); err != nil {
			t.Fatal(err)
		}
		want.Status.ObservedGeneration = got.Status.ObservedGeneration // the new object's
		if !equality.Semantic.DeepEqual(got.Status, want.Status) {
			t.Errorf("UnitedDeployment %s: status\n%+v\nOpenKruise's\n%+v", want.Name, got.Status, want.Status)
		}
	}
	for _, want := range fixture.SubsetCloneSets {
		// Loaded at generation 1: a spec write by Kruise would have raised it.
		if got := cloneSet(t, want.Name); got.Generation != 1 || *got.Spec.Replicas != *want.Spec.Replicas {
			t.Errorf("subset CloneSet %s: generation %d, replicas %d; want 1 and OpenKruise's %d", want.Name, got.Generation, *got.Spec.Replicas, *want.Spec.Replicas)
		}
	}
	if got := cloneSet(t, "cs-evicted"); got.Status.Replicas != 3 || got.Status.ReadyReplicas != 3 {
		t.Errorf("cs-evicted counts replicas %d, ready %d; want 3 and 3 (its Failed pod is no replica)", got.Status.Replicas, got.Status.ReadyReplicas)
	}
	held, err := cs.CoreV1().Pods(Namespace).Get(ctx, "cs-lifecycle-ndzn4", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cond := harness.PodCondition(held, appspub.KruisePodReadyConditionType)
	if held.Labels[appspub.LifecycleStateKey] != string(appspub.LifecycleStatePreparingDelete) || cond != corev1.ConditionFalse {
		t.Errorf("the pod held in PreparingDelete was released: state %s, KruisePodReady %s", held.Labels[appspub.LifecycleStateKey], cond)
	}
}
