package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/client/clientset/versioned"
	"github.com/kruise-ng/kruise/client/informers/externalversions"
)

// Kruise's Go client (github.com/kruise-ng/kruise/client) against a real API server: the typed
// clientset creates a CloneSet, a shared informer's lister reads it, a status write reaches the
// informer's handler, and the other groups and versions answer (an Advanced StatefulSet in
// v1beta1, PodUnavailableBudgets in policy.kruise.io).
func TestGoClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kube := kubernetes.NewForConfigOrDie(cfg)
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "goclient-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) }()
	client := versioned.NewForConfigOrDie(cfg)
	labels := map[string]string{"app": "web"}
	created, err := client.AppsV1alpha1().CloneSets(ns.Name).Create(ctx, &v1alpha1.CloneSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1alpha1.CloneSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:v1"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	factory := externalversions.NewSharedInformerFactoryWithOptions(client, 0, externalversions.WithNamespace(ns.Name))
	informer := factory.Apps().V1alpha1().CloneSets()
	updated := make(chan *v1alpha1.CloneSet, 10)
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { updated <- obj.(*v1alpha1.CloneSet) },
	}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer of %v did not sync", typ)
		}
	}
	if got, err := informer.Lister().CloneSets(ns.Name).Get("web"); err != nil || got.UID != created.UID {
		t.Fatalf("lister: %v, %v; want the created CloneSet", got, err)
	}

	created.Status = v1alpha1.CloneSetStatus{ObservedGeneration: created.Generation, Replicas: 2, UpdatedReplicas: 2, UpdatedReadyReplicas: 2}
	if _, err := client.AppsV1alpha1().CloneSets(ns.Name).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case cs := <-updated:
		if cs.Status.UpdatedReadyReplicas != 2 {
			t.Errorf("informer saw status %+v, want 2 updated and ready", cs.Status)
		}
	case <-ctx.Done():
		t.Fatal("the status write never reached the informer")
	}
	if _, err := client.AppsV1beta1().StatefulSets(ns.Name).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("apps.kruise.io/v1beta1 StatefulSets: %v", err)
	}
	if _, err := client.PolicyV1alpha1().PodUnavailableBudgets(ns.Name).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("policy.kruise.io/v1alpha1 PodUnavailableBudgets: %v", err)
	}
}
