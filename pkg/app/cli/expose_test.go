package cli

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func getService(t *testing.T, c client.Client, name string) (*corev1.Service, bool) {
	t.Helper()
	svc := &corev1.Service{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, svc)
	return svc, err == nil
}

// expose makes a Service selecting a CloneSet's pods by its matchLabels, on the template's first
// container port (named, as the container names it) or --port; --dry-run=client prints it only.
func TestExposeCloneSet(t *testing.T) {
	f := fixtures(t)[1]
	cs := f.obj.(*appsv1alpha1.CloneSet)
	cs.Labels = map[string]string{"team": "a"}
	cs.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	env, c, _ := fakeEnv(t, f.objs...)

	out, err := kubectlKruise(env, "expose", "clone/web", "--port", "80", "--target-port", "http", "--dry-run=client", "-o", "yaml")
	if err != nil || !strings.Contains(out, "port: 80\n") || !strings.Contains(out, "targetPort: http") ||
		!strings.Contains(out, "selector:\n    app: web") || !strings.Contains(out, "kind: Service") {
		t.Fatalf("--dry-run=client -o yaml: %v\n%s", err, out)
	}
	if _, ok := getService(t, c, "web"); ok {
		t.Error("--dry-run=client created the Service")
	}

	out, err = kubectlKruise(env, "expose", "cloneset", "web")
	if err != nil || out != "service/web exposed\n" {
		t.Fatalf("expose cloneset web: %v\n%s", err, out)
	}
	svc, _ := getService(t, c, "web")
	want := []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 8080, TargetPort: intstr.FromInt32(8080)}}
	if !reflect.DeepEqual(svc.Spec.Ports, want) || !reflect.DeepEqual(svc.Spec.Selector, map[string]string{"app": "web"}) ||
		svc.Labels["team"] != "a" {
		t.Errorf("service: ports %+v, selector %v, labels %v", svc.Spec.Ports, svc.Spec.Selector, svc.Labels)
	}
}

// expose of an Advanced DaemonSet takes every Service flag; an Advanced StatefulSet selecting by
// matchExpressions is refused unless --selector gives the Service's.
func TestExposeFlagsAndRefusals(t *testing.T) {
	ds, objs := daemonSetFixture(t)
	set := fixtures(t)[0].obj.(*v1beta1.StatefulSet)
	set.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"db"}}}}
	env, c, _ := fakeEnv(t, append(objs, set)...)
	out, err := kubectlKruise(env, "expose", "ads/"+ds.Name, "--port=53", "--protocol=udp", "--name=dns", "--type=NodePort",
		"--session-affinity=ClientIP", "--external-ip=10.0.0.1,10.0.0.2", "--labels=a=b", "--load-balancer-ip=10.0.0.9", "-o", "name")
	if err != nil || out != "service/dns\n" {
		t.Fatalf("expose ads: %v\n%s", err, out)
	}
	svc, _ := getService(t, c, "dns")
	sp := svc.Spec
	if sp.Type != corev1.ServiceTypeNodePort || sp.SessionAffinity != corev1.ServiceAffinityClientIP || len(sp.ExternalIPs) != 2 ||
		sp.LoadBalancerIP != "10.0.0.9" || sp.Ports[0].Protocol != corev1.ProtocolUDP || sp.Ports[0].Port != 53 ||
		!reflect.DeepEqual(svc.Labels, map[string]string{"a": "b"}) || sp.Selector["app"] != "agent" {
		t.Errorf("service %+v labels %v", sp, svc.Labels)
	}

	wantError(t, env, "selects its pods with matchExpressions, which a Service's selector cannot hold", "expose", "asts/db", "--port=5432")
	wantError(t, env, "declares no container port: give --port", "expose", "asts/db", "--selector=app=db")
	if _, err := kubectlKruise(env, "expose", "asts/db", "--selector=app=db", "--port=5432", "--cluster-ip=None"); err != nil {
		t.Fatal(err)
	}
	if svc, _ := getService(t, c, "db"); svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Selector["app"] != "db" {
		t.Errorf("headless service %+v", svc.Spec)
	}
	for args, says := range map[string]string{"--type=Foo": "--type", "--session-affinity=x": "--session-affinity",
		"--protocol=icmp": "--protocol", "--port=0": "--port", "-o=wide": "output format"} {
		wantError(t, env, says, "expose", "ads/"+ds.Name, "--port=80", "--name=x", args)
	}
}
