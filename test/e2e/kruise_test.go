package e2e

import (
	"context"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

// The sandbox runs kruise-manager as its own user: the API server reaches its webhooks by URL
// (a CloneSet is defaulted), and the audit log attributes the manager's requests to that user.
func TestSandboxRunsKruiseManager(t *testing.T) {
	t.Parallel()
	if !sb.Kruise {
		t.Fatal("the e2e sandbox was started without Kruise")
	}
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	labels := map[string]string{"app": "web"}
	clone := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1alpha1.CloneSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec("registry.example/web:v1")}}}
	if err := c.Create(ctx, clone); err != nil {
		t.Fatalf("create CloneSet: %v", err)
	}
	if clone.Spec.UpdateStrategy.Type != appsv1alpha1.RecreateCloneSetUpdateStrategyType ||
		clone.Spec.UpdateStrategy.MaxUnavailable == nil || *clone.Spec.UpdateStrategy.MaxUnavailable != intstr.FromString("20%") {
		t.Errorf("CloneSet not defaulted by the sandbox's kruise-manager: %+v", clone.Spec.UpdateStrategy)
	}
	audit, err := os.ReadFile(sb.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(audit), `"username":"`+sandbox.KruiseManagerUser+`"`) {
		t.Errorf("no request of user %s in the audit log %s", sandbox.KruiseManagerUser, sb.AuditLog)
	}
}
