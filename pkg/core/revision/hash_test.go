package revision

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func checkHashForm(t *testing.T, h string) {
	t.Helper()
	if h == "" || len(h) > 10 || strings.Trim(h, safeAlphabet) != "" {
		t.Errorf("hash %q is not 1-10 characters of %q", h, safeAlphabet)
	}
}

func TestHash(t *testing.T) {
	base := Input{Template: baseTemplate()}
	tests := []struct {
		name     string
		a, b     Input
		ca, cb   *int32
		wantSame bool
	}{
		{name: "deep copies hash alike", a: base, b: Input{Template: baseTemplate()}, wantSame: true},
		{name: "nil and zero collision count hash alike", a: base, b: base, cb: ptr.To[int32](0), wantSame: true},
		{name: "collision count salts the hash", a: base, b: base, cb: ptr.To[int32](1)},
		{name: "different collision counts differ", a: base, b: base, ca: ptr.To[int32](1), cb: ptr.To[int32](2)},
		{name: "image change", a: base, b: withImage("registry.example/app:1.1")},
		{name: "volume claim templates are not hashed", a: base, b: Input{Template: baseTemplate(), VolumeClaimTemplates: claimTemplates()}, wantSame: true},
		{name: "nil and empty claim templates hash alike", a: base,
			b: Input{Template: baseTemplate(), VolumeClaimTemplates: []corev1.PersistentVolumeClaim{}}, wantSame: true},
		{name: "label value change", a: base, b: func() Input {
			tpl := baseTemplate()
			tpl.Labels["tier"] = "back"
			return Input{Template: tpl}
		}()},
		{name: "nil template hashes like an empty one", a: Input{}, b: Input{Template: &corev1.PodTemplateSpec{}}, wantSame: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ha, hb := Hash(tt.a, tt.ca), Hash(tt.b, tt.cb)
			checkHashForm(t, ha)
			checkHashForm(t, hb)
			if (ha == hb) != tt.wantSame {
				t.Errorf("Hash = %q and %q, want same: %v", ha, hb, tt.wantSame)
			}
		})
	}
}

// manyKeys builds a map by inserting n keys in the given direction, so that two calls differ in
// insertion order (and so, in Go, in internal layout and iteration order).
func manyKeys(prefix string, n int, reverse bool) map[string]string {
	m := map[string]string{}
	for i := range n {
		k := i
		if reverse {
			k = n - 1 - i
		}
		m[fmt.Sprintf("%s/k%03d", prefix, k)] = fmt.Sprint(k)
	}
	return m
}

func mapOrderTemplate(reverse bool) *corev1.PodTemplateSpec {
	tpl := baseTemplate()
	tpl.Labels = manyKeys("l.example", 40, reverse)
	tpl.Annotations = manyKeys("a.example", 40, reverse)
	tpl.Spec.NodeSelector = manyKeys("n.example", 40, reverse)
	limits := corev1.ResourceList{}
	for i := range 20 {
		k := i
		if reverse {
			k = 19 - i
		}
		limits[corev1.ResourceName(fmt.Sprintf("example.com/dev%02d", k))] = resource.MustParse(fmt.Sprint(k + 1))
	}
	tpl.Spec.Containers[0].Resources.Limits = limits
	return tpl
}

func TestHashIgnoresMapOrder(t *testing.T) {
	want := Hash(Input{Template: mapOrderTemplate(false)}, ptr.To[int32](3))
	for i := range 50 {
		if got := Hash(Input{Template: mapOrderTemplate(i%2 == 1)}, ptr.To[int32](3)); got != want {
			t.Fatalf("attempt %d: Hash = %q, want %q", i, got, want)
		}
	}
}

const helperEnv = "REVISION_HASH_HELPER"

// TestHashHelperProcess prints the hash of mapOrderTemplate when run by
// TestHashIsStableAcrossProcesses; otherwise it does nothing.
func TestHashHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("helper for TestHashIsStableAcrossProcesses")
	}
	fmt.Printf("hash=%s\n", Hash(Input{Template: mapOrderTemplate(true), VolumeClaimTemplates: claimTemplates()}, ptr.To[int32](2)))
}

func TestHashIsStableAcrossProcesses(t *testing.T) {
	want := Hash(Input{Template: mapOrderTemplate(false), VolumeClaimTemplates: claimTemplates()}, ptr.To[int32](2))
	for i := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHashHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper process %d: %v\n%s", i, err, out)
		}
		if !strings.Contains(string(out), "hash="+want+"\n") {
			t.Fatalf("helper process %d printed %q, want hash=%s", i, out, want)
		}
	}
}

// Integers beyond 2^53 keep their value in the revision (docs/openkruise.md, a deliberate
// difference: OpenKruise reads the template back as float64, where 2^53 and 2^53+1 are one value).
func TestHashKeepsIntegersBeyond2To53(t *testing.T) {
	at := func(uid int64) Input {
		tpl := baseTemplate()
		tpl.Spec.SecurityContext.RunAsUser = ptr.To(uid)
		return Input{Template: tpl}
	}
	if Hash(at(1<<53), nil) == Hash(at(1<<53+1), nil) {
		t.Error("2^53 and 2^53+1 hash alike: the template lost precision")
	}
	data, err := encodeData(at(1<<53 + 1))
	if err != nil || !strings.Contains(string(data), `"runAsUser":9007199254740993`) {
		t.Errorf("revision data %s (%v), want runAsUser 9007199254740993 as written", data, err)
	}
}
