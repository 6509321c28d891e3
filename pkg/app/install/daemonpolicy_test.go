package install

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// The node-binding policy is installed with the daemon's binding, for the daemon's user name, and
// refuses with 403 (reason Forbidden), not 422.
func TestDaemonNodePolicyInstalledWithTheDaemon(t *testing.T) {
	kinds := func(opts Options) map[string]string {
		objs, err := Objects(opts)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, o := range objs {
			out[o.GetKind()+"/"+o.GetName()] = o.GetKind()
		}
		return out
	}
	base := Options{Namespace: "ns", WebhookService: "svc", Subject: rbacv1.Subject{Kind: rbacv1.UserKind, Name: "m"}}
	if _, ok := kinds(base)["ValidatingAdmissionPolicy/"+DaemonNodePolicy]; ok {
		t.Error("policy installed without a daemon subject")
	}
	base.DaemonSubject = &rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "ns", Name: DaemonServiceAccount}
	got := kinds(base)
	for _, k := range []string{"ValidatingAdmissionPolicy/" + DaemonNodePolicy, "ValidatingAdmissionPolicyBinding/" + DaemonNodePolicy} {
		if _, ok := got[k]; !ok {
			t.Errorf("%s not installed with the daemon", k)
		}
	}
	policy, _ := daemonNodePolicy(*base.DaemonSubject)
	if cond := policy.Spec.MatchConditions[0].Expression; !strings.Contains(cond, `"system:serviceaccount:ns:kruise-daemon"`) {
		t.Errorf("match condition %s does not name the daemon's service account", cond)
	}
	for _, v := range policy.Spec.Validations {
		if v.Reason == nil || *v.Reason != "Forbidden" {
			t.Errorf("validation %q answers %v, want Forbidden", v.Expression, v.Reason)
		}
	}
}
