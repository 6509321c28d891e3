package access

import (
	"context"
	"errors"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// reviewer answers SubjectAccessReviews from a set of "user verb resource/subresource ns/name"
// grants, recording the reviews it saw.
func reviewer(grants map[string]bool, seen *[]authorizationv1.SubjectAccessReviewSpec, fail error) client.Client {
	return fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			sar := obj.(*authorizationv1.SubjectAccessReview)
			if fail != nil {
				return fail
			}
			*seen = append(*seen, sar.Spec)
			a := sar.Spec.ResourceAttributes
			key := sar.Spec.User + " " + a.Verb + " " + a.Resource + "/" + a.Subresource + " " + a.Namespace + "/" + a.Name
			sar.Status.Allowed = grants[key]
			return nil
		},
	}).Build()
}

func requestBy(user string, groups ...string) context.Context {
	return admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UserInfo: authenticationv1.UserInfo{Username: user, Groups: groups, Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a"}}}}})
}

var ppmResource = schema.GroupResource{Group: "apps.kruise.io", Resource: "podprobemarkers"}

func TestRequireRefusesTheMissingPermissionByName(t *testing.T) {
	var seen []authorizationv1.SubjectAccessReviewSpec
	c := &Checker{Client: reviewer(map[string]bool{"alice patch pods/ team/": true}, &seen, nil)}
	err := c.Require(requestBy("alice", "devs"), ppmResource, "m",
		Permission{Verb: "patch", Resource: "pods", Namespace: "team", Why: "marks"},
		Permission{Verb: "create", Resource: "pods", Subresource: "exec", Namespace: "team", Why: "spec.probes[0].probe.exec"})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("want 403, got %v", err)
	}
	for _, want := range []string{`user "alice" may not create pods/exec in namespace "team"`, "spec.probes[0].probe.exec", `podprobemarkers.apps.kruise.io "m"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if len(seen) != 2 || seen[0].Groups[0] != "devs" || seen[0].Extra["scopes"][0] != "a" {
		t.Errorf("reviews do not carry the requester: %+v", seen)
	}
}

func TestRequireAllowsWhatRBACAllows(t *testing.T) {
	var seen []authorizationv1.SubjectAccessReviewSpec
	c := &Checker{Client: reviewer(map[string]bool{"bob delete pods/ ns/web-0": true}, &seen, nil)}
	if err := c.Require(requestBy("bob"), ppmResource, "x", Permission{Verb: "delete", Resource: "pods", Namespace: "ns", Name: "web-0"}); err != nil {
		t.Fatal(err)
	}
}

func TestRequireFailsClosedWhenTheReviewFails(t *testing.T) {
	var seen []authorizationv1.SubjectAccessReviewSpec
	c := &Checker{Client: reviewer(nil, &seen, errors.New("connection refused"))}
	err := c.Require(requestBy("bob"), ppmResource, "x", Permission{Verb: "delete", Resource: "pods"})
	if !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), "retry") {
		t.Fatalf("want 503 asking to retry, got %v", err)
	}
}

func TestNilCheckerChecksNothing(t *testing.T) {
	var c *Checker
	if err := c.Require(context.Background(), ppmResource, "x", Permission{Verb: "delete", Resource: "pods"}); err != nil {
		t.Fatal(err)
	}
}
