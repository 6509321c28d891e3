package validating

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func nodeImageTag(tag string) v1beta1.NodeImageTagSpec {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return v1beta1.NodeImageTagSpec{Tag: tag, CreatedAt: &at, Version: 1}
}

func validNodeImageSpec() *v1beta1.NodeImageSpec {
	return &v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{
		"registry.local/app": {Tags: []v1beta1.NodeImageTagSpec{nodeImageTag("v1"), nodeImageTag("v2")}},
	}}
}

// manyImages is a spec with n images of one tag each.
func manyImages(n int) *v1beta1.NodeImageSpec {
	s := &v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{}}
	for i := range n {
		s.Images[fmt.Sprintf("registry.local/app-%d", i)] = v1beta1.NodeImageImageSpec{Tags: []v1beta1.NodeImageTagSpec{nodeImageTag("v1")}}
	}
	return s
}

func TestValidateNodeImageSpec(t *testing.T) {
	if errs := ValidateNodeImageSpec(validNodeImageSpec(), field.NewPath("spec")); len(errs) != 0 {
		t.Fatalf("a valid spec: %v", errs)
	}
	if errs := ValidateNodeImageSpec(manyImages(MaxNodeImageImages), field.NewPath("spec")); len(errs) != 0 {
		t.Fatalf("exactly %d images: %v", MaxNodeImageImages, errs)
	}
	const img = "spec.images[registry.local/app]"
	for name, c := range map[string]struct {
		spec  *v1beta1.NodeImageSpec
		field string
		typ   field.ErrorType
	}{
		"257 images": {manyImages(MaxNodeImageImages + 1), "spec.images", field.ErrorTypeTooMany},
		"no tags": {&v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{"registry.local/app": {}}},
			img + ".tags", field.ErrorTypeRequired},
		"empty tag": {&v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{
			"registry.local/app": {Tags: []v1beta1.NodeImageTagSpec{nodeImageTag("v1"), nodeImageTag("")}}}},
			img + ".tags[1].tag", field.ErrorTypeRequired},
		"duplicate tag": {&v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{
			"registry.local/app": {Tags: []v1beta1.NodeImageTagSpec{nodeImageTag("v1"), nodeImageTag("v2"), nodeImageTag("v1")}}}},
			img + ".tags[2].tag", field.ErrorTypeDuplicate},
		"no createdAt": {&v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{
			"registry.local/app": {Tags: []v1beta1.NodeImageTagSpec{nodeImageTag("v1"), {Tag: "v2"}}}}},
			img + ".tags[1].createdAt", field.ErrorTypeRequired},
	} {
		errs := ValidateNodeImageSpec(c.spec, field.NewPath("spec"))
		if len(errs) != 1 || errs[0].Field != c.field || errs[0].Type != c.typ {
			t.Errorf("%s: want one %s at %s, got %v", name, c.typ, c.field, errs)
		}
	}
}

func TestValidateNodeImageSpecUpdateRefusesOnlyNewProblems(t *testing.T) {
	p := field.NewPath("spec")
	// Stored while the webhook was off: 300 images, one of them with a duplicate tag and one
	// tag without createdAt.
	bad := func() *v1beta1.NodeImageSpec {
		s := manyImages(300)
		s.Images["registry.local/app-0"] = v1beta1.NodeImageImageSpec{Tags: []v1beta1.NodeImageTagSpec{
			nodeImageTag("a"), nodeImageTag("b"), nodeImageTag("a"), {Tag: "c"}}}
		return s
	}
	shrunk := bad()
	delete(shrunk.Images, "registry.local/app-1")
	img := shrunk.Images["registry.local/app-0"]
	img.Tags = img.Tags[1:] // the duplicate moves to another index: still the same problem
	shrunk.Images["registry.local/app-0"] = img
	if errs := ValidateNodeImageSpecUpdate(shrunk, bad(), p); len(errs) != 0 {
		t.Errorf("releasing tags of a stored invalid NodeImage is refused: %v", errs)
	}
	grown := bad()
	grown.Images["registry.local/new"] = v1beta1.NodeImageImageSpec{Tags: []v1beta1.NodeImageTagSpec{nodeImageTag("v1")}}
	if errs := ValidateNodeImageSpecUpdate(grown, bad(), p); len(errs) != 1 || errs[0].Type != field.ErrorTypeTooMany {
		t.Errorf("adding a 301st image: want TooMany, got %v", errs)
	}
	newDup := validNodeImageSpec()
	img = newDup.Images["registry.local/app"]
	img.Tags = append(img.Tags, nodeImageTag("v2"))
	newDup.Images["registry.local/app"] = img
	if errs := ValidateNodeImageSpecUpdate(newDup, validNodeImageSpec(), p); len(errs) != 1 || errs[0].Field != "spec.images[registry.local/app].tags[2].tag" {
		t.Errorf("a new duplicate tag: want it refused at its path, got %v", errs)
	}
}

// TestNodeImageValidatorBothVersions checks the webhook adapters: a valid NodeImage is admitted and
// an invalid one refused as Invalid, in both versions.
func TestNodeImageValidatorBothVersions(t *testing.T) {
	ctx := context.Background()
	empty := &v1beta1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	v := nodeImageValidator[*v1beta1.NodeImage]{}
	if _, err := v.ValidateCreate(ctx, empty); err != nil {
		t.Fatalf("an empty NodeImage (as the nodeimage controller creates it) is refused: %v", err)
	}
	full := empty.DeepCopy()
	full.Spec = *validNodeImageSpec()
	if _, err := v.ValidateUpdate(ctx, empty, full); err != nil {
		t.Fatalf("adding tags is refused: %v", err)
	}
	old := &v1alpha1.NodeImage{}
	if err := asV1beta1(full, old); err != nil {
		t.Fatal(err)
	}
	va := nodeImageValidator[*v1alpha1.NodeImage]{}
	if _, err := va.ValidateCreate(ctx, old); err != nil {
		t.Fatalf("the same NodeImage as v1alpha1 is refused: %v", err)
	}
	bad := old.DeepCopy()
	bad.Spec.Images["registry.local/app"].Tags[0].CreatedAt = nil
	_, err := va.ValidateUpdate(ctx, old, bad)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("v1alpha1 update dropping createdAt: want Invalid, got %v", err)
	}
	if _, err := va.ValidateUpdate(ctx, bad, bad); err != nil {
		t.Fatalf("an update that keeps a stored problem is refused: %v", err)
	}
}
