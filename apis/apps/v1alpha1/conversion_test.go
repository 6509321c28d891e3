package v1alpha1

import (
	"math/rand"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/randfill"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// roundTripSeed fixes the random fill so that failures are reproducible.
const roundTripSeed = 20250101

// roundTripIterations is how many random objects each direction of each kind is tried with.
const roundTripIterations = 2000

// kindPair ties a spoke (v1alpha1) type to its hub (v1beta1) type and their conversions.
type kindPair struct {
	name     string
	newSpoke func() runtime.Object
	newHub   func() runtime.Object
	to       func(spoke, hub runtime.Object) error
	from     func(hub, spoke runtime.Object) error
}

// pair is the kindPair of spoke type S and hub type H.
func pair[S interface {
	runtime.Object
	ConvertTo(H) error
	ConvertFrom(H) error
}, H runtime.Object](name string, newSpoke func() S, newHub func() H) kindPair {
	return kindPair{name: name, newSpoke: func() runtime.Object { return newSpoke() }, newHub: func() runtime.Object { return newHub() },
		to:   func(s, h runtime.Object) error { return s.(S).ConvertTo(h.(H)) },
		from: func(h, s runtime.Object) error { return s.(S).ConvertFrom(h.(H)) }}
}

var kindPairs = []kindPair{
	pair("StatefulSet", func() *StatefulSet { return &StatefulSet{} }, func() *v1beta1.StatefulSet { return &v1beta1.StatefulSet{} }),
	pair("DaemonSet", func() *DaemonSet { return &DaemonSet{} }, func() *v1beta1.DaemonSet { return &v1beta1.DaemonSet{} }),
	pair("SidecarSet", func() *SidecarSet { return &SidecarSet{} }, func() *v1beta1.SidecarSet { return &v1beta1.SidecarSet{} }),
}

// fillFuncs keeps randomly filled values to what the API server can hold: sane object metadata,
// label selectors and quantities (from apimachinery's meta fuzzer) and IntOrStrings whose unused
// half is empty, as they are after JSON decoding.
func fillFuncs(codecs runtimeserializer.CodecFactory) []interface{} {
	return []interface{}{
		func(v *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*v = intstr.FromInt32(c.Int31())
			} else {
				*v = intstr.FromString(c.String(0))
			}
		},
	}
}

func newFiller(src rand.Source) *randfill.Filler {
	scheme := runtime.NewScheme()
	codecs := runtimeserializer.NewCodecFactory(scheme)
	return fuzzer.FuzzerFor(fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, fillFuncs), src, codecs)
}

// spokeRoundTrip converts a v1alpha1 object to v1beta1 and back and reports any difference from
// the original. It also checks that neither conversion changed its source.
func spokeRoundTrip(t *testing.T, k kindPair, orig runtime.Object) {
	t.Helper()
	before := orig.DeepCopyObject()
	hub := k.newHub()
	if err := k.to(orig, hub); err != nil {
		t.Fatalf("%s v1alpha1 -> v1beta1: %v", k.name, err)
	}
	if !equality.Semantic.DeepEqual(before, orig) {
		t.Fatalf("%s ConvertTo changed its source:\n%s", k.name, diff.Diff(before, orig))
	}
	hubBefore := hub.DeepCopyObject()
	back := k.newSpoke()
	if err := k.from(hub, back); err != nil {
		t.Fatalf("%s v1beta1 -> v1alpha1: %v", k.name, err)
	}
	if !equality.Semantic.DeepEqual(hubBefore, hub) {
		t.Fatalf("%s ConvertFrom changed its source:\n%s", k.name, diff.Diff(hubBefore, hub))
	}
	if !equality.Semantic.DeepEqual(orig, back) {
		t.Fatalf("%s v1alpha1 -> v1beta1 -> v1alpha1 differs (- original, + round trip):\n%s", k.name, diff.Diff(orig, back))
	}
}

// hubRoundTrip converts a v1beta1 object to v1alpha1 and back and reports any difference from the
// original.
func hubRoundTrip(t *testing.T, k kindPair, orig runtime.Object) {
	t.Helper()
	before := orig.DeepCopyObject()
	spoke := k.newSpoke()
	if err := k.from(orig, spoke); err != nil {
		t.Fatalf("%s v1beta1 -> v1alpha1: %v", k.name, err)
	}
	if !equality.Semantic.DeepEqual(before, orig) {
		t.Fatalf("%s ConvertFrom changed its source:\n%s", k.name, diff.Diff(before, orig))
	}
	back := k.newHub()
	if err := k.to(spoke, back); err != nil {
		t.Fatalf("%s v1alpha1 -> v1beta1: %v", k.name, err)
	}
	if !equality.Semantic.DeepEqual(orig, back) {
		t.Fatalf("%s v1beta1 -> v1alpha1 -> v1beta1 differs (- original, + round trip):\n%s", k.name, diff.Diff(orig, back))
	}
}

// TestConversionRoundTripV1alpha1 fills v1alpha1 objects at random and checks that
// v1alpha1 -> v1beta1 -> v1alpha1 gives them back unchanged.
func TestConversionRoundTripV1alpha1(t *testing.T) {
	for _, k := range kindPairs {
		t.Run(k.name, func(t *testing.T) {
			f := newFiller(rand.NewSource(roundTripSeed))
			for i := 0; i < roundTripIterations; i++ {
				obj := k.newSpoke()
				f.Fill(obj)
				spokeRoundTrip(t, k, obj)
			}
		})
	}
}

// TestConversionRoundTripV1beta1 fills v1beta1 objects at random and checks that
// v1beta1 -> v1alpha1 -> v1beta1 gives them back unchanged, the v1beta1-only fields included.
func TestConversionRoundTripV1beta1(t *testing.T) {
	for _, k := range kindPairs {
		t.Run(k.name, func(t *testing.T) {
			f := newFiller(rand.NewSource(roundTripSeed))
			for i := 0; i < roundTripIterations; i++ {
				obj := k.newHub()
				f.Fill(obj)
				hubRoundTrip(t, k, obj)
			}
		})
	}
}

// fuzzRoundTrip fills one object of each version of every kind from data and round-trips both.
func fuzzRoundTrip(t *testing.T, data []byte) {
	for _, k := range kindPairs {
		f := randfill.NewFromGoFuzz(data).NilChance(.5).NumElements(0, 2).
			Funcs(metafuzzer.Funcs(runtimeserializer.NewCodecFactory(runtime.NewScheme()))...).
			Funcs(fillFuncs(runtimeserializer.CodecFactory{})...)
		spoke := k.newSpoke()
		f.Fill(spoke)
		spokeRoundTrip(t, k, spoke)
		hub := k.newHub()
		f.Fill(hub)
		hubRoundTrip(t, k, hub)
	}
}

// FuzzConversionRoundTrip is the native-fuzzing form of the round-trip tests; plain `go test` runs
// only its seed corpus.
func FuzzConversionRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("kruise"))
	f.Add([]byte{0xff, 0x00, 0x7f, 0x80, 0x01, 0xfe, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60})
	r := rand.New(rand.NewSource(roundTripSeed))
	for i := 0; i < 8; i++ {
		seed := make([]byte, 256)
		r.Read(seed)
		f.Add(seed)
	}
	f.Fuzz(fuzzRoundTrip)
}

// TestStatefulSetVersionOnlyFields shows where the v1beta1-only StatefulSet fields go in v1alpha1
// and that they come back.
func TestStatefulSetVersionOnlyFields(t *testing.T) {
	full := &v1beta1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Annotations: map[string]string{"keep": "me"}},
		Spec: v1beta1.StatefulSetSpec{
			Replicas:        ptr.To[int32](3),
			ServiceName:     "web",
			ReserveOrdinals: []intstr.IntOrString{intstr.FromInt32(1), intstr.FromString("4-6")},
			Lifecycle: &appspub.Lifecycle{
				PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"example.com/hold"}},
			},
			ScaleStrategy: &v1beta1.StatefulSetScaleStrategy{MaxUnavailable: ptr.To(intstr.FromString("10%"))},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
				WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			Ordinals: &appsv1.StatefulSetOrdinals{Start: 2},
			VolumeClaimUpdateStrategy: v1beta1.StatefulSetVolumeClaimUpdateStrategy{
				Type: v1beta1.OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy,
			},
		},
		Status: v1beta1.StatefulSetStatus{
			Replicas:                 3,
			UpdatedReadyReplicas:     2,
			UpdatedAvailableReplicas: 1,
			VolumeClaims: []v1beta1.StatefulSetVolumeClaimStatus{
				{VolumeClaimName: "data", CompatibleReplicas: 3, CompatibleReadyReplicas: 2},
			},
		},
	}
	specOnly := full.DeepCopy()
	specOnly.Status = v1beta1.StatefulSetStatus{Replicas: 3}
	specOnly.Spec.ReserveOrdinals = nil
	specOnly.Spec.Lifecycle = nil
	specOnly.Spec.ScaleStrategy = nil
	specOnly.Spec.PersistentVolumeClaimRetentionPolicy = nil
	specOnly.Spec.VolumeClaimUpdateStrategy = v1beta1.StatefulSetVolumeClaimUpdateStrategy{}
	common := specOnly.DeepCopy()
	common.Spec.Ordinals = nil

	cases := []struct {
		name string
		hub  *v1beta1.StatefulSet
		// want is the expected annotation on the v1alpha1 object; "" means no annotation.
		want string
	}{
		{
			name: "all v1beta1-only fields",
			hub:  full,
			want: `{"spec":{"reserveOrdinals":[1,"4-6"],"lifecycle":{"preDelete":{"finalizersHandler":["example.com/hold"]}},` +
				`"scaleStrategy":{"maxUnavailable":"10%"},"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Delete","whenScaled":"Retain"},` +
				`"ordinals":{"start":2},"volumeClaimUpdateStrategy":{"type":"OnPodRollingUpdate"}},` +
				`"status":{"updatedReadyReplicas":2,"updatedAvailableReplicas":1,"volumeClaims":[{"volumeClaimName":"data","compatibleReplicas":3,"compatibleReadyReplicas":2}]}}`,
		},
		{name: "one spec field", hub: specOnly, want: `{"spec":{"ordinals":{"start":2}}}`},
		{name: "common fields only", hub: common, want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			alpha := &StatefulSet{}
			if err := alpha.ConvertFrom(tc.hub); err != nil {
				t.Fatal(err)
			}
			checkAnnotation(t, alpha.Annotations, ConversionV1beta1OnlyAnnotation, tc.want)
			if alpha.Annotations["keep"] != "me" || *alpha.Spec.Replicas != 3 || alpha.Spec.ServiceName != "web" || alpha.Status.Replicas != 3 {
				t.Fatalf("common fields not carried over: %+v", alpha)
			}
			back := &v1beta1.StatefulSet{}
			if err := alpha.ConvertTo(back); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(tc.hub, back) {
				t.Fatalf("round trip differs:\n%s", diff.Diff(tc.hub, back))
			}
		})
	}
}

// TestStatefulSetEditThroughV1alpha1 checks that a client that only knows v1alpha1 can change the
// common fields without wiping the v1beta1-only ones.
func TestStatefulSetEditThroughV1alpha1(t *testing.T) {
	hub := &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{
		Replicas:        ptr.To[int32](2),
		ReserveOrdinals: []intstr.IntOrString{intstr.FromInt32(0)},
	}}
	alpha := &StatefulSet{}
	if err := alpha.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	alpha.Spec.Replicas = ptr.To[int32](5)
	alpha.Labels = map[string]string{"edited": "yes"}
	got := &v1beta1.StatefulSet{}
	if err := alpha.ConvertTo(got); err != nil {
		t.Fatal(err)
	}
	want := hub.DeepCopy()
	want.Spec.Replicas = ptr.To[int32](5)
	want.Labels = map[string]string{"edited": "yes"}
	if !equality.Semantic.DeepEqual(want, got) {
		t.Fatalf("unexpected result:\n%s", diff.Diff(want, got))
	}
}

// TestSidecarSetVersionOnlyFields shows where spec.namespace (v1alpha1 only) and
// spec.customVersion (v1beta1 only) go.
func TestSidecarSetVersionOnlyFields(t *testing.T) {
	t.Run("namespace rides on the v1beta1 object", func(t *testing.T) {
		alpha := &SidecarSet{
			ObjectMeta: metav1.ObjectMeta{Name: "log-agent"},
			Spec: SidecarSetSpec{
				Namespace:  "team-a",
				Containers: []SidecarSetContainer{{Container: corev1.Container{Name: "agent", Image: "agent:1"}}},
			},
		}
		hub := &v1beta1.SidecarSet{}
		if err := alpha.ConvertTo(hub); err != nil {
			t.Fatal(err)
		}
		checkAnnotation(t, hub.Annotations, ConversionV1alpha1OnlyAnnotation, `{"spec":{"namespace":"team-a"}}`)
		checkAnnotation(t, hub.Annotations, ConversionV1beta1OnlyAnnotation, "")
		// As OpenKruise converts it, so that OpenKruise (which does not read the annotation) and
		// every v1beta1 reader see the SidecarSet limited to its namespace.
		if want := NamespaceSelectorFor("team-a"); !equality.Semantic.DeepEqual(hub.Spec.NamespaceSelector, want) {
			t.Fatalf("namespaceSelector %v, want %v", hub.Spec.NamespaceSelector, want)
		}
		back := &SidecarSet{}
		if err := back.ConvertFrom(hub); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(alpha, back) {
			t.Fatalf("round trip differs:\n%s", diff.Diff(alpha, back))
		}
	})
	t.Run("customVersion is the v1alpha1 object's label, as OpenKruise converts it", func(t *testing.T) {
		hub := &v1beta1.SidecarSet{
			ObjectMeta: metav1.ObjectMeta{Name: "log-agent", Labels: map[string]string{"team": "a"}},
			Spec:       v1beta1.SidecarSetSpec{CustomVersion: "v2"},
		}
		alpha := &SidecarSet{}
		if err := alpha.ConvertFrom(hub); err != nil {
			t.Fatal(err)
		}
		if alpha.Labels[v1beta1.SidecarSetCustomVersionLabel] != "v2" || alpha.Labels["team"] != "a" || alpha.Annotations != nil {
			t.Fatalf("v1alpha1 labels %v, annotations %v; want the custom version label and no annotation", alpha.Labels, alpha.Annotations)
		}
		back := &v1beta1.SidecarSet{}
		if err := alpha.ConvertTo(back); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(hub, back) {
			t.Fatalf("round trip differs:\n%s", diff.Diff(hub, back))
		}
	})
	t.Run("a v1alpha1 label becomes spec.customVersion", func(t *testing.T) {
		alpha := &SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: "log-agent",
			Labels: map[string]string{v1beta1.SidecarSetCustomVersionLabel: "v3"}}}
		hub := &v1beta1.SidecarSet{}
		if err := alpha.ConvertTo(hub); err != nil {
			t.Fatal(err)
		}
		if hub.Spec.CustomVersion != "v3" || hub.Labels != nil {
			t.Fatalf("v1beta1 customVersion %q, labels %v", hub.Spec.CustomVersion, hub.Labels)
		}
	})
	t.Run("an earlier Kruise's annotation is still read", func(t *testing.T) {
		alpha := &SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: "log-agent",
			Annotations: map[string]string{ConversionV1beta1OnlyAnnotation: `{"spec":{"customVersion":"v1"}}`}}}
		hub := &v1beta1.SidecarSet{}
		if err := alpha.ConvertTo(hub); err != nil {
			t.Fatal(err)
		}
		if hub.Spec.CustomVersion != "v1" || hub.Annotations != nil {
			t.Fatalf("v1beta1 customVersion %q, annotations %v", hub.Spec.CustomVersion, hub.Annotations)
		}
	})
}

// TestConversionAnnotationEdgeCases covers a leftover annotation on the hub, a corrupt annotation
// and the destination's TypeMeta.
func TestConversionAnnotationEdgeCases(t *testing.T) {
	t.Run("leftover annotation on the hub is dropped", func(t *testing.T) {
		hub := &v1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{
			Annotations: map[string]string{ConversionV1beta1OnlyAnnotation: `{"spec":{"ordinals":{"start":9}}}`},
		}}
		alpha := &StatefulSet{}
		if err := alpha.ConvertFrom(hub); err != nil {
			t.Fatal(err)
		}
		if alpha.Annotations != nil {
			t.Fatalf("annotations = %v, want none", alpha.Annotations)
		}
	})
	t.Run("corrupt annotation is an error", func(t *testing.T) {
		alpha := &StatefulSet{ObjectMeta: metav1.ObjectMeta{
			Annotations: map[string]string{ConversionV1beta1OnlyAnnotation: `{"spec":`},
		}}
		if err := alpha.ConvertTo(&v1beta1.StatefulSet{}); err == nil {
			t.Fatal("want an error for a corrupt annotation")
		}
		hub := &v1beta1.SidecarSet{ObjectMeta: metav1.ObjectMeta{
			Annotations: map[string]string{ConversionV1alpha1OnlyAnnotation: `[]`},
		}}
		if err := (&SidecarSet{}).ConvertFrom(hub); err == nil {
			t.Fatal("want an error for a corrupt annotation")
		}
	})
	t.Run("TypeMeta of the destination is kept", func(t *testing.T) {
		alpha := &DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps.kruise.io/v1alpha1", Kind: "DaemonSet"}}
		hub := &v1beta1.DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps.kruise.io/v1beta1", Kind: "DaemonSet"}}
		if err := alpha.ConvertTo(hub); err != nil {
			t.Fatal(err)
		}
		if hub.APIVersion != "apps.kruise.io/v1beta1" || hub.Kind != "DaemonSet" {
			t.Fatalf("TypeMeta changed to %+v", hub.TypeMeta)
		}
	})
}

func checkAnnotation(t *testing.T, annotations map[string]string, key, want string) {
	t.Helper()
	got, ok := annotations[key]
	switch {
	case want == "" && ok:
		t.Fatalf("annotation %s = %s, want none", key, got)
	case want != "" && got != want:
		t.Fatalf("annotation %s:\n got %s\nwant %s", key, got, want)
	}
}
