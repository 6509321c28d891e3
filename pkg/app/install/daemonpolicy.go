package install

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// DaemonNodePolicy names the ValidatingAdmissionPolicy (and its binding) that binds what
// kruise-daemon writes to its own node.
const DaemonNodePolicy = "kruise-daemon-node-binding"

// NodeNameExtra is the user-info extra that the API server sets from a service-account token bound
// to a pod (the pod's node) or to a node.
const NodeNameExtra = "authentication.kubernetes.io/node-name"

// daemonNodePolicy is a ValidatingAdmissionPolicy that lets subject (kruise-daemon) write only the
// objects of the node named in its token: pods (and their status) on that node, the node's
// NodeImage and NodePodProbe, and ContainerRecreateRequests labelled with that node. RBAC cannot scope pods to a
// node; the API server's admission can. Writes without a node in the token are refused too, so a
// daemon credential that is not bound to its node does nothing.
func daemonNodePolicy(subject rbacv1.Subject) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	user := subject.Name
	if subject.Kind == rbacv1.ServiceAccountKind {
		user = "system:serviceaccount:" + subject.Namespace + ":" + subject.Name
	}
	writes := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete}
	rule := func(group string, resources ...string) admissionregistrationv1.NamedRuleWithOperations {
		return admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: writes, Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: resources}}}
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: DaemonNodePolicy},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				rule("", "pods", "pods/status"),
				rule(v1alpha1.GroupVersion.Group, "nodeimages", "nodeimages/status", "nodepodprobes", "nodepodprobes/status",
					"containerrecreaterequests", "containerrecreaterequests/status"),
			}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "kruise-daemon",
				Expression: fmt.Sprintf("request.userInfo.username == %q", user)}},
			Variables: []admissionregistrationv1.Variable{
				{Name: "node", Expression: fmt.Sprintf("%q in request.userInfo.extra && size(request.userInfo.extra[%q]) == 1 ? request.userInfo.extra[%q][0] : ''",
					NodeNameExtra, NodeNameExtra, NodeNameExtra)},
				{Name: "target", Expression: "request.operation == 'DELETE' ? oldObject : object"},
				{Name: "targetNode", Expression: fmt.Sprintf(`request.resource.resource == 'pods' ? (has(variables.target.spec.nodeName) ? variables.target.spec.nodeName : '') :
request.resource.resource in ['nodeimages', 'nodepodprobes'] ? variables.target.metadata.name :
(has(variables.target.metadata.labels) && %q in variables.target.metadata.labels ? variables.target.metadata.labels[%q] : '')`,
					v1alpha1.ContainerRecreateRequestNodeNameKey, v1alpha1.ContainerRecreateRequestNodeNameKey)},
			},
			Validations: []admissionregistrationv1.Validation{
				{Expression: "variables.node != ''", Reason: ptr.To(metav1.StatusReasonForbidden),
					Message: "kruise-daemon writes only with a service-account token bound to its pod or node (the token names the node); this credential names none"},
				{Expression: "variables.targetNode == variables.node", Reason: ptr.To(metav1.StatusReasonForbidden),
					MessageExpression: "'kruise-daemon of node ' + variables.node + ' may not write ' + request.resource.resource + ' ' + request.name + ' of node \"' + variables.targetNode + '\"'"},
			},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: DaemonNodePolicy},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: DaemonNodePolicy,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}
	return policy, binding
}
