package imagepulljob

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

var t0 = time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)

func job(par intstr.IntOrString, cp v1beta1.ImagePullJobCompletionPolicy) *v1beta1.ImagePullJob {
	return &v1beta1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "u1"},
		Spec: v1beta1.ImagePullJobSpec{Image: "127.0.0.1:5000/app:v2",
			ImagePullJobTemplate: v1beta1.ImagePullJobTemplate{Parallelism: &par, CompletionPolicy: cp}}}
}

func task(node string, owned bool, phase v1beta1.NodeImagePullPhase) NodeTask {
	t := NodeTask{Node: node, Owned: owned}
	if phase != "" {
		t.Status = &v1beta1.NodeImageTagStatus{Phase: phase}
	}
	return t
}

func TestSplitImage(t *testing.T) {
	for ref, want := range map[string][2]string{
		"nginx": {"nginx", "latest"}, "127.0.0.1:5000/app:v2": {"127.0.0.1:5000/app", "v2"},
		"127.0.0.1:5000/app": {"127.0.0.1:5000/app", "latest"}, "a/b/c:1.0": {"a/b/c", "1.0"},
	} {
		if n, tag := SplitImage(ref); n != want[0] || tag != want[1] {
			t.Errorf("SplitImage(%q) = %q, %q; want %v", ref, n, tag, want)
		}
	}
}

func TestPlanStartsUpToParallelism(t *testing.T) {
	j := job(intstr.FromInt32(2), v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways})
	nodes := []NodeTask{task("n3", false, ""), task("n1", true, v1beta1.NodeImagePullPulling), task("n2", false, ""), task("n4", true, v1beta1.NodeImagePullSucceeded)}
	p := PlanJob(j, nodes, t0)
	if !slices.Equal(p.Start, []string{"n2"}) {
		t.Errorf("start %v, want [n2] (one slot left beside n1)", p.Start)
	}
	if s := p.Status; s.Desired != 4 || s.Active != 2 || s.Succeeded != 1 || s.CompletionTime != nil || s.StartTime == nil {
		t.Errorf("status %+v", s)
	}
	if p0 := PlanJob(job(intstr.FromInt32(0), j.Spec.CompletionPolicy), nodes, t0); len(p0.Start) != 0 {
		t.Errorf("parallelism 0 started %v", p0.Start)
	}
	if pc := PlanJob(job(intstr.FromString("50%"), j.Spec.CompletionPolicy), nodes, t0); len(pc.Start) != 1 {
		t.Errorf("parallelism 50%% of 4 with one active started %v, want one", pc.Start)
	}
}

func TestPlanCompletesAndExpires(t *testing.T) {
	j := job(intstr.FromInt32(5), v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways, TTLSecondsAfterFinished: ptr.To[int32](60)})
	nodes := []NodeTask{task("a", true, v1beta1.NodeImagePullSucceeded), task("b", true, v1beta1.NodeImagePullFailed)}
	p := PlanJob(j, nodes, t0)
	if p.Status.CompletionTime == nil || p.Status.Failed != 1 || !slices.Equal(p.Status.FailedNodes, []string{"b"}) || p.RequeueAfter != time.Minute {
		t.Fatalf("plan %+v", p)
	}
	j.Status = p.Status
	if again := PlanJob(j, []NodeTask{task("a", true, v1beta1.NodeImagePullSucceeded)}, t0.Add(59*time.Second)); again.Delete || again.Status.Failed != 1 {
		t.Errorf("an ended job's status changed or it was deleted early: %+v", again)
	}
	if late := PlanJob(j, nodes, t0.Add(time.Minute)); !late.Delete {
		t.Error("the job was not deleted after its TTL")
	}
}

func TestPlanActiveDeadlineReleasesUnfinished(t *testing.T) {
	j := job(intstr.FromInt32(1), v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways, ActiveDeadlineSeconds: ptr.To[int64](30)})
	start := metav1.NewTime(t0)
	j.Status.StartTime = &start
	nodes := []NodeTask{task("a", true, v1beta1.NodeImagePullPulling), task("b", false, "")}
	if p := PlanJob(j, nodes, t0.Add(10*time.Second)); p.RequeueAfter != 20*time.Second || p.Status.CompletionTime != nil {
		t.Errorf("before the deadline: %+v", p)
	}
	p := PlanJob(j, nodes, t0.Add(30*time.Second))
	if p.Status.CompletionTime == nil || !slices.Equal(p.Release, []string{"a"}) || len(p.Start) != 0 {
		t.Errorf("at the deadline: %+v", p)
	}
}

func TestPlanNeverKeepsGoing(t *testing.T) {
	j := job(intstr.FromInt32(5), v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionNever})
	p := PlanJob(j, []NodeTask{task("a", true, v1beta1.NodeImagePullSucceeded), task("new", false, "")}, t0)
	if p.Status.CompletionTime != nil || !slices.Equal(p.Start, []string{"new"}) {
		t.Errorf("Never: %+v", p)
	}
}

func TestAddJobAndRemoveOwners(t *testing.T) {
	j := job(intstr.FromInt32(1), v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways})
	j.Spec.ImagePullPolicy = v1beta1.ImagePullJobPullIfNotPresent
	ni := &v1beta1.NodeImage{}
	secret := []v1beta1.NodeImageReferenceObject{{Namespace: "kruise-daemon-config", Name: "ns.reg"}}
	if !AddJob(ni, j, secret, t0) || AddJob(ni, j, secret, t0) {
		t.Fatal("AddJob: want a change the first time only")
	}
	img := ni.Spec.Images["127.0.0.1:5000/app"]
	if len(img.Tags) != 1 || img.Tags[0].Version != 1 || len(img.PullSecrets) != 1 || len(img.Tags[0].OwnerReferences) != 1 {
		t.Fatalf("image spec %+v", img)
	}
	// A second job shares a succeeded pull; after a failure it pulls again.
	ni.Status.ImageStatuses = map[string]v1beta1.NodeImageImageStatus{"127.0.0.1:5000/app": {Tags: []v1beta1.NodeImageTagStatus{{Tag: "v2", Version: 1, Phase: v1beta1.NodeImagePullFailed}}}}
	j2 := j.DeepCopy()
	j2.Name, j2.UID = "j2", "u2"
	AddJob(ni, j2, nil, t0)
	if tag := ni.Spec.Images["127.0.0.1:5000/app"].Tags[0]; tag.Version != 2 || len(tag.OwnerReferences) != 2 {
		t.Errorf("after a failure the tag is %+v, want version 2 and two owners", tag)
	}
	RemoveOwners(ni, func(r corev1.ObjectReference) bool { return r.Name == "j" })
	if tag := ni.Spec.Images["127.0.0.1:5000/app"].Tags[0]; len(tag.OwnerReferences) != 1 {
		t.Errorf("owners %v after removing j", tag.OwnerReferences)
	}
	RemoveOwners(ni, func(r corev1.ObjectReference) bool { return r.Name == "j2" })
	if len(ni.Spec.Images) != 0 {
		t.Errorf("images %v remain without owners", ni.Spec.Images)
	}
}

func TestPlanFullNodeImageFailsThatNode(t *testing.T) {
	j := job(intstr.FromInt32(5), v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways})
	full := task("n1", false, "")
	full.Full = true
	p := PlanJob(j, []NodeTask{full, task("n2", true, v1beta1.NodeImagePullSucceeded)}, t0)
	if len(p.Start) != 0 {
		t.Errorf("started %v on a full NodeImage", p.Start)
	}
	if s := p.Status; s.Failed != 1 || !slices.Equal(s.FailedNodes, []string{"n1"}) || s.CompletionTime == nil ||
		!strings.Contains(s.Message, "job finished") {
		t.Errorf("status %+v: want n1 failed and the job finished", s)
	}
	if !strings.Contains(p.Status.Message, "NodeImage of n1 already lists 256 images") {
		t.Errorf("message %q does not say why n1 failed", p.Status.Message)
	}
	owned := full
	owned.Owned, owned.Status = true, &v1beta1.NodeImageTagStatus{Phase: v1beta1.NodeImagePullPulling}
	if p := PlanJob(j, []NodeTask{owned}, t0); p.Status.Active != 1 || p.Status.Failed != 0 {
		t.Errorf("a job already in a full NodeImage: status %+v, want it pulling", p.Status)
	}
}

func TestBlockStartKeepsNodesWaiting(t *testing.T) {
	j := job(intstr.FromInt32(2), v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways})
	p := PlanJob(j, []NodeTask{task("n1", false, ""), task("n2", false, ""), task("n3", true, v1beta1.NodeImagePullPulling)}, t0)
	if len(p.Start) != 1 || p.Status.Active != 2 {
		t.Fatalf("plan %+v", p)
	}
	b := BlockStart(p, "pull secret ns/reg has type \"Opaque\"")
	if len(b.Start) != 0 || b.Status.Active != 1 || b.Status.CompletionTime != nil ||
		!strings.HasPrefix(b.Status.Message, "pulls not started: pull secret ns/reg") {
		t.Errorf("blocked plan %+v", b)
	}
	if p.Status.Active != 2 {
		t.Errorf("BlockStart changed its input")
	}
}

// Pull secret references as OpenKruise v1.9 writes and cleans them: Kruise's shared copies are
// "batch" (an earlier Kruise's reference to the same copy takes the mode); references without it
// (OpenKruise's per-job secrets) are dropped once gone, "batch" ones only with their image's entry.
func TestPullSecretModes(t *testing.T) {
	j := job(intstr.FromInt32(1), v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways})
	batch := v1beta1.NodeImageReferenceObject{Namespace: appspub.KruiseDaemonConfigNamespace, Name: "ns.reg", Mode: v1beta1.NodeImageReferenceObjectModeBatch}
	unmoded := batch
	unmoded.Mode = ""
	legacy := v1beta1.NodeImageReferenceObject{Namespace: appspub.KruiseDaemonConfigNamespace, Name: "reg-x7k2p"}
	ni := &v1beta1.NodeImage{Spec: v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{
		"127.0.0.1:5000/app": {PullSecrets: []v1beta1.NodeImageReferenceObject{legacy, unmoded}},
		"127.0.0.1:5000/db":  {PullSecrets: []v1beta1.NodeImageReferenceObject{legacy}, Tags: []v1beta1.NodeImageTagSpec{{Tag: "v1"}}}}}}
	if got := LegacyPullSecrets(ni); !slices.Equal(got, []v1beta1.NodeImageReferenceObject{unmoded, legacy}) {
		t.Errorf("LegacyPullSecrets = %v, want the unmoded copy and the per-job secret, sorted and once each", got)
	}
	if !AddJob(ni, j, []v1beta1.NodeImageReferenceObject{batch}, t0) {
		t.Fatal("AddJob: want a change")
	}
	if got := ni.Spec.Images["127.0.0.1:5000/app"].PullSecrets; !slices.Equal(got, []v1beta1.NodeImageReferenceObject{legacy, batch}) {
		t.Errorf("pull secrets after AddJob %v, want the copy's reference moved to batch in place", got)
	}
	if got := LegacyPullSecrets(ni); !slices.Equal(got, []v1beta1.NodeImageReferenceObject{legacy}) {
		t.Errorf("LegacyPullSecrets = %v, want only the per-job secret", got)
	}
	if DropPullSecrets(ni, []v1beta1.NodeImageReferenceObject{batch}) {
		t.Error("DropPullSecrets dropped a batch reference")
	}
	if !DropPullSecrets(ni, []v1beta1.NodeImageReferenceObject{legacy}) || DropPullSecrets(ni, []v1beta1.NodeImageReferenceObject{legacy}) {
		t.Error("DropPullSecrets: want a change the first time only")
	}
	if app, db := ni.Spec.Images["127.0.0.1:5000/app"], ni.Spec.Images["127.0.0.1:5000/db"]; !slices.Equal(app.PullSecrets, []v1beta1.NodeImageReferenceObject{batch}) ||
		db.PullSecrets != nil || len(db.Tags) != 1 {
		t.Errorf("after dropping the per-job secret: app %v, db %+v", app.PullSecrets, db)
	}
	// The batch reference goes with its image's entry.
	RemoveOwners(ni, func(corev1.ObjectReference) bool { return true })
	if _, ok := ni.Spec.Images["127.0.0.1:5000/app"]; ok {
		t.Errorf("the image without owners stays: %+v", ni.Spec.Images)
	}
}
