package e2enode

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// daemonPermissionsNotExercised are kruise-daemon's permissions the node stories do not use, each
// with the code path that needs it.
var daemonPermissionsNotExercised = map[string]string{}

// daemonPermissionsUsed fails when kruise-daemon's service account may do something none of its
// requests in the node stories did (the API server's audit log): every verb it is granted is one
// its code uses. Run after the stories that drive the daemon.
func daemonPermissionsUsed(t *testing.T, sb *sandbox.Sandbox, cfg *rest.Config) {
	user := "system:serviceaccount:" + sandbox.KruiseNamespace + ":" + install.DaemonServiceAccount
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + sandbox.KruiseNamespace, "system:authenticated"}
	if err := harness.CheckPermissionsUsed(context.Background(), cfg, sb.AuditLog, user, groups,
		[]string{sandbox.KruiseNamespace, appspub.KruiseDaemonConfigNamespace, "default"}, daemonPermissionsNotExercised); err != nil {
		t.Error(err)
	}
}
