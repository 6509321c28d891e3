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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/test/compat"
	"github.com/kruise-ng/kruise/test/harness"
)

// sidecarRollout is the audit log's size when TestSidecarSetTakeover changed the SidecarSet's
// image: kruise-manager's writes to the sidecar targets' pods from then on are the upgrade's
// (0: no upgrade yet, every write to them is forbidden).
var sidecarRollout int64

// sidecarAnnotations are the pod annotations OpenKruise's SidecarSet injection and upgrade wrote.
var sidecarAnnotations = []string{sidecarrules.HashAnnotation, sidecarrules.HashWithoutImageAnnotation,
	sidecarrules.InjectedListAnnotation, sidecarrules.InplaceUpdateStateAnnotation}

// sidecarTargetPod reports whether pod name belongs to a CloneSet into whose pods a SidecarSet of
// the fixture injected.
func sidecarTargetPod(name string) bool {
	return slices.ContainsFunc(compat.TakeoverSidecarTargets, func(c string) bool { return strings.HasPrefix(name, c+"-") })
}

// isKruise matches kruise-manager's user in the audit log.
func isKruise(u string) bool { return u == sandbox.KruiseManagerUser }

// upgradeStart is the index in writes (kruise-manager's since it started) of the first write made
// after sidecarRollout: len(writes) while there is no upgrade.
func upgradeStart(t *testing.T, writes []harness.AuditWrite) int {
	t.Helper()
	if sidecarRollout == 0 {
		return len(writes)
	}
	later, err := harness.AuditWrites(sb.AuditLog, sidecarRollout, isKruise)
	if err != nil {
		t.Fatal(err)
	}
	return len(writes) - len(later)
}

// TestSidecarSetTakeover runs the SidecarSet's takeover story in order: Kruise leaves the pods
// OpenKruise injected into and upgraded alone and reports the SidecarSet's status as OpenKruise
// did, then upgrades the sidecars in place to a new image.
func TestSidecarSetTakeover(t *testing.T) {
	if len(fixture.SidecarSets) != 1 || len(fixture.SidecarTargets) != 1 {
		t.Fatalf("fixture: SidecarSets %d, targets %d; want sc-log and sc-target", len(fixture.SidecarSets), len(fixture.SidecarTargets))
	}
	for _, step := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"touches nothing", sidecarSetTouchesNothing},
		{"upgrades in place", sidecarSetUpgradesInPlace},
	} {
		if !t.Run(step.name, step.run) {
			return
		}
	}
}

// targetPods are the fixture's pods of the sidecar targets.
func targetPods() []corev1.Pod {
	var out []corev1.Pod
	for _, p := range fixture.Pods {
		if sidecarTargetPod(p.Name) {
			out = append(out, p)
		}
	}
	return out
}

func sidecarSet(t *testing.T, name string) *appsv1beta1.SidecarSet {
	t.Helper()
	s := &appsv1beta1.SidecarSet{}
	if err := kc.Get(context.Background(), client.ObjectKey{Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// For a minute after it starts (the window TestTakeover watches), Kruise writes nothing to the
// pods OpenKruise injected sc-log into and upgraded to log:v2 — not their spec, containers, hash
// annotations or status — and reports sc-log's status as OpenKruise did, at the latest revision
// OpenKruise named, which it writes into its own namespace.
func sidecarSetTouchesNothing(t *testing.T) {
	ctx := context.Background()
	want := fixture.SidecarSets[0]
	pods := targetPods()
	if len(pods) != 2 {
		t.Fatalf("fixture: %d pods of sc-target, want 2", len(pods))
	}
	var statusWrites int
	for {
		writes, err := harness.AuditWrites(sb.AuditLog, kruiseStart, isKruise)
		if err != nil {
			t.Fatal(err)
		}
		var bad []string
		statusWrites = 0
		for _, w := range writes[:upgradeStart(t, writes)] {
			if !w.OK() {
				continue
			}
			if w.Namespace == Namespace && w.Resource == "pods" && sidecarTargetPod(w.Name) {
				bad = append(bad, fmt.Sprintf("%s %s/%s %s", w.Verb, w.Resource, w.Subresource, w.Name))
			}
			if w.Resource == "sidecarsets" && w.Subresource == "status" {
				statusWrites++
			}
		}
		if len(bad) > 0 {
			t.Fatalf("kruise-manager wrote to the pods OpenKruise injected into:\n%s", strings.Join(bad, "\n"))
		}
		if time.Since(startedAt) >= watched {
			break
		}
		time.Sleep(time.Second)
	}
	t.Logf("%s after kruise-manager started: no write of it to a pod of sc-target; %d writes of sc-log's status",
		time.Since(startedAt).Round(time.Second), statusWrites)

	for _, wantPod := range pods {
		p, err := cs.CoreV1().Pods(Namespace).Get(ctx, wantPod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		was := objs.pods[wantPod.Name]
		if p.UID != was.UID || p.Generation != was.Generation || p.ResourceVersion != was.ResourceVersion {
			t.Errorf("pod %s: uid %s generation %d resourceVersion %s; loaded %s %d %s", p.Name, p.UID, p.Generation, p.ResourceVersion,
				was.UID, was.Generation, was.ResourceVersion)
		}
		if !equality.Semantic.DeepEqual(p.Spec.Containers, wantPod.Spec.Containers) {
			t.Errorf("pod %s: containers changed:\n%+v\nOpenKruise's\n%+v", p.Name, p.Spec.Containers, wantPod.Spec.Containers)
		}
		for _, k := range sidecarAnnotations {
			if p.Annotations[k] != wantPod.Annotations[k] {
				t.Errorf("pod %s: annotation %s = %q, OpenKruise's %q", p.Name, k, p.Annotations[k], wantPod.Annotations[k])
			}
		}
		if got, w := upgradable(p), upgradable(&wantPod); !equality.Semantic.DeepEqual(got, w) {
			t.Errorf("pod %s: condition %+v, OpenKruise's %+v", p.Name, got, w)
		}
	}

	got := sidecarSet(t, want.Name)
	for _, k := range []string{sidecarrules.HashAnnotation, sidecarrules.HashWithoutImageAnnotation} {
		if got.Annotations[k] != want.Annotations[k] {
			t.Errorf("SidecarSet %s: annotation %s = %q, OpenKruise's %q", got.Name, k, got.Annotations[k], want.Annotations[k])
		}
	}
	wantStatus := want.Status
	wantStatus.ObservedGeneration = got.Generation
	gotStatus := got.Status
	if gotStatus.NotInjectedPods != 0 {
		t.Errorf("SidecarSet %s: %d pods it selects counted without its sidecars, want 0", got.Name, gotStatus.NotInjectedPods)
	}
	gotStatus.Conditions, gotStatus.NotInjectedPods = nil, 0 // Kruise's own fields (test/compat: Additions)
	if !equality.Semantic.DeepEqual(gotStatus, wantStatus) {
		t.Errorf("SidecarSet %s: status\n%s\nOpenKruise's\n%s", got.Name, sidecarSetStatus(gotStatus), sidecarSetStatus(wantStatus))
	}
	checkSidecarRevision(t, got, want.Status.LatestRevision)
}

// upgradable is pod's SidecarSetUpgradable condition (nil: none).
func upgradable(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == sidecarrules.UpgradableCondition {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func sidecarSetStatus(s appsv1beta1.SidecarSetStatus) string {
	cc := "nil"
	if s.CollisionCount != nil {
		cc = fmt.Sprint(*s.CollisionCount)
	}
	return fmt.Sprintf("observedGeneration=%d matched=%d updated=%d ready=%d updatedReady=%d latestRevision=%s collisionCount=%s",
		s.ObservedGeneration, s.MatchedPods, s.UpdatedPods, s.ReadyPods, s.UpdatedReadyPods, s.LatestRevision, cc)
}

// checkSidecarRevision checks that revision name of set is in the manager's namespace, labelled
// with set's name and owned by set.
func checkSidecarRevision(t *testing.T, set *appsv1beta1.SidecarSet, name string) {
	t.Helper()
	rev, err := cs.AppsV1().ControllerRevisions(sandbox.KruiseNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Errorf("SidecarSet %s: revision %s/%s: %v", set.Name, sandbox.KruiseNamespace, name, err)
		return
	}
	if ref := metav1.GetControllerOf(rev); ref == nil || ref.UID != set.UID || rev.Labels[sidecarrules.RevisionOwnerLabel] != set.Name {
		t.Errorf("SidecarSet %s: revision %s owned by %v, labels %v", set.Name, name, ref, rev.Labels)
	}
}

// After the takeover a new sidecar image rolls into sc-target's pods in place: each keeps its UID,
// its app container does not restart, its sidecar restarts once on the new image, and its hash
// entry of sc-log is the SidecarSet's new hash at its new latest revision.
func sidecarSetUpgradesInPlace(t *testing.T) {
	ctx := context.Background()
	const image = "example.com/log:v3"
	want := fixture.SidecarSets[0]
	before := map[string]map[string]int32{}
	for _, wantPod := range targetPods() {
		p, err := cs.CoreV1().Pods(Namespace).Get(ctx, wantPod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before[p.Name] = restarts(p)
	}
	sidecarRollout = harness.AuditSize(sb.AuditLog)
	obj := &appsv1beta1.SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: want.Name}}
	patch := fmt.Sprintf(`[{"op":"test","path":"/spec/containers/0/name","value":"log"},`+
		`{"op":"replace","path":"/spec/containers/0/image","value":%q}]`, image)
	if err := kc.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
		t.Fatalf("SidecarSet %s: %v", want.Name, err)
	}
	if obj.Annotations[sidecarrules.HashAnnotation] == want.Annotations[sidecarrules.HashAnnotation] {
		t.Fatalf("SidecarSet %s: hash annotation still %s after the image change", want.Name, want.Annotations[sidecarrules.HashAnnotation])
	}
	if obj.Annotations[sidecarrules.HashWithoutImageAnnotation] != want.Annotations[sidecarrules.HashWithoutImageAnnotation] {
		t.Errorf("SidecarSet %s: hash without image %s after an image change, was %s", want.Name,
			obj.Annotations[sidecarrules.HashWithoutImageAnnotation], want.Annotations[sidecarrules.HashWithoutImageAnnotation])
	}
	hash := obj.Annotations[sidecarrules.HashAnnotation]

	var set *appsv1beta1.SidecarSet
	harness.Eventually(t, 90*time.Second, "both pods of sc-target on "+image+" in place", func() (bool, string) {
		set = &appsv1beta1.SidecarSet{}
		if err := kc.Get(ctx, client.ObjectKey{Name: want.Name}, set); err != nil {
			return false, err.Error()
		}
		seen := []string{sidecarSetStatus(set.Status)}
		done := set.Status.ObservedGeneration == set.Generation && set.Status.MatchedPods == 2 && set.Status.UpdatedPods == 2 &&
			set.Status.ReadyPods == 2 && set.Status.UpdatedReadyPods == 2 && set.Status.LatestRevision != want.Status.LatestRevision
		for name, was := range before {
			p, err := cs.CoreV1().Pods(Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			specs, err := sidecarrules.PodUpgradeSpecs(p, sidecarrules.HashAnnotation)
			if err != nil {
				return false, err.Error()
			}
			entry := specs[want.Name]
			seen = append(seen, fmt.Sprintf("%s hash entry %s at %s", harness.DescribePod(p), entry.Hash, entry.ControllerRevision))
			if p.UID != objs.podUIDs[name] {
				return false, "pod " + name + " was recreated: " + strings.Join(seen, "; ")
			}
			now := restarts(p)
			done = done && sidecarImage(p, image) && harness.PodCondition(p, corev1.PodReady) == corev1.ConditionTrue &&
				now["log"] == was["log"]+1 && now["app"] == was["app"] &&
				entry.Hash == hash && entry.ControllerRevision == set.Status.LatestRevision
		}
		return done, strings.Join(seen, "; ")
	})
	if got := set.Annotations[sidecarrules.HashAnnotation]; got != hash {
		t.Errorf("SidecarSet %s: hash annotation %s after the rollout, %s after the patch", set.Name, got, hash)
	}
	checkSidecarRevision(t, set, set.Status.LatestRevision)
	for name, was := range before {
		p, err := cs.CoreV1().Pods(Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if now := restarts(p); now["app"] != was["app"] || now["log"] != was["log"]+1 {
			t.Errorf("pod %s: restarts %v, before %v; want the sidecar's alone up by one", name, now, was)
		}
		noImage, err := sidecarrules.PodUpgradeSpecs(p, sidecarrules.HashWithoutImageAnnotation)
		if err != nil {
			t.Fatal(err)
		}
		if h := noImage[want.Name].Hash; h != set.Annotations[sidecarrules.HashWithoutImageAnnotation] {
			t.Errorf("pod %s: hash without image %s, SidecarSet's %s", name, h, set.Annotations[sidecarrules.HashWithoutImageAnnotation])
		}
		if c := upgradable(p); c == nil || c.Status != corev1.ConditionTrue {
			t.Errorf("pod %s: %s %+v, want True", name, sidecarrules.UpgradableCondition, c)
		}
		if _, ok := p.Annotations[sidecarrules.InplaceUpdateStateAnnotation]; !ok {
			t.Errorf("pod %s: no %s", name, sidecarrules.InplaceUpdateStateAnnotation)
		}
	}
	// Kruise upgraded the pods with patches alone: no pod was created or deleted.
	writes, err := harness.AuditWrites(sb.AuditLog, sidecarRollout, isKruise)
	if err != nil {
		t.Fatal(err)
	}
	var patched []string
	for _, w := range writes {
		if w.Resource != "pods" || w.Namespace != Namespace || !w.OK() {
			continue
		}
		if w.Verb != "patch" || !sidecarTargetPod(w.Name) {
			t.Errorf("kruise-manager's %s of pods/%s %s during the sidecar upgrade", w.Verb, w.Subresource, w.Name)
		}
		patched = append(patched, strings.TrimSpace(w.Name+" "+w.Subresource))
	}
	// The audit log shows the upgrade's writes, as it would have shown a write in the first step.
	if len(patched) == 0 {
		t.Error("no write of kruise-manager to a pod of sc-target in the audit log during the upgrade")
	}
	t.Logf("sc-log at %s (hash %s); kruise-manager's pod patches: %s", set.Status.LatestRevision, hash, strings.Join(patched, ", "))
}

// restarts are the restart counts of pod's containers by name.
func restarts(p *corev1.Pod) map[string]int32 {
	out := map[string]int32{}
	for _, c := range p.Status.ContainerStatuses {
		out[c.Name] = c.RestartCount
	}
	return out
}

// sidecarImage reports whether pod's sidecar log asks for image and runs it, ready.
func sidecarImage(p *corev1.Pod, image string) bool {
	spec := slices.IndexFunc(p.Spec.Containers, func(c corev1.Container) bool { return c.Name == "log" })
	if spec < 0 || p.Spec.Containers[spec].Image != image {
		return false
	}
	return slices.ContainsFunc(p.Status.ContainerStatuses, func(c corev1.ContainerStatus) bool {
		return c.Name == "log" && c.Image == image && c.Ready && c.State.Running != nil
	})
}
