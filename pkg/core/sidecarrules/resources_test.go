package sidecarrules

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/diff"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// res builds ResourceRequirements from "cpu=200m,memory=1Gi"-style lists; "" is no list.
func rpRes(limits, requests string) corev1.ResourceRequirements {
	list := func(s string) corev1.ResourceList {
		if s == "" {
			return nil
		}
		l := corev1.ResourceList{}
		for _, kv := range strings.Split(s, ",") {
			k, v, _ := strings.Cut(kv, "=")
			l[corev1.ResourceName(k)] = resource.MustParse(v)
		}
		return l
	}
	return corev1.ResourceRequirements{Limits: list(limits), Requests: list(requests)}
}

func rpApp(name, limits, requests string) corev1.Container {
	return corev1.Container{Name: name, Image: name + ":1", Resources: rpRes(limits, requests)}
}

func rpNativeApp(name, limits, requests string) corev1.Container {
	c := rpApp(name, limits, requests)
	c.RestartPolicy = ptrTo(corev1.ContainerRestartPolicyAlways)
	return c
}

func rpPolicy(mode v1beta1.SidecarSetTargetContainersMode, regex string, limits, requests *v1beta1.SidecarSetResourceExprs) *v1beta1.SidecarSetResourcesPolicy {
	return &v1beta1.SidecarSetResourcesPolicy{
		TargetContainersNameRegex: regex,
		TargetContainersMode:      mode,
		ResourcesExpr:             v1beta1.SidecarSetResourcesExpr{Limits: limits, Requests: requests},
	}
}

func rpExprs(cpu, memory string) *v1beta1.SidecarSetResourceExprs {
	return &v1beta1.SidecarSetResourceExprs{CPU: cpu, Memory: memory}
}

// describe lists resources as "limits{cpu=300m memory=180Mi} requests{...}", quantities by String.
func rpDescribe(r corev1.ResourceRequirements) string {
	one := func(l corev1.ResourceList) string {
		if l == nil {
			return "-"
		}
		var parts []string
		for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := l[n]; ok {
				parts = append(parts, string(n)+"="+q.String())
			}
		}
		if len(parts) != len(l) {
			parts = append(parts, "+others")
		}
		return "{" + strings.Join(parts, " ") + "}"
	}
	s := "limits" + one(r.Limits) + " requests" + one(r.Requests)
	if len(r.Claims) > 0 {
		s += " claims"
	}
	return s
}

// TestResourcesPolicyTargets: which of the pod's containers a resourcesPolicy reads.
func TestResourcesPolicyTargets(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{
			rpApp("plain-init", "", ""), rpNativeApp("native-proxy", "", ""), rpNativeApp("kruise-init", "", ""),
		},
		Containers: []corev1.Container{
			rpApp("large-engine-v4", "", ""), rpApp("large-engine-v8", "", ""), rpApp("kruise-log", "", ""), rpApp("web", "", ""),
		},
	}}
	other := newSet("other", sidecar("kruise-log", "log:1"))
	other.Spec.InitContainers = []v1beta1.SidecarSetContainer{nativeSidecar("kruise-init", "i:1")}
	sets := []*v1beta1.SidecarSet{newSet("mine", sidecar("mesh", "mesh:1")), other}
	cases := []struct {
		regex string
		want  string // target names, or "err:<substring>"
	}{
		// native sidecars first, then containers; plain init containers and the containers
		// named like any injected SidecarSet's (init) containers never count
		{".*", "native-proxy large-engine-v4 large-engine-v8 web"},
		{"", "native-proxy large-engine-v4 large-engine-v8 web"},
		// the expression matches anywhere in the name (regexp.MatchString)
		{"engine", "large-engine-v4 large-engine-v8"},
		{"v4", "large-engine-v4"},
		{"^large.engine.v4$", "large-engine-v4"},
		{"^engine", "err:no container of the pod matches"},
		{"init", "err:no container of the pod matches"},
		{"kruise", "err:no container of the pod matches"},
		{"proxy|web", "native-proxy web"},
		{"(", "err:invalid regular expression"},
	}
	for _, tc := range cases {
		targets, err := policyTargets(pod, sets, tc.regex)
		got := ""
		if err != nil {
			got = "err:" + err.Error()
		} else {
			for _, c := range targets {
				got = strings.TrimSpace(got + " " + c.Name)
			}
		}
		if strings.HasPrefix(tc.want, "err:") {
			if !strings.Contains(got, strings.TrimPrefix(tc.want, "err:")) {
				t.Errorf("regex %q: %s, want %s", tc.regex, got, tc.want)
			}
		} else if got != tc.want {
			t.Errorf("regex %q: %s, want %s", tc.regex, got, tc.want)
		}
	}
}

// TestResourcesPolicyCombine: sum and max, an unset limit making the combined limit unlimited,
// an unset request counting as 0; results in the formats OpenKruise's arithmetic gives.
func TestResourcesPolicyCombine(t *testing.T) {
	full1 := rpApp("a", "cpu=200m,memory=200Mi", "cpu=50m,memory=100Mi")
	full2 := rpApp("b", "cpu=400m,memory=400Mi", "cpu=100m,memory=200Mi")
	noCPULimit := rpApp("c", "memory=400Mi", "cpu=50m,memory=200Mi")
	noRequests := rpApp("d", "cpu=100m,memory=150Mi", "")
	nothing := rpApp("e", "", "")
	cases := []struct {
		name    string
		targets []corev1.Container
		mode    v1beta1.SidecarSetTargetContainersMode
		want    string
	}{
		{"sum", []corev1.Container{full1, full2}, "sum",
			"limits{cpu=600m memory=600Mi} requests{cpu=150m memory=300Mi}"},
		{"max", []corev1.Container{full1, full2}, "max",
			"limits{cpu=400m memory=400Mi} requests{cpu=100m memory=200Mi}"},
		{"sum, one target without a cpu limit", []corev1.Container{full1, noCPULimit}, "sum",
			"limits{memory=600Mi} requests{cpu=100m memory=300Mi}"},
		{"max, one target without a cpu limit", []corev1.Container{full2, noCPULimit}, "max",
			"limits{memory=400Mi} requests{cpu=100m memory=200Mi}"},
		{"sum, one target without requests", []corev1.Container{full1, noRequests}, "sum",
			"limits{cpu=300m memory=350Mi} requests{cpu=50m memory=100Mi}"},
		{"max, one target without requests", []corev1.Container{noRequests, full1}, "max",
			"limits{cpu=200m memory=200Mi} requests{cpu=50m memory=100Mi}"},
		{"no target sets anything", []corev1.Container{nothing}, "sum", "limits{} requests{}"},
		{"max of nothing", []corev1.Container{nothing}, "max", "limits{} requests{}"},
		{"an unknown mode combines nothing", []corev1.Container{full1}, "avg", "limits{} requests{}"},
	}
	for _, tc := range cases {
		var targets []*corev1.Container
		for i := range tc.targets {
			targets = append(targets, &tc.targets[i])
		}
		limits, requests := combineResources(targets, tc.mode)
		if got := rpDescribe(corev1.ResourceRequirements{Limits: limits, Requests: requests}); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestResourcesPolicyResources: the sidecar's resources from a policy: the proposal's stories,
// unlimited limits, empty expressions, and what the result replaces.
func TestResourcesPolicyResources(t *testing.T) {
	v4 := rpApp("large-engine-v4", "cpu=200m,memory=200Mi", "cpu=50m,memory=100Mi")
	v8 := rpApp("large-engine-v8", "cpu=400m,memory=400Mi", "cpu=100m,memory=200Mi")
	v8NoCPULimit := rpApp("large-engine-v8", "memory=400Mi", "cpu=100m,memory=200Mi")
	story := rpExprs("max(cpu*50%, 50m)", "200Mi")
	storyReq := rpExprs("max(cpu*50%, 50m)", "100Mi")
	cases := []struct {
		name       string
		containers []corev1.Container
		policy     *v1beta1.SidecarSetResourcesPolicy
		want       string // rpDescribe(...) or "err:<substring>"
	}{
		{"story 1: one container by name", []corev1.Container{v4, v8},
			rpPolicy("sum", "^large-engine-v4$", story, storyReq),
			"limits{cpu=100m memory=200Mi} requests{cpu=50m memory=100Mi}"},
		{"story 2: sum", []corev1.Container{v4, v8},
			rpPolicy("sum", "^large-engine-v.*$", story, storyReq),
			"limits{cpu=300m memory=200Mi} requests{cpu=75m memory=100Mi}"},
		{"story 3: max", []corev1.Container{v4, v8},
			rpPolicy("max", "^large-engine-v.*$", story, storyReq),
			"limits{cpu=200m memory=200Mi} requests{cpu=50m memory=100Mi}"},
		{"story 4: an unlimited target leaves the limit unset", []corev1.Container{v4, v8NoCPULimit},
			rpPolicy("max", "^large-engine-v.*$", story, storyReq),
			"limits{memory=200Mi} requests{cpu=50m memory=100Mi}"},
		{"every limit unlimited: no limits at all", []corev1.Container{rpApp("x", "", "cpu=1")},
			rpPolicy("sum", ".*", rpExprs("cpu", "memory"), rpExprs("cpu*50%", "")),
			"limits- requests{cpu=500m}"},
		{"requests of targets without requests are 0", []corev1.Container{rpApp("x", "cpu=1", "")},
			rpPolicy("sum", ".*", nil, rpExprs("cpu*50%", "max(memory*10%, 64Mi)")),
			"limits- requests{cpu=0 memory=64Mi}"},
		{"only the resources named get a value", []corev1.Container{v4},
			rpPolicy("sum", ".*", rpExprs("", "memory*2"), nil),
			"limits{memory=400Mi} requests-"},
		{"no expression at all", []corev1.Container{v4},
			rpPolicy("sum", ".*", rpExprs("", ""), nil),
			"limits- requests-"},
		{"an error names the field", []corev1.Container{v4},
			rpPolicy("sum", ".*", nil, rpExprs("", "memory*memory")),
			`err:resourcesExpr.requests.memory "memory*memory": multiplication of two quantities`},
		{"a negative result refuses", []corev1.Container{v4},
			rpPolicy("sum", ".*", rpExprs("cpu - 1", ""), nil),
			`err:resourcesExpr.limits.cpu "cpu - 1": calculation result is negative: -800m`},
		{"an unlimited limit is not evaluated, so it cannot fail", []corev1.Container{rpApp("x", "", "")},
			rpPolicy("sum", ".*", rpExprs("cpu - 1", ""), nil),
			"limits- requests-"},
		{"no target refuses", []corev1.Container{v4},
			rpPolicy("sum", "^db$", story, nil),
			`err:targetContainersNameRegex "^db$": no container of the pod matches`},
	}
	for _, tc := range cases {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: tc.containers}}
		before := pod.DeepCopy()
		r, err := policyResources(pod, nil, tc.policy)
		got := rpDescribe(r)
		if err != nil {
			got = "err:" + err.Error()
		}
		if strings.HasPrefix(tc.want, "err:") {
			if err == nil || !strings.Contains(got, strings.TrimPrefix(tc.want, "err:")) {
				t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
			}
		} else if got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		if !equality.Semantic.DeepEqual(pod, before) {
			t.Errorf("%s: the pod changed", tc.name)
		}
	}
}

// TestInjectResourcesPolicy: pod × SidecarSets → pod spec, with resourcesPolicy.
func TestInjectResourcesPolicy(t *testing.T) {
	engines := func() *corev1.Pod {
		p := appPod()
		p.Spec.Containers = []corev1.Container{
			rpApp("large-engine-v4", "cpu=200m,memory=200Mi", "cpu=50m,memory=100Mi"),
			rpApp("large-engine-v8", "cpu=400m,memory=400Mi", "cpu=100m,memory=200Mi"),
		}
		return p
	}
	withPolicy := func(c v1beta1.SidecarSetContainer, p *v1beta1.SidecarSetResourcesPolicy) v1beta1.SidecarSetContainer {
		c.ResourcesPolicy = p
		return c
	}
	// injected is the pod container c becomes, with resources r.
	injected := func(c v1beta1.SidecarSetContainer, r corev1.ResourceRequirements) corev1.Container {
		out := injectedContainer(c)
		out.Resources = r
		return out
	}
	sum := rpPolicy("sum", "^large-engine-v.*$", rpExprs("max(cpu*50%, 50m)", "200Mi"), rpExprs("max(cpu*50%, 50m)", "100Mi"))
	mesh := withPolicy(sidecar("mesh", "mesh:1"), sum)
	sumResources := rpRes("cpu=300m,memory=200Mi", "cpu=75m,memory=100Mi")
	meshAll := withPolicy(sidecar("mesh", "mesh:1"),
		rpPolicy("sum", "^large-engine", rpExprs("max(cpu*50%, 50m)", "200Mi"), rpExprs("max(cpu*50%, 50m)", "100Mi")))

	cases := []struct {
		name     string
		pod      func() *corev1.Pod
		sets     func() []*v1beta1.SidecarSet
		want     func(*corev1.PodSpec)
		injected []string // nil: just "s"
	}{{
		name: "the sidecar gets the resources its policy computes",
		pod:  engines,
		sets: func() []*v1beta1.SidecarSet { return []*v1beta1.SidecarSet{newSet("s", mesh)} },
		want: func(s *corev1.PodSpec) {
			s.Containers = append([]corev1.Container{injected(mesh, sumResources)}, s.Containers...)
		},
	}, {
		name: "the computed resources replace the sidecar's own, claims too",
		pod:  engines,
		sets: func() []*v1beta1.SidecarSet {
			c := mesh
			c.Resources = rpRes("cpu=1,ephemeral-storage=1Gi", "cpu=1")
			c.Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
			return []*v1beta1.SidecarSet{newSet("s", c)}
		},
		want: func(s *corev1.PodSpec) {
			c := mesh
			c.Resources = rpRes("cpu=1,ephemeral-storage=1Gi", "cpu=1")
			c.Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
			s.Containers = append([]corev1.Container{injected(c, sumResources)}, s.Containers...)
		},
	}, {
		name: "another SidecarSet's sidecar, in the pod already, is no target; nor are its init containers",
		pod: func() *corev1.Pod {
			p := engines()
			p.Spec.Containers = append(p.Spec.Containers, rpApp("large-engine-log", "cpu=8,memory=8Gi", "cpu=8,memory=8Gi"))
			p.Spec.InitContainers = []corev1.Container{rpNativeApp("large-engine-init", "cpu=8,memory=8Gi", "cpu=8")}
			return p
		},
		sets: func() []*v1beta1.SidecarSet {
			log := newSet("log", sidecar("large-engine-log", "log:2"))
			log.Spec.InitContainers = []v1beta1.SidecarSetContainer{nativeSidecar("large-engine-init", "init:2")}
			return []*v1beta1.SidecarSet{newSet("s", mesh), log}
		},
		want: func(s *corev1.PodSpec) {
			s.Containers[2] = injectedContainer(sidecar("large-engine-log", "log:2"))
			s.InitContainers[0] = injectedContainer(nativeSidecar("large-engine-init", "init:2"))
			s.Containers = append([]corev1.Container{injected(mesh, sumResources)}, s.Containers...)
		},
		injected: []string{"log", "s"},
	}, {
		name: "the pod's native sidecars are targets, its plain init containers are not",
		pod: func() *corev1.Pod {
			p := engines()
			p.Spec.InitContainers = []corev1.Container{
				rpApp("large-engine-setup", "cpu=8,memory=8Gi", "cpu=8,memory=8Gi"),
				rpNativeApp("large-engine-proxy", "cpu=1,memory=1Gi", "cpu=150m,memory=100Mi"),
			}
			return p
		},
		sets: func() []*v1beta1.SidecarSet { return []*v1beta1.SidecarSet{newSet("s", meshAll)} },
		want: func(s *corev1.PodSpec) {
			s.Containers = append([]corev1.Container{
				injected(meshAll, rpRes("cpu=800m,memory=200Mi", "cpu=150m,memory=100Mi")),
			}, s.Containers...)
		},
	}, {
		name: "a native sidecar of the SidecarSet gets its resources too",
		pod:  engines,
		sets: func() []*v1beta1.SidecarSet {
			s := newSet("s")
			s.Spec.InitContainers = []v1beta1.SidecarSetContainer{withPolicy(nativeSidecar("proxy", "proxy:1"),
				rpPolicy("max", "engine", rpExprs("cpu", "memory*50%"), rpExprs("cpu*10%", "memory")))}
			return []*v1beta1.SidecarSet{s}
		},
		want: func(s *corev1.PodSpec) {
			c := nativeSidecar("proxy", "proxy:1")
			c.ResourcesPolicy = rpPolicy("max", "engine", rpExprs("cpu", "memory*50%"), rpExprs("cpu*10%", "memory"))
			s.InitContainers = append(s.InitContainers, injected(c, rpRes("cpu=400m,memory=200Mi", "cpu=10m,memory=200Mi")))
		},
	}, {
		name: "a limit unlimited in the targets is unset in the sidecar",
		pod: func() *corev1.Pod {
			p := engines()
			delete(p.Spec.Containers[1].Resources.Limits, corev1.ResourceCPU)
			return p
		},
		sets: func() []*v1beta1.SidecarSet { return []*v1beta1.SidecarSet{newSet("s", mesh)} },
		want: func(s *corev1.PodSpec) {
			s.Containers = append([]corev1.Container{
				injected(mesh, rpRes("memory=200Mi", "cpu=75m,memory=100Mi")),
			}, s.Containers...)
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.injected == nil {
				tc.injected = []string{"s"}
			}
			runSpecCase(t, tc.pod, tc.sets(), Options{}, tc.want, tc.injected)
		})
	}
}

// TestInjectResourcesPolicyHotUpgrade: both copies of a hot-upgrade sidecar get the resources.
func TestInjectResourcesPolicyHotUpgrade(t *testing.T) {
	pod := appPod()
	pod.Spec.Containers[0].Resources = rpRes("cpu=2,memory=1Gi", "cpu=1,memory=512Mi")
	c := sidecar("mesh", "mesh:1")
	c.ResourcesPolicy = rpPolicy("sum", ".*", rpExprs("cpu/4", "memory/4"), rpExprs("cpu/10", "memory/8"))
	c.UpgradeStrategy = v1beta1.SidecarSetContainerUpgradeStrategy{
		UpgradeType: v1beta1.SidecarSetHotUpgrade, HotUpgradeEmptyImage: "empty:1"}
	out, err := Inject(pod, []*v1beta1.SidecarSet{newSet("s", c)}, Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range out.Pod.Spec.Containers {
		got = append(got, c.Name+" "+rpDescribe(c.Resources))
	}
	want := "mesh-1 limits{cpu=500m memory=256Mi} requests{cpu=100m memory=64Mi}; " +
		"mesh-2 limits{cpu=500m memory=256Mi} requests{cpu=100m memory=64Mi}; " +
		"app limits{cpu=2 memory=1Gi} requests{cpu=1 memory=512Mi}"
	if strings.Join(got, "; ") != want {
		t.Errorf("containers:\n%s\nwant\n%s", strings.Join(got, "; "), want)
	}
}

// TestInjectResourcesPolicyRefuses: a policy that fails refuses the pod, naming the SidecarSet
// and the field; the inputs are left alone.
func TestInjectResourcesPolicyRefuses(t *testing.T) {
	cases := []struct {
		name   string
		set    func() *v1beta1.SidecarSet
		errMsg string
	}{{
		name: "no target",
		set: func() *v1beta1.SidecarSet {
			c := sidecar("mesh", "mesh:1")
			c.ResourcesPolicy = rpPolicy("sum", "^db$", rpExprs("cpu", ""), nil)
			return newSet("mesh-set", sidecar("log", "log:1"), c)
		},
		errMsg: `SidecarSet mesh-set: spec.containers[1].resourcesPolicy.targetContainersNameRegex "^db$": no container of the pod matches`,
	}, {
		name: "an expression that fails on the pod",
		set: func() *v1beta1.SidecarSet {
			c := nativeSidecar("proxy", "proxy:1")
			c.ResourcesPolicy = rpPolicy("sum", ".*", nil, rpExprs("cpu*cpu", ""))
			s := newSet("proxy-set")
			s.Spec.InitContainers = []v1beta1.SidecarSetContainer{c}
			return s
		},
		errMsg: `SidecarSet proxy-set: spec.initContainers[0].resourcesPolicy.resourcesExpr.requests.cpu "cpu*cpu": multiplication of two quantities`,
	}, {
		name: "a negative result",
		set: func() *v1beta1.SidecarSet {
			c := sidecar("mesh", "mesh:1")
			c.ResourcesPolicy = rpPolicy("max", "app", nil, rpExprs("", "memory - 1Gi"))
			return newSet("mesh-set", c)
		},
		errMsg: `SidecarSet mesh-set: spec.containers[0].resourcesPolicy.resourcesExpr.requests.memory "memory - 1Gi": calculation result is negative`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := appPod()
			pod.Spec.Containers[0].Resources = rpRes("cpu=1,memory=512Mi", "cpu=500m,memory=256Mi")
			set := tc.set()
			podBefore, setBefore := pod.DeepCopy(), set.DeepCopy()
			out, err := Inject(pod, []*v1beta1.SidecarSet{set}, Options{Now: testNow})
			if err == nil || !strings.Contains(err.Error(), tc.errMsg) {
				t.Fatalf("Inject = %v, %v; want the error %q", out, err, tc.errMsg)
			}
			if !equality.Semantic.DeepEqual(pod, podBefore) || !equality.Semantic.DeepEqual(set, setBefore) {
				t.Errorf("Inject modified its inputs:\n%s", diff.Diff(podBefore, pod))
			}
		})
	}
}
