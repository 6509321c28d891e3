package conversionhub

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// TestConversionThroughWebhook sends ConversionReviews through the conversion webhook's handler,
// with both versions in the scheme, to check that the hub and spokes are registered the way the
// handler expects and that the v1beta1-only fields survive the trip over the wire.
func TestConversionThroughWebhook(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	handler, err := Handler(scheme)
	if err != nil {
		t.Fatal(err)
	}

	review := func(desired string, obj runtime.Object) []byte {
		t.Helper()
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(&apiextensionsv1.ConversionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
			Request: &apiextensionsv1.ConversionRequest{
				UID:               "1",
				DesiredAPIVersion: desired,
				Objects:           []runtime.RawExtension{{Raw: raw}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/convert", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		var out apiextensionsv1.ConversionReview
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("decoding response %q: %v", rec.Body.String(), err)
		}
		if out.Response == nil || out.Response.Result.Status != metav1.StatusSuccess || len(out.Response.ConvertedObjects) != 1 {
			t.Fatalf("conversion failed: %s", rec.Body.String())
		}
		return out.Response.ConvertedObjects[0].Raw
	}

	stored := &v1beta1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: v1beta1.StatefulSetSpec{
			Replicas:        ptr.To[int32](3),
			Selector:        &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			ReserveOrdinals: []intstr.IntOrString{intstr.FromInt32(1)},
		},
		Status: v1beta1.StatefulSetStatus{Replicas: 3, UpdatedReadyReplicas: 3},
	}
	alphaRaw := review("apps.kruise.io/v1alpha1", stored)
	var alpha v1alpha1.StatefulSet
	if err := json.Unmarshal(alphaRaw, &alpha); err != nil {
		t.Fatal(err)
	}
	if alpha.APIVersion != "apps.kruise.io/v1alpha1" || alpha.Kind != "StatefulSet" {
		t.Fatalf("converted object has TypeMeta %+v", alpha.TypeMeta)
	}
	if got, want := alpha.Annotations[v1alpha1.ConversionV1beta1OnlyAnnotation], `{"spec":{"reserveOrdinals":[1]},"status":{"updatedReadyReplicas":3}}`; got != want {
		t.Fatalf("annotation %s:\n got %s\nwant %s", v1alpha1.ConversionV1beta1OnlyAnnotation, got, want)
	}

	betaRaw := review("apps.kruise.io/v1beta1", &alpha)
	var back v1beta1.StatefulSet
	if err := json.Unmarshal(betaRaw, &back); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(stored, &back) {
		t.Fatalf("round trip through the webhook differs:\n%s", diff.Diff(stored, &back))
	}
}
