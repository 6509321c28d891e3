package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// kruise-daemon may write only its own node's objects, and the API server holds it to that (the
// ValidatingAdmissionPolicy kruise-daemon-node-binding), not the daemon's code: with a token of the
// daemon's service account bound to a pod on node A (or to node A itself), writes to node A's
// NodeImage and pods go through and node B's are Forbidden. Real writes: `kubectl auth can-i` does
// not evaluate admission policies.
func TestDaemonWritesOnlyItsOwnNode(t *testing.T) {
	ctx := context.Background()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sandbox.NodeTypeLabel + "=kwok"})
	if err != nil || len(nodes.Items) < 2 {
		t.Fatalf("need two kwok nodes: %v (%v)", nodes, err)
	}
	a, b := nodes.Items[0], nodes.Items[1]
	admin := kruiseClient(t)
	for _, n := range []string{a.Name, b.Name} {
		harness.Eventually(t, 30*time.Second, "NodeImage "+n, func() (bool, string) {
			err := admin.Get(ctx, client.ObjectKey{Name: n}, &appsv1alpha1.NodeImage{})
			return err == nil, fmt.Sprint(err)
		})
	}
	ns := namespace(t)
	pod := func(ns, name, node string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "registry.local/app:v1"}}}}
		if ns == sandbox.KruiseNamespace {
			p.Spec.ServiceAccountName = install.DaemonServiceAccount
		}
		p, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	onA, onB := pod(ns, "on-a", a.Name), pod(ns, "on-b", b.Name)
	daemonPod := pod(sandbox.KruiseNamespace, "daemon-"+ns, a.Name) // stands for node A's kruise-daemon pod
	t.Cleanup(func() {
		_ = cs.CoreV1().Pods(sandbox.KruiseNamespace).Delete(context.Background(), daemonPod.Name, metav1.DeleteOptions{})
	})

	for _, bound := range []authenticationv1.BoundObjectReference{
		{Kind: "Pod", APIVersion: "v1", Name: daemonPod.Name, UID: daemonPod.UID},
		{Kind: "Node", APIVersion: "v1", Name: a.Name, UID: a.UID},
	} {
		t.Run("token bound to "+strings.ToLower(bound.Kind), func(t *testing.T) {
			daemonCS, daemonC := daemonClients(t, bound)
			annotate := []byte(`{"metadata":{"annotations":{"e2e.kruise.io/daemon-write":"` + bound.Kind + `"}}}`)
			for _, p := range []*corev1.Pod{onA, onB} {
				_, err := daemonCS.CoreV1().Pods(ns).Patch(ctx, p.Name, types.MergePatchType, annotate, metav1.PatchOptions{}, "status")
				checkNodeBound(t, "pod "+p.Name+" status", p.Spec.NodeName == a.Name, err)
			}
			// The status subresource carries metadata too: how kruise-daemon reports container meta.
			got, err := cs.CoreV1().Pods(ns).Get(ctx, onA.Name, metav1.GetOptions{})
			if err != nil || got.Annotations["e2e.kruise.io/daemon-write"] != bound.Kind {
				t.Errorf("annotation written through pods/status: %v (%v)", got.Annotations, err)
			}
			for _, n := range []string{a.Name, b.Name} {
				ni := &appsv1alpha1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: n}}
				err := daemonC.Status().Patch(ctx, ni, client.RawPatch(types.MergePatchType, annotate))
				checkNodeBound(t, "NodeImage "+n+" status", n == a.Name, err)
			}
		})
	}
	// Without a node in the credential, the daemon's account writes nothing.
	daemonCS, _ := daemonClients(t, authenticationv1.BoundObjectReference{})
	_, err = daemonCS.CoreV1().Pods(ns).Patch(ctx, onA.Name, types.MergePatchType, []byte(`{"metadata":{"annotations":{"x":"y"}}}`), metav1.PatchOptions{}, "status")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "names none") {
		t.Errorf("a token bound to nothing patched a pod's status: %v, want Forbidden", err)
	}
}

// daemonClients authenticate as kruise-daemon's service account with a token bound to bound (none
// when empty).
func daemonClients(t *testing.T, bound authenticationv1.BoundObjectReference) (kubernetes.Interface, client.Client) {
	t.Helper()
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
	if bound.Kind != "" {
		req.Spec.BoundObjectRef = &bound
	}
	tok, err := cs.CoreV1().ServiceAccounts(sandbox.KruiseNamespace).CreateToken(context.Background(), install.DaemonServiceAccount, req, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of %s bound to %s %s: %v", install.DaemonServiceAccount, bound.Kind, bound.Name, err)
	}
	admin, err := sb.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken = tok.Status.Token
	return kubernetes.NewForConfigOrDie(cfg), harness.KruiseClient(t, cfg)
}

// checkNodeBound wants err nil for an object of the daemon's node and Forbidden by the policy for
// another node's.
func checkNodeBound(t *testing.T, what string, own bool, err error) {
	t.Helper()
	switch {
	case own && err != nil:
		t.Errorf("%s (own node): %v", what, err)
	case !own && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "may not write")):
		t.Errorf("%s (another node): %v, want Forbidden by %s", what, err, install.DaemonNodePolicy)
	}
}
