package compat

import (
	"encoding/json"
	"testing"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
)

// astsInplaceApplied is what a user applied for the Advanced StatefulSet asts-inplace of
// OpenKruise v1.9.0's takeover fixture (its last-applied-configuration). OpenKruise named the
// revision of this template asts-inplace-7ccdb8894d, and asts-inplace-6df997b48c that of the
// same with image example.com/app:v2 (test/compat checks the whole stored objects).
const astsInplaceApplied = `{"apiVersion":"apps.kruise.io/v1beta1","kind":"StatefulSet","metadata":{"annotations":{},"name":"asts-inplace","namespace":"takeover"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"asts-inplace"}},"serviceName":"asts-inplace","template":{"metadata":{"labels":{"app":"asts-inplace"}},"spec":{"containers":[{"image":"example.com/app:v1","name":"app"}],"readinessGates":[{"conditionType":"InPlaceUpdateReady"}],"terminationGracePeriodSeconds":0}},"updateStrategy":{"rollingUpdate":{"partition":1,"podUpdatePolicy":"InPlaceIfPossible"},"type":"RollingUpdate"},"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Mi"}},"storageClassName":""}}]}}`

// A StatefulSet defaulted by Kruise, in either version, gets OpenKruise's revision names: an
// Advanced StatefulSet's revision is its pod template alone (no claim templates recorded).
func TestStatefulSetRevisionNamesAsOpenKruise(t *testing.T) {
	for image, want := range map[string]string{
		"example.com/app:v1": "asts-inplace-7ccdb8894d",
		"example.com/app:v2": "asts-inplace-6df997b48c",
	} {
		t.Run(image, func(t *testing.T) {
			beta := &v1beta1.StatefulSet{}
			if err := json.Unmarshal([]byte(astsInplaceApplied), beta); err != nil {
				t.Fatal(err)
			}
			beta.Spec.Template.Spec.Containers[0].Image = image
			defaults.SetDefaultsStatefulSetV1beta1(beta)
			defaults.SetDefaultsStatefulSetTemplateV1beta1(beta)
			if got := revision.Name(beta.Name, revision.Hash(revision.Input{Template: &beta.Spec.Template}, nil)); got != want {
				t.Errorf("v1beta1: revision name = %s, want %s", got, want)
			}

			alpha := &v1alpha1.StatefulSet{}
			if err := json.Unmarshal([]byte(astsInplaceApplied), alpha); err != nil {
				t.Fatal(err)
			}
			alpha.Spec.Template.Spec.Containers[0].Image = image
			defaults.SetDefaultsStatefulSet(alpha)
			defaults.SetDefaultsStatefulSetTemplate(alpha)
			if got := revision.Name(alpha.Name, revision.Hash(revision.Input{Template: &alpha.Spec.Template}, nil)); got != want {
				t.Errorf("v1alpha1: revision name = %s, want %s", got, want)
			}
		})
	}
}
