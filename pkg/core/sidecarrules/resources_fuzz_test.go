package sidecarrules

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

var rpExprSeeds = []string{
	"max(cpu*50%, 50m)", "max(memory*25%, 100Mi)", "min(max(max(max(0.5,0.5*cpu),cpu-1.0),cpu-1.0),3.0)",
	"0.5*cpu - 0.3*max(0, cpu-4) + 0.3*max(0, cpu-8)", "cpu*cpu", "2/cpu", "cpu/0", "-(1-3)", "1e400",
	"1e400 - 1e400 + cpu", "100n", "5\x00x", "2\xa0+\xa03", "5\xdb\xb5Mi", "1e3m", ".5Gi", "(((cpu)))",
	"memory - 1Gi", "MEMORY", "cpu + memory", "", " ", "max(cpu)", "foo(1, 2)", "9223372036854775807Pi * cpu",
}

// FuzzResourceExpr: parsing never panics on any string, nor does evaluation, with any input;
// they agree with each other, are deterministic and leave their input alone; what evaluation
// admits at injection is never negative.
func FuzzResourceExpr(f *testing.F) {
	for _, s := range rpExprSeeds {
		f.Add(s, int64(1500), false)
		f.Add(s, int64(1<<40), true)
	}
	f.Fuzz(func(t *testing.T, s string, milli int64, binary bool) {
		format := resource.DecimalSI
		if binary {
			format = resource.BinarySI
		}
		e, perr := ParseResourceExpr(s)
		if _, again := ParseResourceExpr(s); (again == nil) != (perr == nil) {
			t.Fatalf("ParseResourceExpr(%q) is not deterministic", s)
		}
		if perr == nil && e.String() != s {
			t.Fatalf("String() = %q, want %q", e.String(), s)
		}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if err := ValidateResourceExpr(s, name); perr != nil && s != "" && err == nil {
				t.Fatalf("ValidateResourceExpr(%q) accepts what ParseResourceExpr refuses: %v", s, perr)
			}
		}
		if perr == nil {
			for _, vars := range []map[string]exprValue{
				{"cpu": {isQty: true, q: *resource.NewMilliQuantity(milli, format)}},
				{"memory": {n: float64(milli)}},
				nil,
			} {
				_, _ = e.eval(vars)
			}
		}
		in := *resource.NewMilliQuantity(milli, format)
		before := in.DeepCopy()
		q, err := evalPolicyExpr(s, in)
		q2, err2 := evalPolicyExpr(s, in)
		if (err == nil) != (err2 == nil) || (err == nil && (q.Cmp(q2) != 0 || q.String() != q2.String())) {
			t.Fatalf("evalPolicyExpr(%q) is not deterministic", s)
		}
		if perr != nil && err == nil {
			t.Fatalf("evalPolicyExpr(%q) accepts what ParseResourceExpr refuses: %v", s, perr)
		}
		if err == nil && q.Sign() < 0 {
			t.Fatalf("evalPolicyExpr(%q, %s) = %s, negative", s, in.String(), q.String())
		}
		if in.Cmp(before) != 0 || in.String() != before.String() {
			t.Fatalf("evalPolicyExpr(%q) changed its input", s)
		}
	})
}

// FuzzInjectResourcesPolicy: Inject with a resourcesPolicy of any expressions, regular expression
// and mode, on a pod of any cpu and memory, never panics, leaves its inputs alone, and gives the
// sidecar only cpu and memory, never negative.
func FuzzInjectResourcesPolicy(f *testing.F) {
	f.Add(".*", "sum", "max(cpu*50%, 50m)", "200Mi", "cpu*10%", "memory/2", int64(1500), int64(1<<30), true)
	f.Add("^app$", "max", "cpu - 1", "memory*memory", "", "", int64(-5), int64(0), false)
	f.Add("(", "avg", "", "", "cpu", "memory", int64(0), int64(1), true)
	f.Fuzz(func(t *testing.T, regex, mode, limCPU, limMem, reqCPU, reqMem string, cpuMilli, memMilli int64, limited bool) {
		pod := appPod()
		pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewMilliQuantity(memMilli, resource.BinarySI),
		}
		if limited {
			pod.Spec.Containers[0].Resources.Limits = pod.Spec.Containers[0].Resources.Requests.DeepCopy()
		}
		pod.Spec.InitContainers = []corev1.Container{rpNativeApp("proxy", "cpu=100m", "memory=10Mi")}
		c := sidecar("mesh", "mesh:1")
		c.ResourcesPolicy = rpPolicy(v1beta1.SidecarSetTargetContainersMode(mode), regex, rpExprs(limCPU, limMem), rpExprs(reqCPU, reqMem))
		sets := []*v1beta1.SidecarSet{newSet("s", c)}
		podBefore, setBefore := pod.DeepCopy(), sets[0].DeepCopy()
		out, err := Inject(pod, sets, Options{Now: testNow})
		if !equality.Semantic.DeepEqual(pod, podBefore) || !equality.Semantic.DeepEqual(sets[0], setBefore) {
			t.Fatalf("Inject modified its inputs")
		}
		if err != nil {
			return
		}
		for _, got := range out.Pod.Spec.Containers {
			if got.Name != "mesh" {
				continue
			}
			for _, list := range []corev1.ResourceList{got.Resources.Limits, got.Resources.Requests} {
				for name, q := range list {
					if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
						t.Fatalf("the sidecar got %s", name)
					}
					if q.Sign() < 0 {
						t.Fatalf("the sidecar got %s=%s", name, q.String())
					}
				}
			}
		}
	})
}
