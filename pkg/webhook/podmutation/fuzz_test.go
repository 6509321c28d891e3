package podmutation

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kruise-ng/kruise/pkg/webhook/internal/webhookfuzz"
)

// Hand-written seeds beside the generic ones and the OpenKruise fixture's pods: pods a Kruise
// workload controls, with and without the gate, and pods of others.
var fuzzSamples = []string{
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns",
	  "ownerReferences":[{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"cs","uid":"u","controller":true}]},
	  "spec":{"containers":[{"name":"app","image":"app:v1"}]}}`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns",
	  "ownerReferences":[{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"cs","uid":"u","controller":true}]},
	  "spec":{"readinessGates":[{"conditionType":"KruisePodReady"},{"conditionType":"user/gate"}],"containers":[{"name":"app","image":"app:v1"}]}}`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns",
	  "ownerReferences":[{"apiVersion":"apps.kruise.io/v1/extra","kind":"CloneSet","name":"cs","uid":"u","controller":true},
	    {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"v"}]},
	  "spec":{"containers":[{"name":"app","image":"app:v1"}]}}`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"p-","namespace":"ns","annotations":{"apps.kruise.io/container-launch-priority":"Ordered"}},
	  "spec":{"containers":[{"name":"a","image":"app:v1"},{"name":"b","image":"app:v1","env":[{"name":"KRUISE_CONTAINER_BARRIER","value":"x"}]}]}}`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},
	  "spec":{"containers":[{"name":"a","image":"app:v1","env":[{"name":"KRUISE_CONTAINER_PRIORITY","value":"2"}]},{"name":"b","image":"app:v1","env":[{"name":"KRUISE_CONTAINER_PRIORITY","value":"x"}]}]}}`,
}

// The pod webhook answers any pod without panicking: allowed, with a patch that applies to the pod,
// or refused with an HTTP error code.
func FuzzPodReadinessWebhook(f *testing.F) {
	scheme := webhookfuzz.NewScheme(f)
	targets := webhookfuzz.Targets(f, scheme, func(srv webhook.Server) { Register(srv, scheme, nil) })
	webhookfuzz.Seed(f, targets, fuzzSamples...)
	f.Fuzz(func(t *testing.T, path string, update bool, obj, old []byte) {
		webhookfuzz.Check(t, targets, path, update, obj, old)
	})
}
