package defaults

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// podLevel is what every pod template gets at pod level.
func podLevel(spec corev1.PodSpec) *corev1.PodSpec {
	spec.DNSPolicy = corev1.DNSClusterFirst
	spec.RestartPolicy = corev1.RestartPolicyAlways
	spec.SecurityContext = &corev1.PodSecurityContext{}
	spec.TerminationGracePeriodSeconds = i64(30)
	spec.SchedulerName = corev1.DefaultSchedulerName
	return &spec
}

// ctr is a container with the container-level defaults and the given pull policy.
func ctr(name, image string, pull corev1.PullPolicy) corev1.Container {
	return corev1.Container{Name: name, Image: image, ImagePullPolicy: pull,
		TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile}
}

func defaultedPodProbe(h corev1.ProbeHandler) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: h, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
}

func TestSetDefaultsPodTemplatePodLevel(t *testing.T) {
	explicit := &corev1.PodSpec{
		DNSPolicy: corev1.DNSDefault, RestartPolicy: corev1.RestartPolicyNever,
		SecurityContext:               &corev1.PodSecurityContext{RunAsUser: i64(1000)},
		TerminationGracePeriodSeconds: i64(0), SchedulerName: "other",
	}
	run(t, []tcase[corev1.PodSpec]{
		{name: "empty spec gets the pod-level defaults", in: &corev1.PodSpec{}, want: podLevel(corev1.PodSpec{})},
		{name: "explicit values (grace period 0 too) are kept", in: explicit, want: explicit.DeepCopy()},
		{
			// Kubernetes v1.37 aligns serviceAccount with serviceAccountName in SetDefaults_PodSpec;
			// in v1.32, which OpenKruise v1.9.0 builds with, that was conversion, not defaulting.
			name: "no serviceAccount alignment, no enableServiceLinks, no host-network host ports",
			in: &corev1.PodSpec{DeprecatedServiceAccount: "sa", HostNetwork: true,
				Containers: []corev1.Container{{Name: "a", Image: "app:v1", ImagePullPolicy: corev1.PullNever,
					Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}},
			want: func() *corev1.PodSpec {
				c := ctr("a", "app:v1", corev1.PullNever)
				c.Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}}
				return podLevel(corev1.PodSpec{DeprecatedServiceAccount: "sa", HostNetwork: true, Containers: []corev1.Container{c}})
			}(),
		},
	}, SetDefaultsPodTemplate, (*corev1.PodSpec).DeepCopy)
}

func TestSetDefaultsPodTemplatePullPolicy(t *testing.T) {
	images := []string{"app:v1", "app", "app:latest", "app@" + testDigest, "app:v1@" + testDigest, "app:latest@" + testDigest}
	var in, want corev1.PodSpec
	for _, image := range images {
		in.InitContainers = append(in.InitContainers, corev1.Container{Name: "i", Image: image})
		in.Containers = append(in.Containers, corev1.Container{Name: "c", Image: image})
		// Containers are updated in place, so they always pull.
		want.Containers = append(want.Containers, ctr("c", image, corev1.PullAlways))
	}
	// Init containers get Kubernetes' rule: Always for :latest or no tag and no digest.
	for i, pull := range []corev1.PullPolicy{corev1.PullIfNotPresent, corev1.PullAlways, corev1.PullAlways,
		corev1.PullIfNotPresent, corev1.PullIfNotPresent, corev1.PullAlways} {
		want.InitContainers = append(want.InitContainers, ctr("i", images[i], pull))
	}
	explicit := podLevel(corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "i", Image: "app", ImagePullPolicy: corev1.PullNever,
			TerminationMessagePath: "/tmp/msg", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}},
		Containers: []corev1.Container{{Name: "c", Image: "app:v1", ImagePullPolicy: corev1.PullIfNotPresent,
			TerminationMessagePath: "/tmp/msg", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}},
	})
	run(t, []tcase[corev1.PodSpec]{
		{name: "containers Always, init containers from the tag", in: &in, want: podLevel(want)},
		{name: "explicit pull policy and termination message kept", in: explicit, want: explicit.DeepCopy()},
	}, SetDefaultsPodTemplate, (*corev1.PodSpec).DeepCopy)
}

func TestPullPolicyForImage(t *testing.T) {
	always, ifNotPresent := corev1.PullAlways, corev1.PullIfNotPresent
	for image, want := range map[string]corev1.PullPolicy{
		"app": always, "app:latest": always, "app:v1": ifNotPresent, "app:LATEST": ifNotPresent,
		"library/app": always, "example.com/team/app": always, "example.com/team/app:v2": ifNotPresent,
		"localhost/app": always, "localhost:5000/app": always, "localhost:5000/app:1.0": ifNotPresent,
		"registry.example.com:5000/a/b/c:latest": always, "[::1]:5000/app": always, "Example.COM/app": always,
		"my_app.x__y-z---w":                always,
		"app@" + testDigest:                ifNotPresent, // digest, no tag
		"app:v1@" + testDigest:             ifNotPresent,
		"app:latest@" + testDigest:         always,
		"app:latest@sha256:abc":            ifNotPresent, // digest too short: the reference does not parse
		"app:latest@md5:" + testDigest[7:]: ifNotPresent, // unknown digest algorithm
		"App:latest":                       ifNotPresent, // upper-case repository: does not parse
		"":                                 ifNotPresent,
		"app:":                             ifNotPresent,
		testDigest[7:]:                     ifNotPresent, // a bare image ID
	} {
		if got := pullPolicyForImage(image); got != want {
			t.Errorf("pullPolicyForImage(%q) = %s, want %s", image, got, want)
		}
	}
}

func TestSetDefaultsPodTemplateContainerParts(t *testing.T) {
	fieldRef := func(v string) []corev1.EnvVar {
		return []corev1.EnvVar{{Name: "N", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			APIVersion: v, FieldPath: "metadata.name"}}}, {Name: "V", Value: "x"}}
	}
	httpGet := func(path string, scheme corev1.URIScheme) corev1.ProbeHandler {
		return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Scheme: scheme, Port: intstr.FromInt32(80)}}
	}
	grpc := corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000}}
	exec := corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}
	bare := func(c *corev1.Container) {
		c.Ports = []corev1.ContainerPort{{ContainerPort: 80}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP}}
		c.Env = fieldRef("")
		c.LivenessProbe = &corev1.Probe{ProbeHandler: httpGet("", "")}
		c.ReadinessProbe = &corev1.Probe{ProbeHandler: exec}
		c.StartupProbe = &corev1.Probe{ProbeHandler: grpc}
		c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{HTTPGet: httpGet("", "").HTTPGet},
			PreStop: &corev1.LifecycleHandler{Exec: exec.Exec}}
	}
	defaulted := func(c *corev1.Container) {
		c.Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP}}
		c.Env = fieldRef("v1")
		c.LivenessProbe = defaultedPodProbe(httpGet("/", corev1.URISchemeHTTP))
		c.ReadinessProbe = defaultedPodProbe(exec)
		c.StartupProbe = defaultedPodProbe(grpc) // gRPC service stays nil: a declarative default OpenKruise never applies
		c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{HTTPGet: httpGet("/", corev1.URISchemeHTTP).HTTPGet},
			PreStop: &corev1.LifecycleHandler{Exec: exec.Exec}}
	}
	in := corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i", Image: "app:v1"}},
		Containers:          []corev1.Container{{Name: "c", Image: "app:v1"}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e", Image: "dbg"}}}}
	bare(&in.InitContainers[0])
	bare(&in.Containers[0])
	bare((*corev1.Container)(&in.EphemeralContainers[0].EphemeralContainerCommon))
	want := corev1.PodSpec{InitContainers: []corev1.Container{ctr("i", "app:v1", corev1.PullIfNotPresent)},
		Containers: []corev1.Container{ctr("c", "app:v1", corev1.PullAlways)},
		// Ephemeral containers get no pull policy and no termination message.
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e", Image: "dbg"}}}}
	defaulted(&want.InitContainers[0])
	defaulted(&want.Containers[0])
	defaulted((*corev1.Container)(&want.EphemeralContainers[0].EphemeralContainerCommon))

	explicit := podLevel(corev1.PodSpec{Containers: []corev1.Container{ctr("c", "app", corev1.PullNever)}})
	c := &explicit.Containers[0]
	c.Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolSCTP}}
	c.Env = fieldRef("v2")
	c.LivenessProbe = &corev1.Probe{ProbeHandler: httpGet("/healthz", corev1.URISchemeHTTPS),
		TimeoutSeconds: 5, PeriodSeconds: 7, SuccessThreshold: 2, FailureThreshold: 9}
	c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: httpGet("/stop", corev1.URISchemeHTTPS).HTTPGet}}

	run(t, []tcase[corev1.PodSpec]{
		{name: "ports, env, probes and hooks of every kind of container", in: &in, want: podLevel(want)},
		{name: "explicit values kept", in: explicit, want: explicit.DeepCopy()},
	}, SetDefaultsPodTemplate, (*corev1.PodSpec).DeepCopy)
}

func TestSetDefaultsPodTemplateVolumes(t *testing.T) {
	mode := i32(0o644)
	items := func(v string) []corev1.DownwardAPIVolumeFile {
		return []corev1.DownwardAPIVolumeFile{{Path: "n", FieldRef: &corev1.ObjectFieldSelector{APIVersion: v, FieldPath: "metadata.name"}},
			{Path: "c", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "c", Resource: "limits.cpu"}}}
	}
	unset, dir := corev1.HostPathUnset, corev1.HostPathDirectory
	in := &corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "none"},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}},
		{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
		{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
		{Name: "dapi", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: items("")}}},
		{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: items("")}},
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{}},
		}}}},
		{Name: "pvc", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}},
		{Name: "img", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "data:v1"}}},
	}}
	want := podLevel(corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "none", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x", Type: &unset}}},
		{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultMode: mode}}},
		{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{DefaultMode: mode}}},
		{Name: "dapi", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: items("v1"), DefaultMode: mode}}},
		{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode, Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: items("v1")}},
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: i64(3600)}},
			{ConfigMap: &corev1.ConfigMapProjection{}},
		}}}},
		{Name: "pvc", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}},
		// The image volume's pull policy is gated (ImageVolume, off in Kubernetes v1.32): not defaulted.
		{Name: "img", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "data:v1"}}},
	}})
	explicit := podLevel(corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x", Type: &dir}}},
		{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{DefaultMode: i32(0o400)}}},
		{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{DefaultMode: i32(0)}}},
		{Name: "dapi", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: items("v2"), DefaultMode: i32(0o600)}}},
		{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: i32(0o444), Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: i64(600)}},
		}}}},
	}})
	run(t, []tcase[corev1.PodSpec]{
		{name: "each volume source gets its defaults", in: in, want: want},
		{name: "explicit values (mode 0 too) kept", in: explicit, want: explicit.DeepCopy()},
	}, SetDefaultsPodTemplate, (*corev1.PodSpec).DeepCopy)
}

// Quantities are compared by value and by the string they serialize to (what the revision hash
// reads), not by their internal representation.
func TestSetDefaultsPodTemplateRoundsResources(t *testing.T) {
	rl := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	res := func() corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Limits: rl("0.0001", "1.5Gi"), Requests: rl("100m", "1.0001")}
	}
	spec := &corev1.PodSpec{
		InitContainers:      []corev1.Container{{Name: "i", Resources: res()}},
		Containers:          []corev1.Container{{Name: "c", Resources: res()}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e", Resources: res()}}},
		Overhead:            rl("0.00001", "2"),
	}
	SetDefaultsPodTemplate(spec)
	twice := spec.DeepCopy()
	SetDefaultsPodTemplate(twice)
	for _, s := range []*corev1.PodSpec{spec, twice} {
		for _, r := range []corev1.ResourceRequirements{s.InitContainers[0].Resources, s.Containers[0].Resources,
			s.EphemeralContainers[0].Resources} {
			checkQuantities(t, r.Limits, rl("1m", "1.5Gi"), "1m", "1536Mi")
			checkQuantities(t, r.Requests, rl("100m", "1001m"), "100m", "1001m")
		}
		checkQuantities(t, s.Overhead, rl("1m", "2"), "1m", "2")
	}
}

func checkQuantities(t *testing.T, got, want corev1.ResourceList, cpu, mem string) {
	t.Helper()
	for name, str := range map[corev1.ResourceName]string{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem} {
		g, w := got[name], want[name]
		if g.Cmp(w) != 0 || g.String() != str {
			t.Errorf("%s = %s, want %s", name, g.String(), str)
		}
	}
}

func TestSetDefaultsClaimTemplates(t *testing.T) {
	claim := func(phase corev1.PersistentVolumeClaimPhase, req, capacity string) corev1.PersistentVolumeClaim {
		c := corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(req)},
				Limits: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(req)}}},
			Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
		if capacity != "" {
			c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}
		}
		return c
	}
	claims := []corev1.PersistentVolumeClaim{claim("", "1Mi", ""), claim(corev1.ClaimBound, "0.0001", "0.0001")}
	SetDefaultsClaimTemplates(claims)
	SetDefaultsClaimTemplates(claims) // idempotent
	if p := claims[0].Status.Phase; p != corev1.ClaimPending {
		t.Errorf("phase = %q, want Pending", p)
	}
	if p := claims[1].Status.Phase; p != corev1.ClaimBound {
		t.Errorf("explicit phase = %q, want Bound", p)
	}
	for i := range claims {
		if m := claims[i].Spec.VolumeMode; m != nil {
			t.Errorf("claim %d: volumeMode = %q, want unset (OpenKruise does not default it)", i, *m)
		}
	}
	for _, l := range []corev1.ResourceList{claims[0].Spec.Resources.Requests, claims[0].Spec.Resources.Limits} {
		if q := l[corev1.ResourceStorage]; q.String() != "1Mi" {
			t.Errorf("storage = %s, want 1Mi", q.String())
		}
	}
	for _, l := range []corev1.ResourceList{claims[1].Spec.Resources.Requests, claims[1].Spec.Resources.Limits, claims[1].Status.Capacity} {
		if q := l[corev1.ResourceStorage]; q.String() != "1m" {
			t.Errorf("storage = %s, want 1m", q.String())
		}
	}
	SetDefaultsClaimTemplates(nil) // no claims: no panic
}

func TestSetDefaultsCloneSetTemplate(t *testing.T) {
	in := &v1alpha1.CloneSet{Spec: v1alpha1.CloneSetSpec{
		Template:             corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}}},
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{}},
	}}
	want := &v1alpha1.CloneSet{Spec: v1alpha1.CloneSetSpec{
		Template:             corev1.PodTemplateSpec{Spec: *podLevel(corev1.PodSpec{Containers: []corev1.Container{ctr("app", "app:v1", corev1.PullAlways)}})},
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}},
	}}
	// Only the templates: the CloneSet's own fields are SetDefaultsCloneSet's.
	run(t, []tcase[v1alpha1.CloneSet]{{name: "template and claim templates", in: in, want: want}},
		SetDefaultsCloneSetTemplate, (*v1alpha1.CloneSet).DeepCopy)
}

func TestSetDefaultsHostNetworkPorts(t *testing.T) {
	spec := &corev1.PodSpec{HostNetwork: true,
		Containers:     []corev1.Container{{Name: "a", Ports: []corev1.ContainerPort{{ContainerPort: 80}, {ContainerPort: 81, HostPort: 9081}}}},
		InitContainers: []corev1.Container{{Name: "i", Ports: []corev1.ContainerPort{{ContainerPort: 90}}}}}
	SetDefaultsHostNetworkPorts(spec)
	if p := spec.Containers[0].Ports; p[0].HostPort != 80 || p[1].HostPort != 9081 || spec.InitContainers[0].Ports[0].HostPort != 90 {
		t.Errorf("host ports %+v %+v", p, spec.InitContainers[0].Ports)
	}
	plain := &corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}}
	SetDefaultsHostNetworkPorts(plain)
	if plain.Containers[0].Ports[0].HostPort != 0 {
		t.Error("a pod without hostNetwork got a host port")
	}
}
