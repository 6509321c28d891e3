package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/kruise-ng/kruise/pkg/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// managerPermissionsNotExercised are kruise-manager's permissions that the e2e suite does not use,
// each with the code path that needs it.
var managerPermissionsNotExercised = map[string]string{}

// checkManagerPermissions fails when kruise-manager may do something no request of the whole e2e
// suite did (read from the API server's audit log): every verb it is granted is one its code uses.
// It runs after the whole suite only (a -run filter exercises less).
func checkManagerPermissions() error {
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() != "" {
		return nil
	}
	ctx := context.Background()
	cfg, err := sb.RESTConfig()
	if err != nil {
		return err
	}
	granted, err := harness.EffectivePermissions(ctx, cfg, sandbox.KruiseManagerUser, nil, sandbox.KruiseNamespace, "default")
	if err != nil {
		return err
	}
	used, err := harness.UsedPermissions(sb.AuditLog, sandbox.KruiseManagerUser)
	if err != nil {
		return err
	}
	unused := harness.UnusedPermissions(granted, used, managerPermissionsNotExercised)
	fmt.Fprintf(os.Stderr, "kruise-manager: %d permissions (verb × resource) granted, %d unused by the e2e suite and not excused\n", len(granted), len(unused))
	if len(unused) > 0 {
		return fmt.Errorf("kruise-manager is granted permissions no code path of the e2e suite used (remove them, or excuse them in managerPermissionsNotExercised with the path that needs them):\n  %s",
			strings.Join(unused, "\n  "))
	}
	return nil
}
