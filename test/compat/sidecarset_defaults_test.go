package compat

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// OpenKruise's takeover fixture holds SidecarSet sc-log as OpenKruise v1.9.0 stored it after the
// user's apply (its last-applied-configuration) and a patch of the image to log:v2: the user's
// spec with log:v2, defaulted, is the stored spec, field for field.
func TestSetDefaultsSidecarSetV1beta1OpenKruiseFixture(t *testing.T) {
	user, stored := readSidecarSetFixture(t)
	defaults.SetDefaultsSidecarSetV1beta1(user)
	got, err := json.Marshal(user.Spec)
	if err != nil {
		t.Fatal(err)
	}
	var gotSpec any
	if err := json.Unmarshal(got, &gotSpec); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotSpec, stored) {
		want, _ := json.Marshal(stored)
		t.Errorf("defaulted spec differs from OpenKruise's stored spec\n got: %s\nwant: %s", got, want)
	}
}

// readSidecarSetFixture returns sc-log of OpenKruise's takeover fixture: the user's object and the
// stored spec as generic JSON (ReadSidecarSetFixture).
func readSidecarSetFixture(t *testing.T) (*v1beta1.SidecarSet, any) {
	t.Helper()
	fx, err := ReadSidecarSetFixture(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	user := &v1beta1.SidecarSet{}
	if err := json.Unmarshal(fx.Applied, user); err != nil {
		t.Fatalf("sc-log's last-applied-configuration: %v", err)
	}
	return user, fx.StoredSpec
}
