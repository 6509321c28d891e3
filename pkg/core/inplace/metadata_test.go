package inplace

import "testing"

// Keys Kruise writes on live pods stay out of the metadata diff; the labels a UnitedDeployment
// writes into its subsets' pod templates follow the template in place.
func TestManagedKey(t *testing.T) {
	for key, managed := range map[string]bool{
		"controller-revision-hash":                true,
		"apps.kruise.io/inplace-update-state":     true,
		"lifecycle.apps.kruise.io/state":          true,
		"apps.kruise.io/controller-revision-hash": false,
		"apps.kruise.io/subset-name":              false,
		"app":                                     false,
	} {
		if got := ManagedKey(key); got != managed {
			t.Errorf("ManagedKey(%q) = %v, want %v", key, got, managed)
		}
	}
}
