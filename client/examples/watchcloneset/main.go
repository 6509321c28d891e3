// Command watchcloneset lists the CloneSets of a namespace with Kruise's Go client and watches one
// roll out: it prints the CloneSet's progress at each change until every replica runs the update
// revision and is ready.
//
//	go run ./examples/watchcloneset --kubeconfig ~/.kube/config -n default web
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/client/clientset/versioned"
	"github.com/kruise-ng/kruise/client/informers/externalversions"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file (default: in-cluster)")
	namespace := flag.String("n", "default", "namespace")
	flag.Parse()
	if err := run(*kubeconfig, *namespace, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(kubeconfig, namespace, name string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	list, err := client.AppsV1alpha1().CloneSets(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, cs := range list.Items {
		fmt.Printf("%s: %d replicas, %d updated, %d ready\n", cs.Name, cs.Status.Replicas, cs.Status.UpdatedReplicas, cs.Status.ReadyReplicas)
	}
	if name == "" {
		return nil
	}
	return watch(ctx, client, namespace, name)
}

// watch prints the named CloneSet's progress at each change, until it has rolled out.
func watch(ctx context.Context, client versioned.Interface, namespace, name string) error {
	factory := externalversions.NewSharedInformerFactoryWithOptions(client, 0, externalversions.WithNamespace(namespace))
	informer := factory.Apps().V1alpha1().CloneSets()
	done := make(chan struct{})
	report := func(obj any) {
		cs, ok := obj.(*v1alpha1.CloneSet)
		if !ok || cs.Name != name {
			return
		}
		want := int32(1)
		if cs.Spec.Replicas != nil {
			want = *cs.Spec.Replicas
		}
		fmt.Printf("%s: revision %s, %d/%d updated, %d updated and ready\n", name, cs.Status.UpdateRevision,
			cs.Status.UpdatedReplicas, want, cs.Status.UpdatedReadyReplicas)
		if cs.Status.ObservedGeneration == cs.Generation && cs.Status.UpdatedReadyReplicas == want && cs.Status.Replicas == want {
			select {
			case <-done:
			default:
				close(done)
			}
		}
	}
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    report,
		UpdateFunc: func(_, obj any) { report(obj) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	select {
	case <-done:
		fmt.Printf("%s rolled out\n", name)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
