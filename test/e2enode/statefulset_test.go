package e2enode

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/test/harness"
)

// clusterDomain is the DNS domain of Services that the kubelet writes into a pod's /etc/hosts.
const clusterDomain = "cluster.local"

// statefulSetInPlace: a 3-replica OrderedReady Advanced StatefulSet with a claim per pod, behind a
// headless Service, rolls app:v1 → app:v2 in place on the real node: each pod keeps its UID, its
// hostname, its stable DNS name and what it wrote to its volume; its container restarts once.
func statefulSetInPlace(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	const name, replicas = "web", 3
	set := newRealStatefulSet(ns, name, replicas, sb.Image("app:v1"))
	set.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}}}
	set.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: set.Spec.Selector.MatchLabels}}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	harness.WaitStatefulSet(t, c, 2*time.Minute, ns, name, "3 pods ready on v1", harness.StatefulSetRolledOut(replicas))
	t.Logf("3 pods with claims created one by one and ready in %.1fs", time.Since(t0).Seconds())
	before := listPods(t, cs, ns)
	for pod, p := range before {
		execIn(t, sb, ns, pod, "sh", "-c", fmt.Sprintf("echo %s > /data/marker", p.UID))
		// The marker is in the folder the provisioner made for the pod's claim.
		if got := hostMarker(t, sb, cs, ns, "data-"+pod); got != string(p.UID) {
			t.Errorf("the volume of claim data-%s holds %q on the host, want %s", pod, got, p.UID)
		}
	}

	// A JSON patch of the image alone: a merge patch would replace the containers list and drop the
	// volume mount, a change that is not in place.
	patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":%q}]`, sb.Image("app:v2"))
	if err := c.Patch(ctx, set, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	harness.WaitStatefulSet(t, c, 2*time.Minute, ns, name, "rolled out to v2", harness.StatefulSetRolledOut(replicas))
	t.Logf("3 pods updated in place in %.1fs", time.Since(t0).Seconds())
	after := listPods(t, cs, ns)
	harness.CheckUpdatedInPlace(t, before, after, replicas)
	for pod, p := range after {
		if got := execIn(t, sb, ns, pod, "cat", "/etc/app-version"); got != "v2" {
			t.Errorf("pod %s says %q after the rollout, want v2", pod, got)
		}
		if got := execIn(t, sb, ns, pod, "cat", "/data/marker"); got != string(before[pod].UID) {
			t.Errorf("pod %s: /data/marker holds %q after the restart, want %s", pod, got, before[pod].UID)
		}
		checkIdentity(t, sb, ns, name, p)
	}
	// A cluster DNS serves <hostname>.<service> from the Service's EndpointSlices; no DNS server runs
	// in the sandbox, so check the records it would serve.
	harness.Eventually(t, 30*time.Second, "each pod listed ready with its hostname in the headless Service", func() (bool, string) {
		got := headlessHostnames(cs, ns, name)
		for pod, p := range after {
			if got[p.Status.PodIP] != pod {
				return false, fmt.Sprint(got)
			}
		}
		return true, ""
	})
}

// checkIdentity checks what the pod sees of its identity: hostname <set>-<ordinal>, and its stable
// DNS name <pod>.<service>.<namespace>.svc.<domain> for its IP in /etc/hosts.
func checkIdentity(t *testing.T, sb *sandbox.Sandbox, ns, service string, p *corev1.Pod) {
	t.Helper()
	if got := execIn(t, sb, ns, p.Name, "busybox", "hostname"); got != p.Name {
		t.Errorf("pod %s: hostname prints %q", p.Name, got)
	}
	fqdn := fmt.Sprintf("%s.%s.%s.svc.%s", p.Name, service, ns, clusterDomain)
	hosts := execIn(t, sb, ns, p.Name, "cat", "/etc/hosts")
	for _, line := range strings.Split(hosts, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == p.Status.PodIP && f[1] == fqdn && f[2] == p.Name {
			return
		}
	}
	t.Errorf("pod %s: /etc/hosts lacks %q:\n%s", p.Name, p.Status.PodIP+" "+fqdn+" "+p.Name, hosts)
}

// hostMarker reads /marker from the host folder of the volume bound to claim.
func hostMarker(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, ns, claim string) string {
	t.Helper()
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), claim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pvc.Spec.VolumeName == "" {
		t.Fatalf("claim %s is not bound: %s", claim, pvc.Status.Phase)
	}
	b, err := os.ReadFile(filepath.Join(sb.VolumesDir(), pvc.Spec.VolumeName, "marker"))
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(string(b))
}

// headlessHostnames maps the ready endpoints' IPs of Service svc to their hostnames.
func headlessHostnames(cs kubernetes.Interface, ns, svc string) map[string]string {
	slices, err := cs.DiscoveryV1().EndpointSlices(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	out := map[string]string{}
	if err != nil {
		out["error"] = err.Error()
		return out
	}
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || !*e.Conditions.Ready || e.Hostname == nil {
				continue
			}
			for _, a := range e.Addresses {
				out[a] = *e.Hostname
			}
		}
	}
	return out
}

// statefulSetOrderedReadyProbe: an OrderedReady set creates pod n+1 only once pod n passes its
// readiness probe; while the probe fails the set waits, and it goes on as soon as the probe passes.
func statefulSetOrderedReadyProbe(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	const name, replicas = "probed", 3
	set := newRealStatefulSet(ns, name, replicas, sb.Image("app:v1"))
	set.Spec.Template.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/ready"}}},
		PeriodSeconds: 1, FailureThreshold: 1}
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	for ord := range replicas - 1 {
		pod, next := ordinal.PodName(name, ord), ordinal.PodName(name, ord+1)
		waitPod(t, cs, ns, pod, 60*time.Second, "running, its probe failing", func(p *corev1.Pod) bool {
			c := p.Status.ContainerStatuses
			return len(c) == 1 && c[0].State.Running != nil && !c[0].Ready
		})
		harness.Consistently(t, 3*time.Second, next+" not created while "+pod+" is not ready", func() (bool, string) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			_, err = cs.CoreV1().Pods(ns).Get(ctx, next, metav1.GetOptions{})
			return apierrors.IsNotFound(err) && harness.PodCondition(p, corev1.PodReady) != corev1.ConditionTrue,
				fmt.Sprintf("get %s: %v; %s", next, err, harness.DescribePod(p))
		})
		execIn(t, sb, ns, pod, "sh", "-c", ": > /ready")
		t0 := time.Now()
		waitPod(t, cs, ns, next, 30*time.Second, "created once "+pod+" passes its probe", func(*corev1.Pod) bool { return true })
		t.Logf("%s created %.1fs after %s's probe was made to pass", next, time.Since(t0).Seconds(), pod)
	}
	last := ordinal.PodName(name, replicas-1)
	waitPod(t, cs, ns, last, 60*time.Second, "running", func(p *corev1.Pod) bool {
		c := p.Status.ContainerStatuses
		return len(c) == 1 && c[0].State.Running != nil
	})
	execIn(t, sb, ns, last, "sh", "-c", ": > /ready")
	harness.WaitStatefulSet(t, c, 60*time.Second, ns, name, "3 ready", func(s *appsv1beta1.StatefulSet) bool {
		return s.Status.ReadyReplicas == replicas
	})
}

// newRealStatefulSet is an OrderedReady Advanced StatefulSet of replicas pods of image on the real
// node, labelled app=NAME, with the headless Service NAME, updated in place where possible.
func newRealStatefulSet(ns, name string, replicas int32, image string) *appsv1beta1.StatefulSet {
	labels := map[string]string{"app": name}
	pod := realPod("app", image).Spec
	pod.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
	return &appsv1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1beta1.StatefulSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			ServiceName: name, PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels)}, Spec: pod},
			UpdateStrategy: appsv1beta1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1beta1.StatefulSetRollingUpdateStrategy{PodUpdatePolicy: appsv1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy}}}}
}
