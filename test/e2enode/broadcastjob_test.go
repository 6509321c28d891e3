package e2enode

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// broadcastJobCompletes: a BroadcastJob limited to the real node runs its pod there to
// completion (the container exits 0 after reading its image's files) and the job completes.
func broadcastJobCompletes(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	spec := realPod("job", sb.Image("app:v1")).Spec
	spec.RestartPolicy = corev1.RestartPolicyNever
	spec.Containers[0].Command = []string{"sh", "-c", "test \"$(cat /etc/app-version)\" = v1"}
	job := &appsv1beta1.BroadcastJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "check"},
		Spec: appsv1beta1.BroadcastJobSpec{Template: corev1.PodTemplateSpec{Spec: spec}}}
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	harness.Eventually(t, 2*time.Minute, "the job completed on the real node", func() (bool, string) {
		got := &appsv1beta1.BroadcastJob{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
			return false, err.Error()
		}
		st := got.Status
		return st.Phase == appsv1beta1.BroadcastJobPhaseCompleted && st.Desired == 1 && st.Succeeded == 1 && st.Failed == 0,
			fmt.Sprintf("%+v", st)
	})
	t.Logf("the BroadcastJob ran to completion on the real node in %.1fs", time.Since(t0).Seconds())
	pods := listPods(t, cs, ns)
	if len(pods) != 1 {
		t.Fatalf("%d pods, want the job's one", len(pods))
	}
	for name, p := range pods {
		if p.Spec.NodeName != sandbox.RealNodeName || p.Status.Phase != corev1.PodSucceeded {
			t.Errorf("pod %s on %q in phase %s, want Succeeded on %s", name, p.Spec.NodeName, p.Status.Phase, sandbox.RealNodeName)
		}
	}
}
