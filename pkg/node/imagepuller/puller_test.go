package imagepuller

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func TestRegistry(t *testing.T) {
	for ref, want := range map[string]string{
		"nginx": "docker.io", "library/nginx": "docker.io", "127.0.0.1:5000/app": "127.0.0.1:5000",
		"localhost/app": "localhost", "ghcr.io/kruise/app": "ghcr.io",
	} {
		if got := Registry(ref); got != want {
			t.Errorf("Registry(%q) = %q, want %q", ref, got, want)
		}
	}
}

func TestCredentials(t *testing.T) {
	auth := base64.StdEncoding.EncodeToString([]byte("bob:s3cret"))
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "reg"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{
			"https://index.docker.io/v1/":{"username":"hub","password":"p"},
			"127.0.0.1:5000":{"auth":"` + auth + `"},
			"http://127.0.0.1:5000/v2/":{"username":"other","password":"q"}}}`)}}
	got, err := Credentials(s, "127.0.0.1:5000")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Username != "bob" || got[0].Password != "s3cret" || got[1].Username != "other" {
		t.Errorf("credentials for 127.0.0.1:5000 = %v", got)
	}
	if hub, _ := Credentials(s, "docker.io"); len(hub) != 1 || hub[0].Username != "hub" {
		t.Errorf("credentials for docker.io = %v", hub)
	}
	if none, _ := Credentials(s, "ghcr.io"); len(none) != 0 {
		t.Errorf("credentials for ghcr.io = %v, want none", none)
	}
	s.Type = corev1.SecretTypeOpaque
	if _, err := Credentials(s, "docker.io"); err == nil || !strings.Contains(err.Error(), "ns/reg") {
		t.Errorf("an Opaque secret gave %v, want an error naming it", err)
	}
	s.Type, s.Data = corev1.SecretTypeDockerConfigJson, map[string][]byte{corev1.DockerConfigJsonKey: []byte("{")}
	if _, err := Credentials(s, "docker.io"); err == nil {
		t.Error("a malformed docker config gave no error")
	}
}

// fakeImages is a CRI image service whose pulls fail the first fails times (or block when block
// is set, or panic for image panicOn) and which has the images in present.
type fakeImages struct {
	mu      sync.Mutex
	fails   int
	block   bool
	panicOn string
	present map[string]string
	pulls   []*runtimeapi.AuthConfig
}

func (f *fakeImages) ImageStatus(_ context.Context, s *runtimeapi.ImageSpec, _ bool) (*runtimeapi.ImageStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id, ok := f.present[s.Image]; ok {
		return &runtimeapi.ImageStatusResponse{Image: &runtimeapi.Image{Id: id}}, nil
	}
	return &runtimeapi.ImageStatusResponse{}, nil
}

func (f *fakeImages) PullImage(ctx context.Context, s *runtimeapi.ImageSpec, a *runtimeapi.AuthConfig, _ *runtimeapi.PodSandboxConfig) (string, error) {
	f.mu.Lock()
	f.pulls = append(f.pulls, a)
	block, fail := f.block, f.fails > 0
	if fail {
		f.fails--
	}
	f.mu.Unlock()
	if s.Image == f.panicOn {
		panic("a bug pulling " + s.Image)
	}
	if block {
		<-ctx.Done()
		return "", ctx.Err()
	}
	if fail {
		return "", errors.New("registry said no")
	}
	return "sha256:" + s.Image, nil
}

func runJob(t *testing.T, f *fakeImages, policy v1beta1.NodeImageTagPullPolicy, always bool) []state {
	t.Helper()
	defer func(m time.Duration) { MaxBackoff = m }(MaxBackoff)
	MaxBackoff = 5 * time.Millisecond
	var states []state
	j := &job{Ref: "r/app:v2", Policy: policy, Always: always, Initial: state{Version: 7},
		Auths:   func(context.Context) ([]*runtimeapi.AuthConfig, error) { return nil, nil },
		Acquire: func(context.Context) (func(), error) { return func() {}, nil },
		Report:  func(s state) { states = append(states, s) }}
	j.run(context.Background(), f)
	return states
}

func TestJobRetriesThenSucceeds(t *testing.T) {
	f := &fakeImages{fails: 2}
	states := runJob(t, f, v1beta1.NodeImageTagPullPolicy{BackoffLimit: ptr.To[int32](2)}, false)
	last := states[len(states)-1]
	if last.Phase != v1beta1.NodeImagePullSucceeded || last.ImageID != "sha256:r/app:v2" || last.Progress != 100 || last.Version != 7 {
		t.Fatalf("final state %+v", last)
	}
	if len(f.pulls) != 3 || !strings.Contains(last.Message, "3 attempts") {
		t.Errorf("%d pulls, message %q; want 3 and the attempts named", len(f.pulls), last.Message)
	}
	if states[0].Phase != v1beta1.NodeImagePullWaiting || states[1].Phase != v1beta1.NodeImagePullPulling {
		t.Errorf("states began %v, %v; want Waiting, Pulling", states[0].Phase, states[1].Phase)
	}
}

func TestJobGivesUpAtBackoffLimit(t *testing.T) {
	f := &fakeImages{fails: 10}
	states := runJob(t, f, v1beta1.NodeImageTagPullPolicy{BackoffLimit: ptr.To[int32](1)}, false)
	last := states[len(states)-1]
	if last.Phase != v1beta1.NodeImagePullFailed || len(f.pulls) != 2 || !strings.Contains(last.Message, "registry said no") {
		t.Errorf("final state %+v after %d pulls; want Failed after 2 with the runtime's error", last, len(f.pulls))
	}
}

func TestJobTimesOut(t *testing.T) {
	f := &fakeImages{block: true}
	t0 := time.Now()
	states := runJob(t, f, v1beta1.NodeImageTagPullPolicy{TimeoutSeconds: ptr.To[int32](1), BackoffLimit: ptr.To[int32](0)}, false)
	last := states[len(states)-1]
	if last.Phase != v1beta1.NodeImagePullFailed || !strings.Contains(last.Message, "timed out after 1s") {
		t.Errorf("final state %+v, want Failed naming the timeout", last)
	}
	if d := time.Since(t0); d < time.Second || d > 3*time.Second {
		t.Errorf("the attempt took %s, want about 1s", d)
	}
}

func TestJobActiveDeadline(t *testing.T) {
	f := &fakeImages{block: true}
	states := runJob(t, f, v1beta1.NodeImageTagPullPolicy{TimeoutSeconds: ptr.To[int32](30), BackoffLimit: ptr.To[int32](5),
		ActiveDeadlineSeconds: ptr.To[int64](1)}, false)
	last := states[len(states)-1]
	if last.Phase != v1beta1.NodeImagePullFailed || len(f.pulls) != 1 {
		t.Errorf("final state %+v after %d pulls; want Failed after 1 (the deadline ends the task)", last, len(f.pulls))
	}
}

func TestJobIfNotPresentSkipsThePull(t *testing.T) {
	f := &fakeImages{present: map[string]string{"r/app:v2": "sha256:here"}}
	last := runJob(t, f, v1beta1.NodeImageTagPullPolicy{}, false)
	if s := last[len(last)-1]; s.Phase != v1beta1.NodeImagePullSucceeded || s.ImageID != "sha256:here" || len(f.pulls) != 0 {
		t.Errorf("IfNotPresent: %+v after %d pulls", s, len(f.pulls))
	}
	runJob(t, f, v1beta1.NodeImageTagPullPolicy{}, true)
	if len(f.pulls) != 1 {
		t.Errorf("Always: %d pulls, want 1", len(f.pulls))
	}
}

func TestStatus(t *testing.T) {
	now := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	tasks := map[Key]state{
		{"r/app", "v2"}: {Phase: v1beta1.NodeImagePullSucceeded, Version: 1, Start: now, Done: now, ImageID: "sha256:a", Progress: 100},
		{"r/app", "v1"}: {Phase: v1beta1.NodeImagePullFailed, Version: 2, Message: "no"},
	}
	st := Status(tasks, v1beta1.NodeImageStatus{}, now)
	if st.Desired != 2 || st.Succeeded != 1 || st.Failed != 1 || st.FirstSyncStatus == nil || st.FirstSyncStatus.Status != SyncFailed {
		t.Fatalf("status %+v", st)
	}
	if tags := st.ImageStatuses["r/app"].Tags; len(tags) != 2 || tags[0].Tag != "v1" || tags[1].ImageID != "sha256:a" {
		t.Errorf("tags %+v, want v1 then v2", tags)
	}
	tasks[Key{"r/app", "v3"}] = state{Phase: v1beta1.NodeImagePullPulling, Version: 1}
	if again := Status(tasks, st, now.Add(time.Hour)); !again.FirstSyncStatus.SyncAt.Equal(st.FirstSyncStatus.SyncAt) || again.Pulling != 1 {
		t.Errorf("firstSyncStatus moved or pulling not counted: %+v", again)
	}
	patch, err := StatusPatch(v1beta1.NodeImageStatus{ImageStatuses: map[string]v1beta1.NodeImageImageStatus{"gone": {}}},
		v1beta1.NodeImageStatus{Desired: 0})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(patch); !strings.Contains(s, `"gone":null`) || !strings.Contains(s, `"failed":null`) {
		t.Errorf("patch %s does not clear the gone image and the zero counts", s)
	}
}

func TestSyncAdoptsCancelsAndRestarts(t *testing.T) {
	f := &fakeImages{block: true}
	p := &Puller{Images: f, Workers: 1}
	done := metav1.Now()
	ni := &v1beta1.NodeImage{Spec: v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{
		"r/app": {Tags: []v1beta1.NodeImageTagSpec{{Tag: "v1", Version: 1}, {Tag: "v2", Version: 1}}}}},
		Status: v1beta1.NodeImageStatus{ImageStatuses: map[string]v1beta1.NodeImageImageStatus{"r/app": {Tags: []v1beta1.NodeImageTagStatus{
			{Tag: "v1", Version: 1, Phase: v1beta1.NodeImagePullSucceeded, ImageID: "sha256:old", CompletionTime: &done}}}}}}
	ctx := t.Context()
	p.Sync(ctx, ni)
	waitFor(t, func() bool { return p.snapshot()[Key{"r/app", "v2"}].Phase == v1beta1.NodeImagePullPulling })
	if s := p.snapshot()[Key{"r/app", "v1"}]; s.Phase != v1beta1.NodeImagePullSucceeded || s.ImageID != "sha256:old" {
		t.Errorf("a task reported finished was not adopted: %+v", s)
	}
	// A new version of v1 restarts it; it waits, since the only worker pulls v2.
	ni.Spec.Images["r/app"].Tags[0].Version = 2
	p.Sync(ctx, ni)
	waitFor(t, func() bool { return p.snapshot()[Key{"r/app", "v1"}].Phase == v1beta1.NodeImagePullWaiting })
	// Dropping v2 cancels its pull and frees the worker for v1.
	ni.Spec.Images["r/app"] = v1beta1.NodeImageImageSpec{Tags: ni.Spec.Images["r/app"].Tags[:1]}
	p.Sync(ctx, ni)
	waitFor(t, func() bool { return p.snapshot()[Key{"r/app", "v1"}].Phase == v1beta1.NodeImagePullPulling })
	if _, ok := p.snapshot()[Key{"r/app", "v2"}]; ok {
		t.Error("the dropped tag still has a task")
	}
	p.Stop()
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 5s")
}

// A pull task that panics fails alone: the worker it held goes to the next pull.
func TestPanickingTaskFailsAlone(t *testing.T) {
	p := &Puller{Images: &fakeImages{panicOn: "r/bad:v1"}, Workers: 1}
	p.Sync(t.Context(), &v1beta1.NodeImage{Spec: v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{
		"r/bad": {Tags: []v1beta1.NodeImageTagSpec{{Tag: "v1", Version: 1}}},
		"r/app": {Tags: []v1beta1.NodeImageTagSpec{{Tag: "v1", Version: 1}}}}}})
	defer p.Stop()
	waitFor(t, func() bool {
		s := p.snapshot()
		return s[Key{"r/bad", "v1"}].Phase == v1beta1.NodeImagePullFailed && s[Key{"r/app", "v1"}].Phase == v1beta1.NodeImagePullSucceeded
	})
	if msg := p.snapshot()[Key{"r/bad", "v1"}].Message; !strings.Contains(msg, "internal error: panic: a bug pulling r/bad:v1") {
		t.Errorf("the panicked task's message %q", msg)
	}
}

// Stop forgets the tasks, so a restarted Run's Sync starts the unfinished pulls again.
func TestSyncAfterStopStartsAgain(t *testing.T) {
	f := &fakeImages{block: true}
	p := &Puller{Images: f, Workers: 1}
	ni := &v1beta1.NodeImage{Spec: v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{
		"r/app": {Tags: []v1beta1.NodeImageTagSpec{{Tag: "v1", Version: 1}}}}}}
	p.Sync(t.Context(), ni)
	waitFor(t, func() bool { return p.snapshot()[Key{"r/app", "v1"}].Phase == v1beta1.NodeImagePullPulling })
	p.Stop()
	if n := len(p.snapshot()); n != 0 {
		t.Fatalf("%d tasks after Stop", n)
	}
	p.Sync(t.Context(), ni)
	waitFor(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.pulls) == 2
	})
	p.Stop()
}
