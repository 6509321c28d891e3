package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// The test API server is the pinned, source-built Kubernetes release.
func TestAPIServerIsThePinnedRelease(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(cfg)
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != "v1.37.2" {
		t.Fatalf("kube-apiserver reports %q; want v1.37.2 (built by `make tools`)", v.GitVersion)
	}
}

// Objects written to the API server are stored in etcd and streamed to watchers in order.
func TestCreateAndWatchObjects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "watch-"}}
	ns, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().ConfigMaps(ns.Name).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	cms := cs.CoreV1().ConfigMaps(ns.Name)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "2"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	want := []string{"ADDED v=1", "MODIFIED v=2", "DELETED v=2"}
	var got []string
	for len(got) < len(want) {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %v", got)
			}
			if ev.Type == watch.Error {
				t.Fatalf("watch error: %v", ev.Object)
			}
			got = append(got, fmt.Sprintf("%s v=%s", ev.Type, ev.Object.(*corev1.ConfigMap).Data["v"]))
		case <-ctx.Done():
			t.Fatalf("watch saw %v; want %v", got, want)
		}
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("watch saw %v; want %v", got, want)
		}
	}
	if _, err := cms.Get(ctx, "app", metav1.GetOptions{}); err == nil {
		t.Fatal("deleted ConfigMap is still readable")
	}
}
