package v1alpha1

import (
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/randfill"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// roundTripSeed fixes the random fill so that failures are reproducible.
const roundTripSeed = 20250101

// roundTripIterations is how many random objects each direction of each kind is tried with.
const roundTripIterations = 2000

// kindPair ties a spoke (v1alpha1) type to its hub (v1beta1) type.
type kindPair struct {
	name     string
	newSpoke func() conversion.Convertible
	newHub   func() conversion.Hub
}

var kindPairs = []kindPair{
	{
		name:     "StatefulSet",
		newSpoke: func() conversion.Convertible { return &StatefulSet{} },
		newHub:   func() conversion.Hub { return &v1beta1.StatefulSet{} },
	},
	{
		name:     "DaemonSet",
		newSpoke: func() conversion.Convertible { return &DaemonSet{} },
		newHub:   func() conversion.Hub { return &v1beta1.DaemonSet{} },
	},
	{
		name:     "SidecarSet",
		newSpoke: func() conversion.Convertible { return &SidecarSet{} },
		newHub:   func() conversion.Hub { return &v1beta1.SidecarSet{} },
	},
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
func spokeRoundTrip(t *testing.T, k kindPair, orig conversion.Convertible) {
	t.Helper()
	before := orig.DeepCopyObject()
	hub := k.newHub()
	if err := orig.ConvertTo(hub); err != nil {
		t.Fatalf("%s v1alpha1 -> v1beta1: %v", k.name, err)
	}
	if !equality.Semantic.DeepEqual(before, orig) {
		t.Fatalf("%s ConvertTo changed its source:\n%s", k.name, diff.Diff(before, orig))
	}
	hubBefore := hub.DeepCopyObject()
	back := k.newSpoke()
	if err := back.ConvertFrom(hub); err != nil {
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
func hubRoundTrip(t *testing.T, k kindPair, orig conversion.Hub) {
	t.Helper()
	before := orig.DeepCopyObject()
	spoke := k.newSpoke()
	if err := spoke.ConvertFrom(orig); err != nil {
		t.Fatalf("%s v1beta1 -> v1alpha1: %v", k.name, err)
	}
	if !equality.Semantic.DeepEqual(before, orig) {
		t.Fatalf("%s ConvertFrom changed its source:\n%s", k.name, diff.Diff(before, orig))
	}
	back := k.newHub()
	if err := spoke.ConvertTo(back); err != nil {
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
