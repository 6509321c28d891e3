package inplace

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/randfill"
)

const propertyRuns = 400

var (
	labelPool      = []string{"app", "tier", "k1", "k2", "controller-revision-hash", "apps.kruise.io/x"}
	annotationPool = []string{"config", "a1", "a2", "lifecycle.apps.kruise.io/state", "apps.kruise.io/inplace-update-grace"}
)

// TestPlanPropertyAllowedChangesStayInPlace: any mix of image, label, annotation and QoS-preserving
// CPU/memory changes is planned in place, and applying the UpdateSpec to the old template yields the
// new one (up to managed keys).
func TestPlanPropertyAllowedChangesStayInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < propertyRuns; i++ {
		oldT := randomTemplate(rng)
		newT := oldT.DeepCopy()
		for n := 1 + rng.IntN(6); n > 0; n-- {
			mutateAllowed(rng, newT)
		}
		d := Plan(oldT, newT, "r", Options{VerticalScaling: true, EnvFromMetadata: true})
		if !d.InPlace() {
			t.Fatalf("run %d: allowed changes planned as %s\nold %v\nnew %v", i, render(d), oldT, newT)
		}
		got := applySpec(oldT, d.Spec)
		dropManaged(got)
		want := newT.DeepCopy()
		dropManaged(want)
		if !equality.Semantic.DeepEqual(got, want) {
			t.Fatalf("run %d: applying %s to old does not give new:\n got %v\nwant %v", i, render(d), got, want)
		}
	}
}

// TestPlanPropertyDisallowedChangeRecreates: one change outside the allowed fields, even mixed with
// allowed ones, always recreates, with a reason naming the changed field.
func TestPlanPropertyDisallowedChangeRecreates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	filler := randfill.NewWithSeed(5).NilChance(0.1).NumElements(1, 2).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(1+c.Int63n(1<<20), resource.DecimalSI)
		})
	seen := map[string]bool{}
	for i := 0; i < propertyRuns; i++ {
		oldT := randomTemplate(rng)
		newT := oldT.DeepCopy()
		for n := rng.IntN(3); n > 0; n-- {
			mutateAllowed(rng, newT)
		}
		vs := rng.IntN(2) == 0
		path := mutateDisallowed(rng, filler, newT, vs)
		if path == "" {
			continue // the filler produced an equal value; nothing to check
		}
		seen[strings.SplitN(path, "[", 2)[0]] = true
		d := Plan(oldT, newT, "r", Options{VerticalScaling: vs, EnvFromMetadata: true})
		if d.InPlace() || !hasReasonFor(d.RecreateReasons, path) {
			t.Fatalf("run %d: changing %s (VerticalScaling=%v) planned as %s", i, path, vs, render(d))
		}
	}
	for _, p := range []string{"metadata.", "spec.", "spec.containers"} {
		found := false
		for s := range seen {
			found = found || strings.HasPrefix(s, p)
		}
		if !found {
			t.Errorf("no disallowed change under %s was exercised: %v", p, seen)
		}
	}
}

func hasReasonFor(reasons []string, path string) bool {
	for _, r := range reasons {
		if strings.HasPrefix(r, path) {
			return true
		}
	}
	return false
}

// randomTemplate builds 1–4 containers of one QoS class, random metadata from the pools, and env vars
// reading some of those keys.
func randomTemplate(rng *rand.Rand) *corev1.PodTemplateSpec {
	t := &corev1.PodTemplateSpec{}
	t.Labels = randomMeta(rng, labelPool)
	t.Annotations = randomMeta(rng, annotationPool)
	qos := rng.IntN(3)
	for i, n := 0, 1+rng.IntN(4); i < n; i++ {
		c := corev1.Container{Name: fmt.Sprintf("c%d", i), Image: fmt.Sprintf("img%d:%d", i, rng.IntN(5))}
		switch qos {
		case 0: // Guaranteed
			c.Resources = resources("", fmt.Sprintf("%dm", 100+rng.IntN(900)), "", fmt.Sprintf("%dMi", 64+rng.IntN(900)))
		case 1: // Burstable: every container has a CPU request below its limit
			v := 100 + rng.IntN(900)
			c.Resources = resources(fmt.Sprintf("%dm", v), fmt.Sprintf("%dm", 2*v), "", "")
		}
		if rng.IntN(2) == 0 {
			c.Env = append(c.Env, corev1.EnvVar{Name: "L", ValueFrom: fieldRef("metadata.labels['" + pick(rng, labelPool) + "']")})
		}
		if rng.IntN(2) == 0 {
			c.Env = append(c.Env, corev1.EnvVar{Name: "A", ValueFrom: fieldRef("metadata.annotations['" + pick(rng, annotationPool) + "']")})
		}
		t.Spec.Containers = append(t.Spec.Containers, c)
	}
	return t
}

func randomMeta(rng *rand.Rand, pool []string) map[string]string {
	if rng.IntN(4) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, k := range pool {
		if rng.IntN(2) == 0 {
			m[k] = fmt.Sprint(rng.IntN(3))
		}
	}
	return m
}

func pick(rng *rand.Rand, pool []string) string { return pool[rng.IntN(len(pool))] }

// mutateAllowed applies one random change of an allowed kind: an image, a label or annotation (set or
// delete), or a QoS-preserving CPU/memory change.
func mutateAllowed(rng *rand.Rand, t *corev1.PodTemplateSpec) {
	c := &t.Spec.Containers[rng.IntN(len(t.Spec.Containers))]
	switch rng.IntN(4) {
	case 0:
		c.Image = fmt.Sprintf("other:%d", rng.IntN(5))
	case 1:
		t.Labels = mutateMeta(rng, t.Labels, labelPool)
	case 2:
		t.Annotations = mutateMeta(rng, t.Annotations, annotationPool)
	case 3:
		v := 100 + rng.IntN(900)
		if _, ok := c.Resources.Requests[corev1.ResourceCPU]; ok { // Burstable
			c.Resources = resources(fmt.Sprintf("%dm", v), fmt.Sprintf("%dm", 2*v), "", "")
		} else if _, ok := c.Resources.Limits[corev1.ResourceCPU]; ok { // Guaranteed
			c.Resources = resources("", fmt.Sprintf("%dm", v), "", fmt.Sprintf("%dMi", v))
		}
	}
}

func mutateMeta(rng *rand.Rand, m map[string]string, pool []string) map[string]string {
	k := pick(rng, pool)
	if rng.IntN(3) == 0 {
		delete(m, k)
		return m
	}
	if m == nil {
		m = map[string]string{}
	}
	m[k] = fmt.Sprint(rng.IntN(3))
	return m
}

// mutateDisallowed changes one thing outside the allowed fields and returns the reason prefix naming it,
// or "" when the random value happened to equal the old one.
func mutateDisallowed(rng *rand.Rand, f *randfill.Filler, t *corev1.PodTemplateSpec, vs bool) string {
	c := &t.Spec.Containers[rng.IntN(len(t.Spec.Containers))]
	cpath := "spec.containers[" + c.Name + "]"
	switch rng.IntN(5) {
	case 0:
		return fillRandomField(rng, f, reflect.ValueOf(&t.ObjectMeta).Elem(), "metadata", "labels", "annotations")
	case 1:
		return fillRandomField(rng, f, reflect.ValueOf(&t.Spec).Elem(), "spec", "containers")
	case 2:
		return fillRandomField(rng, f, reflect.ValueOf(c).Elem(), cpath, "name", "image", "resources")
	case 3:
		return mutateContainerList(rng, t)
	default:
		if !vs {
			c.Resources = resources("1", "3", "", "")
			return cpath + ".resources changed"
		}
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		c.Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
		return cpath + ".resources.requests[ephemeral-storage] changed"
	}
}

// fillRandomField sets one random exported field of the struct v, other than skip, to a random value.
func fillRandomField(rng *rand.Rand, f *randfill.Filler, v reflect.Value, prefix string, skip ...string) string {
	var fields []int
	for i := 0; i < v.NumField(); i++ {
		if sf := v.Type().Field(i); sf.IsExported() && !contains(skip, jsonName(sf)) {
			fields = append(fields, i)
		}
	}
	i := fields[rng.IntN(len(fields))]
	p := reflect.New(v.Field(i).Type())
	f.Fill(p.Interface())
	if equality.Semantic.DeepEqual(p.Elem().Interface(), v.Field(i).Interface()) {
		return ""
	}
	v.Field(i).Set(p.Elem())
	return prefix + "." + jsonName(v.Type().Field(i)) + " changed"
}

// mutateContainerList adds, removes, renames or reorders containers.
func mutateContainerList(rng *rand.Rand, t *corev1.PodTemplateSpec) string {
	cs := t.Spec.Containers
	switch {
	case rng.IntN(3) == 0:
		t.Spec.Containers = append(cs, corev1.Container{Name: "extra", Image: "x"})
	case len(cs) > 1 && rng.IntN(2) == 0:
		i := rng.IntN(len(cs) - 1)
		cs[i], cs[i+1] = cs[i+1], cs[i]
	case len(cs) > 1 && rng.IntN(2) == 0:
		t.Spec.Containers = cs[1:]
	default:
		cs[rng.IntN(len(cs))].Name = "renamed"
	}
	return "spec.containers: "
}

// applySpec is what the engine will do to a pod: apply the UpdateSpec's changes to it.
func applySpec(t *corev1.PodTemplateSpec, s *UpdateSpec) *corev1.PodTemplateSpec {
	t = t.DeepCopy()
	for i := range t.Spec.Containers {
		c := &t.Spec.Containers[i]
		if img, ok := s.ContainerImages[c.Name]; ok {
			c.Image = img
		}
		if r, ok := s.ContainerResources[c.Name]; ok {
			c.Resources = r
		}
	}
	t.Labels = applyMeta(t.Labels, s.Labels)
	t.Annotations = applyMeta(t.Annotations, s.Annotations)
	return t
}

func applyMeta(m map[string]string, diff map[string]*string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	for k, v := range diff {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = *v
		}
	}
	return m
}

func dropManaged(t *corev1.PodTemplateSpec) {
	for _, m := range []map[string]string{t.Labels, t.Annotations} {
		for k := range m {
			if ManagedKey(k) {
				delete(m, k)
			}
		}
	}
}
