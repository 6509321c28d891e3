package predownload

import (
	"context"
	"errors"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func testClient(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme, v1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
}

// events collects the reasons Sync records.
type events []string

func (e *events) record(_, reason, format string, args ...any) {
	*e = append(*e, reason+": "+fmt.Sprintf(format, args...))
}

func jobNames(t *testing.T, c client.Client) []string {
	t.Helper()
	var list v1beta1.ImagePullJobList
	if err := c.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, j := range list.Items {
		names = append(names, j.Name)
	}
	return names
}

func revisionLabels(t *testing.T, c client.Client, name string) map[string]string {
	t.Helper()
	rev := &appsv1.ControllerRevision{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, rev); err != nil {
		t.Fatal(err)
	}
	return rev.Labels
}

// The jobs are created before the revision is labelled: a failed create is retried, an existing
// job is kept, and once labelled the revision is never decided again.
func TestSyncCreatesJobsThenLabels(t *testing.T) {
	ctx := context.Background()
	in := input(t)
	in.Update.Namespace = "ns"
	fail := true
	c := testClient(t, interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if fail {
			fail = false
			if err := c.Create(ctx, obj, opts...); err != nil {
				return err
			}
			return errors.New("connection reset") // created, but the answer was lost
		}
		return c.Create(ctx, obj, opts...)
	}}, in.Update)
	var ev events
	if err := Sync(ctx, c, in, ev.record); err == nil {
		t.Fatal("a failed create is no error")
	}
	if _, ok := revisionLabels(t, c, in.Update.Name)[CreatedLabel]; ok {
		t.Fatal("revision labelled created though its job's create failed")
	}
	if err := Sync(ctx, c, in, ev.record); err != nil {
		t.Fatalf("the retry fails on the job the first create made: %v", err)
	}
	if got := jobNames(t, c); len(got) != 1 || got[0] != "web-5d8f9c-app" {
		t.Errorf("jobs %v, want [web-5d8f9c-app]", got)
	}
	labels := revisionLabels(t, c, in.Update.Name)
	if _, ok := labels[CreatedLabel]; !ok {
		t.Errorf("revision labels %v, want %s", labels, CreatedLabel)
	}
	if len(ev) != 1 || ev[0] != "CreatedImagePullJob: pre-downloading app:v2 onto the nodes of the pods (ImagePullJob web-5d8f9c-app)" {
		t.Errorf("events %q", ev)
	}
}

// A skipped update is labelled ignored, with an event saying why.
func TestSyncSkipped(t *testing.T) {
	in := input(t, func(in *Input) { in.Replicas = 2 })
	in.Update.Namespace = "ns"
	c := testClient(t, interceptor.Funcs{}, in.Update)
	var ev events
	if err := Sync(context.Background(), c, in, ev.record); err != nil {
		t.Fatal(err)
	}
	if _, ok := revisionLabels(t, c, in.Update.Name)[IgnoredLabel]; !ok || len(jobNames(t, c)) != 0 {
		t.Errorf("revision labels %v, jobs %v: want ignored, none", revisionLabels(t, c, in.Update.Name), jobNames(t, c))
	}
	if len(ev) != 1 || ev[0] != "PreDownloadSkipped: revision web-5d8f9c: no image pre-download: 2 replicas, not more than 3" {
		t.Errorf("events %q", ev)
	}
}

// Once the rollout is done, the jobs the owner controls are deleted, and no other.
func TestSyncDeletesTheOwnersJobs(t *testing.T) {
	in := input(t, func(in *Input) { in.Current = in.Update })
	job := func(name string, owner types.UID) *v1beta1.ImagePullJob {
		j := &v1beta1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		if owner != "" {
			j.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "x", UID: owner,
				Controller: ptr.To(true)}}
		}
		return j
	}
	c := testClient(t, interceptor.Funcs{}, job("mine", "u"), job("other", "v"), job("free", ""))
	if err := Sync(context.Background(), c, in, func(string, string, string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	if got := jobNames(t, c); len(got) != 2 || got[0] != "free" || got[1] != "other" {
		t.Errorf("jobs left %v, want [free other]", got)
	}
}
