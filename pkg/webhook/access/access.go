package access

import (
	"context"
	"errors"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Permission is one right an object's author must hold, and what in the object needs it.
type Permission struct {
	Verb, Group, Resource, Subresource string
	// Namespace and Name narrow the right; empty means every namespace or every name.
	Namespace, Name string
	// Why names the field that makes Kruise use the right, e.g. "spec.probes[0].probe.exec".
	Why string
}

// String reads as RBAC does: `create pods/exec in namespace "team-a"`.
func (p Permission) String() string {
	res := p.Resource
	if p.Subresource != "" {
		res += "/" + p.Subresource
	}
	if p.Group != "" {
		res += "." + p.Group
	}
	s := p.Verb + " " + res
	if p.Name != "" {
		s += fmt.Sprintf(" %q", p.Name)
	}
	if p.Namespace != "" {
		s += fmt.Sprintf(" in namespace %q", p.Namespace)
	}
	return s
}

// Checker answers whether the requester of the admission request in ctx holds permissions.
type Checker struct {
	// Client creates the SubjectAccessReviews (kruise-manager's own client).
	Client client.Client
	// Mapper names the resource of a kind an object refers to (a WorkloadSpread's target).
	Mapper meta.RESTMapper
}

// Resource is the resource of apiVersion and kind, for a permission on an object referred to.
func (c *Checker) Resource(apiVersion, kind string) (schema.GroupResource, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupResource{}, err
	}
	m, err := c.Mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if err != nil {
		return schema.GroupResource{}, err
	}
	return m.Resource.GroupResource(), nil
}

// Require returns nil when the requester of the admission request in ctx holds every permission,
// else a 403 on the object (group, resource, name) naming the first missing one and why the
// object needs it; a review that cannot be made refuses the object (retry), never lets it pass.
// A nil Checker checks nothing (the manager's --admission-access-checks=false).
func (c *Checker) Require(ctx context.Context, object schema.GroupResource, name string, perms ...Permission) error {
	if c == nil || len(perms) == 0 {
		return nil
	}
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("checking the requester's permissions: %w", err))
	}
	user := req.UserInfo
	for _, p := range perms {
		allowed, reason, err := c.review(ctx, user, p)
		if err != nil {
			return apierrors.NewServiceUnavailable(fmt.Sprintf("could not check whether %s may %s (%v); retry", describe(user), p, err))
		}
		if !allowed {
			msg := fmt.Sprintf("%s may not %s, which %s makes Kruise do on your behalf", describe(user), p, p.Why)
			if reason != "" {
				msg += " (" + reason + ")"
			}
			return apierrors.NewForbidden(object, name, errors.New(msg))
		}
	}
	return nil
}

func (c *Checker) review(ctx context.Context, user authenticationv1.UserInfo, p Permission) (bool, string, error) {
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, Groups: user.Groups, UID: user.UID, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: p.Verb, Group: p.Group, Resource: p.Resource,
			Subresource: p.Subresource, Namespace: p.Namespace, Name: p.Name},
	}}
	if err := c.Client.Create(ctx, sar); err != nil {
		return false, "", err
	}
	return sar.Status.Allowed && !sar.Status.Denied, sar.Status.Reason, nil
}

func describe(user authenticationv1.UserInfo) string {
	if user.Username == "" {
		return "the requester"
	}
	return fmt.Sprintf("user %q", user.Username)
}
