package validating

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-nodeimage,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=nodeimages,verbs=create;update,versions=v1alpha1,name=vnodeimage-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1beta1-nodeimage,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=nodeimages,verbs=create;update,versions=v1beta1,name=vnodeimage-v1beta1.apps.kruise.io,admissionReviewVersions=v1

// MaxNodeImageImages is how many images one NodeImage may list (as in OpenKruise).
const MaxNodeImageImages = v1beta1.MaxNodeImageImages

// registerNodeImages adds the NodeImage validating webhooks (both versions share a schema and are
// checked as v1beta1). Only the spec is checked: the daemons write the status subresource, which
// these webhooks do not intercept.
func registerNodeImages(srv webhook.Server, scheme *runtime.Scheme) {
	mount.Admission(srv, "/validate-apps-kruise-io-v1alpha1-nodeimage",
		admission.WithValidator[*v1alpha1.NodeImage](scheme, nodeImageValidator[*v1alpha1.NodeImage]{}))
	mount.Admission(srv, "/validate-apps-kruise-io-v1beta1-nodeimage",
		admission.WithValidator[*v1beta1.NodeImage](scheme, nodeImageValidator[*v1beta1.NodeImage]{}))
}

// nodeImageProblem is one rule a spec breaks, keyed by what it is about (image name, tag value,
// rule) rather than by index, so that an update can tell a problem it brings from one it keeps.
type nodeImageProblem struct {
	key string
	err *field.Error
}

// nodeImageProblems lists every rule spec breaks: at most MaxNodeImageImages images; each image
// has at least one tag; each tag is non-empty, unique within its image and has createdAt.
func nodeImageProblems(spec *v1beta1.NodeImageSpec, p *field.Path) []nodeImageProblem {
	var out []nodeImageProblem
	ip := p.Child("images")
	if n := len(spec.Images); n > MaxNodeImageImages {
		out = append(out, nodeImageProblem{key: "count", err: field.TooMany(ip, n, MaxNodeImageImages)})
	}
	for _, name := range slices.Sorted(maps.Keys(spec.Images)) {
		img := spec.Images[name]
		tp := ip.Key(name).Child("tags")
		if len(img.Tags) == 0 {
			out = append(out, nodeImageProblem{key: name + "\x00notags", err: field.Required(tp, "at least one tag")})
		}
		seen := map[string]bool{}
		for i, t := range img.Tags {
			at := tp.Index(i)
			switch {
			case t.Tag == "":
				out = append(out, nodeImageProblem{key: name + "\x00\x00empty",
					err: field.Required(at.Child("tag"), "the image tag")})
			case seen[t.Tag]:
				out = append(out, nodeImageProblem{key: name + "\x00" + t.Tag + "\x00dup",
					err: field.Duplicate(at.Child("tag"), t.Tag)})
			}
			seen[t.Tag] = true
			if t.CreatedAt == nil {
				out = append(out, nodeImageProblem{key: name + "\x00" + t.Tag + "\x00created",
					err: field.Required(at.Child("createdAt"), fmt.Sprintf("when tag %q was added", t.Tag))})
			}
		}
	}
	return out
}

// ValidateNodeImageSpec checks a NodeImage spec against every rule of nodeImageProblems.
func ValidateNodeImageSpec(spec *v1beta1.NodeImageSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, pr := range nodeImageProblems(spec, p) {
		errs = append(errs, pr.err)
	}
	return errs
}

// ValidateNodeImageSpecUpdate checks an update of a NodeImage spec: only the problems the update
// brings are refused, so that Kruise can still shrink (release tags of) or relabel a NodeImage
// stored while this webhook was off. More than MaxNodeImageImages images is refused only when
// the update adds images.
func ValidateNodeImageSpecUpdate(spec, old *v1beta1.NodeImageSpec, p *field.Path) field.ErrorList {
	had := map[string]bool{}
	for _, pr := range nodeImageProblems(old, p) {
		had[pr.key] = true
	}
	var errs field.ErrorList
	for _, pr := range nodeImageProblems(spec, p) {
		switch {
		case pr.key == "count" && len(spec.Images) <= len(old.Images):
		case pr.key != "count" && had[pr.key]:
		default:
			errs = append(errs, pr.err)
		}
	}
	return errs
}

// nodeImageValidator adapts ValidateNodeImageSpec and ValidateNodeImageSpecUpdate to
// controller-runtime for one version of NodeImage.
type nodeImageValidator[T client.Object] struct{}

// spec is obj's spec as v1beta1.
func (nodeImageValidator[T]) spec(obj T) (*v1beta1.NodeImageSpec, error) {
	ni := &v1beta1.NodeImage{}
	if err := asV1beta1(obj, ni); err != nil {
		return nil, err
	}
	return &ni.Spec, nil
}

// ValidateCreate rejects a new NodeImage that breaks a rule.
func (v nodeImageValidator[T]) ValidateCreate(_ context.Context, obj T) (admission.Warnings, error) {
	spec, err := v.spec(obj)
	if err != nil {
		return nil, err
	}
	return nil, invalid("NodeImage", obj.GetName(), ValidateNodeImageSpec(spec, field.NewPath("spec")))
}

// ValidateUpdate rejects an update that brings a problem the stored NodeImage did not have.
func (v nodeImageValidator[T]) ValidateUpdate(_ context.Context, oldObj, newObj T) (admission.Warnings, error) {
	spec, err := v.spec(newObj)
	if err != nil {
		return nil, err
	}
	old, err := v.spec(oldObj)
	if err != nil {
		return nil, err
	}
	return nil, invalid("NodeImage", newObj.GetName(), ValidateNodeImageSpecUpdate(spec, old, field.NewPath("spec")))
}

// ValidateDelete allows every deletion (the webhook is not registered for DELETE).
func (nodeImageValidator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}
