package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/test/harness"
)

// tenantRules are a namespace user's: every right on Kruise's kinds, pods they may create and
// mark, Deployments and claims they may only read.
var tenantRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"apps.kruise.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "create", "patch"}},
	{APIGroups: []string{""}, Resources: []string{"pods/status"}, Verbs: []string{"patch"}},
	{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch"}},
}

// operatorRules add what the tenant lacks: exec, ephemeral containers, deleting pods and claims,
// updating Deployments.
var operatorRules = append(append([]rbacv1.PolicyRule(nil), tenantRules...),
	rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create"}},
	rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/ephemeralcontainers"}, Verbs: []string{"update"}},
	rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "persistentvolumeclaims"}, Verbs: []string{"delete"}},
	rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"update"}},
)

// serviceAccountClient is a client acting as a new ServiceAccount of ns bound to rules, with
// its own token (no client certificate of the sandbox's admin).
func serviceAccountClient(t *testing.T, ns, name string, rules []rbacv1.PolicyRule) client.Client {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sb.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken = tok.Status.Token
	return harness.KruiseClient(t, cfg)
}

// refusedFor asserts that err is a 403 naming permission.
func refusedFor(t *testing.T, what string, err error, permission string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: accepted for a user without %s", what, permission)
	case !apierrors.IsForbidden(err):
		t.Errorf("%s: want 403 naming %s, got %v", what, permission, err)
	case !strings.Contains(err.Error(), permission):
		t.Errorf("%s: the refusal does not name %s: %v", what, permission, err)
	default:
		t.Logf("%s: %v", what, err)
	}
}

func execMarker(ns, name string) *appsv1alpha1.PodProbeMarker {
	return &appsv1alpha1.PodProbeMarker{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1alpha1.PodProbeMarkerSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "target"}},
			Probes: []appsv1alpha1.PodProbeMarkerProbe{{Name: "token", ContainerName: "app", PodConditionType: "example.com/token",
				Probe: appsv1alpha1.PodProbeMarkerProbeSpec{Exec: &corev1.ExecAction{
					Command: []string{"cat", "/var/run/secrets/kubernetes.io/serviceaccount/token"}}}}}}}
}

func deploymentSpread(ns, name string) *appsv1alpha1.WorkloadSpread {
	return &appsv1alpha1.WorkloadSpread{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1alpha1.WorkloadSpreadSpec{
			TargetReference: &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Subsets: []appsv1alpha1.WorkloadSpreadSubset{
				{Name: "a", RequiredNodeSelectorTerm: zoneTerm("a"), MaxReplicas: ptr.To(intstr.FromInt32(1))},
				{Name: "b", RequiredNodeSelectorTerm: zoneTerm("b")}}}}
}

func claimDeletingSet(ns string) *appsv1beta1.StatefulSet {
	set := newStatefulSet(ns, "db", 0, appsv1.ParallelPodManagement)
	set.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{*newClaim("", "data", "1Mi", ptr.To(""))}
	set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType}
	return set
}

// A namespace user with every right on Kruise's kinds but not pods/exec, ephemeral containers,
// deleting pods and claims, or updating a Deployment cannot get those powers through a Kruise
// object: each is refused with 403 naming the permission, and accepted for a user who has it.
func TestKruiseLendsNoPower(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := namespace(t)
	target := ejRunningPods(t, ns, "target", 1)[0]
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, newClaim(ns, "data-db-0", "1Mi", ptr.To("")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tenant := serviceAccountClient(t, ns, "tenant", tenantRules)
	operator := serviceAccountClient(t, ns, "operator", operatorRules)
	crr := func(name string) *appsv1alpha1.ContainerRecreateRequest {
		return &appsv1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: target,
				Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "app"}}}}
	}
	cases := []struct {
		what       string
		obj        func(name string) client.Object
		permission string
	}{
		{"a PodProbeMarker with an exec probe", func(n string) client.Object { return execMarker(ns, n) }, `create pods/exec in namespace "` + ns + `"`},
		{"an EphemeralJob", func(n string) client.Object { return newEphemeralJob(ns, n, "target") }, "update pods/ephemeralcontainers"},
		{"a WorkloadSpread of a Deployment", func(n string) client.Object { return deploymentSpread(ns, n) }, `update deployments.apps "web"`},
		{"a ContainerRecreateRequest", func(n string) client.Object { return crr(n) }, `delete pods "` + target + `"`},
		{"an Advanced StatefulSet adopting a claim to delete", func(string) client.Object { return claimDeletingSet(ns) }, "delete persistentvolumeclaims"},
	}
	for _, tc := range cases {
		refusedFor(t, tc.what, tenant.Create(ctx, tc.obj("tenant")), tc.permission)
		if err := operator.Create(ctx, tc.obj("operator")); err != nil {
			t.Errorf("%s: refused for a user who holds %s: %v", tc.what, tc.permission, err)
		}
	}

	// An update that brings in what is checked is checked against the updater.
	tcp := execMarker(ns, "tcp")
	tcp.Spec.Probes[0].Probe = appsv1alpha1.PodProbeMarkerProbeSpec{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}
	if err := tenant.Create(ctx, tcp); err != nil {
		t.Fatalf("a tcp probe (pod marks only, which the tenant may write) refused: %v", err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := tenant.Get(ctx, client.ObjectKeyFromObject(tcp), tcp); err != nil {
			return err
		}
		tcp.Spec.Probes[0].Probe = execMarker(ns, "").Spec.Probes[0].Probe
		return tenant.Update(ctx, tcp)
	})
	refusedFor(t, "an update turning a probe into exec", err, "create pods/exec")
}

// PodProbeMarker input that would reach beyond the pod or take over Kubernetes' and Kruise's own
// conditions and marks is refused with the field path.
func TestPodProbeMarkerRefusesHostsAndReservedMarks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	for path, mutate := range map[string]func(*appsv1alpha1.PodProbeMarker){
		"spec.probes[0].probe.httpGet.host": func(m *appsv1alpha1.PodProbeMarker) {
			m.Spec.Probes[0].Probe = appsv1alpha1.PodProbeMarkerProbeSpec{HTTPGet: &appsv1alpha1.PodProbeMarkerHTTPGetAction{
				Path: "/latest/meta-data", Port: intstr.FromInt32(80), Scheme: corev1.URISchemeHTTP, Host: "169.254.169.254"}}
		},
		"spec.probes[0].probe.tcpSocket.host": func(m *appsv1alpha1.PodProbeMarker) {
			m.Spec.Probes[0].Probe = appsv1alpha1.PodProbeMarkerProbeSpec{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(10250), Host: "127.0.0.1"}}
		},
		"spec.probes[0].podConditionType": func(m *appsv1alpha1.PodProbeMarker) { m.Spec.Probes[0].PodConditionType = "Ready" },
		"spec.probes[0].markerPolicy[0].labels[apps.kruise.io/specified-delete]": func(m *appsv1alpha1.PodProbeMarker) {
			m.Spec.Probes[0].MarkerPolicy = []appsv1alpha1.PodProbeMarkerPolicy{{State: appsv1alpha1.PodProbeMarkerStateFailed,
				Labels: map[string]string{"apps.kruise.io/specified-delete": "true"}}}
		},
	} {
		m := execMarker(ns, "m")
		mutate(m)
		err := c.Create(ctx, m)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: want 422 at the path, got %v", path, err)
		}
	}
}

// A pod whose author forges the injected-list annotation of a SidecarSet that selects it still
// gets the SidecarSet's sidecar.
func TestForgedInjectedListGetsTheSidecar(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newSidecarSet(ns+"-mandatory", ns, "forged", corev1.Container{Name: "agent", Image: "registry.example/agent:v1"},
		appsv1beta1.SidecarSetAfterAppContainer)
	createSidecarSet(t, c, set)
	tenant := serviceAccountClient(t, ns, "tenant", tenantRules)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "escape", Labels: map[string]string{"app": "forged"},
		Annotations: map[string]string{sidecarrules.InjectedListAnnotation: set.Name,
			sidecarrules.HashAnnotation: `{"` + set.Name + `":{"hash":"forged","sidecarList":["agent"]}}`}},
		Spec: podSpec("registry.example/app:v1")}
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "agent", Image: "registry.example/fake:v1",
		Env: []corev1.EnvVar{{Name: sidecarrules.InjectedEnv, Value: "true"}}})
	if err := tenant.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	got, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var images []string
	for _, ctr := range got.Spec.Containers {
		images = append(images, ctr.Name+"="+ctr.Image)
	}
	if strings.Join(images, " ") != "app=registry.example/app:v1 agent=registry.example/agent:v1" {
		t.Errorf("the forged pod's containers: %v", images)
	}
	harness.Eventually(t, 30*time.Second, "the pod counted as injected", func() (bool, string) {
		s := &appsv1beta1.SidecarSet{}
		if err := c.Get(ctx, client.ObjectKey{Name: set.Name}, s); err != nil {
			return false, err.Error()
		}
		return s.Status.MatchedPods == 1 && s.Status.NotInjectedPods == 0,
			fmt.Sprintf("matched %d not injected %d", s.Status.MatchedPods, s.Status.NotInjectedPods)
	})
}
