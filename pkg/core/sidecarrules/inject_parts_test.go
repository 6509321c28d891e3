package sidecarrules

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func emptyDir(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

func hostPath(name, path string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}}
}

// TestInjectInitContainersVolumesSecrets: init containers, volumes and image pull secrets.
func TestInjectInitContainersVolumesSecrets(t *testing.T) {
	initB, initA := sidecar("init-b", "b:1"), nativeSidecar("init-a", "a:1")
	initB.PodInjectPolicy, initA.PodInjectPolicy = v1beta1.SidecarSetAfterAppContainer, v1beta1.SidecarSetAfterAppContainer
	logMounting := sidecar("log", "log:1")
	logMounting.VolumeMounts = []corev1.VolumeMount{{Name: "logs", MountPath: "/logs"}, {Name: "pods", MountPath: "/pods"}}
	cases := []struct {
		name     string
		pod      func() *corev1.Pod
		sets     func() []*v1beta1.SidecarSet
		want     func(*corev1.PodSpec)
		injected []string
	}{{
		name: "init containers sorted by name after the pod's own",
		pod: func() *corev1.Pod {
			p := appPod()
			p.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "setup:1"}}
			return p
		},
		sets: func() []*v1beta1.SidecarSet {
			s := newSet("s")
			s.Spec.InitContainers = []v1beta1.SidecarSetContainer{initB, initA}
			return []*v1beta1.SidecarSet{s}
		},
		want: func(s *corev1.PodSpec) {
			s.InitContainers = append(s.InitContainers, injectedContainer(initA), injectedContainer(initB))
		},
	}, {
		name: "init containers with BeforeAppContainer go before the pod's own",
		pod: func() *corev1.Pod {
			p := appPod()
			p.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "setup:1"}}
			return p
		},
		sets: func() []*v1beta1.SidecarSet {
			s := newSet("s")
			s.Spec.InitContainers = []v1beta1.SidecarSetContainer{sidecar("first", "f:1")}
			s.Spec.InitContainers[0].PodInjectPolicy = v1beta1.SidecarSetBeforeAppContainer
			return []*v1beta1.SidecarSet{s}
		},
		want: func(s *corev1.PodSpec) {
			s.InitContainers = append([]corev1.Container{injectedContainer(sidecar("first", "f:1"))}, s.InitContainers...)
		},
	}, {
		name: "only mounted volumes are added, and the pod's volume of the same name wins",
		pod: func() *corev1.Pod {
			p := appPod()
			p.Spec.Volumes = []corev1.Volume{emptyDir("pods")}
			return p
		},
		sets: func() []*v1beta1.SidecarSet {
			s := newSet("s", logMounting)
			s.Spec.Volumes = []corev1.Volume{hostPath("logs", "/var/log"), hostPath("pods", "/var/pods"), emptyDir("unused")}
			return []*v1beta1.SidecarSet{s}
		},
		want: func(s *corev1.PodSpec) {
			s.Containers = append([]corev1.Container{injectedContainer(logMounting)}, s.Containers...)
			s.Volumes = append(s.Volumes, hostPath("logs", "/var/log"))
		},
	}, {
		name: "a mount of a volume the SidecarSet does not declare adds no volume",
		sets: func() []*v1beta1.SidecarSet { return []*v1beta1.SidecarSet{newSet("s", logMounting)} },
		want: func(s *corev1.PodSpec) {
			s.Containers = append([]corev1.Container{injectedContainer(logMounting)}, s.Containers...)
		},
	}, {
		name: "image pull secrets merged, the pod's first, each once",
		pod: func() *corev1.Pod {
			p := appPod()
			p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "mine"}, {Name: "shared"}}
			return p
		},
		sets: func() []*v1beta1.SidecarSet {
			a, b := newSet("a", sidecar("x", "x:1")), newSet("b", sidecar("y", "y:1"))
			a.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "shared"}, {Name: "reg-a"}}
			b.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "reg-a"}, {Name: "reg-b"}}
			return []*v1beta1.SidecarSet{a, b}
		},
		want: func(s *corev1.PodSpec) {
			s.Containers = append([]corev1.Container{injectedContainer(sidecar("x", "x:1")), injectedContainer(sidecar("y", "y:1"))}, s.Containers...)
			s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "mine"}, {Name: "shared"}, {Name: "reg-a"}, {Name: "reg-b"}}
		},
		injected: []string{"a", "b"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			injected := tc.injected
			if injected == nil {
				injected = []string{"s"}
			}
			runSpecCase(t, tc.pod, tc.sets(), Options{}, tc.want, injected)
		})
	}
}

// TestInjectSharing: shareVolumePolicy, shareVolumeDevicePolicy and transferEnv.
func TestInjectSharing(t *testing.T) {
	appWithVolumes := func() *corev1.Pod {
		p := appPod()
		app := &p.Spec.Containers[0]
		app.Env = []corev1.EnvVar{{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}, {Name: "MODE", Value: "prod"}}
		app.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPathExpr: "x/$(POD)"}, {Name: "conf", MountPath: "/conf"}}
		app.VolumeDevices = []corev1.VolumeDevice{{Name: "raw", DevicePath: "/dev/raw"}}
		// An injected container is not an app container: nothing of it is shared.
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "old-sidecar", Env: []corev1.EnvVar{injectedEnv(), {Name: "MODE", Value: "sidecar"}},
			VolumeMounts: []corev1.VolumeMount{{Name: "other", MountPath: "/other"}}})
		p.Labels["source"] = "app"
		return p
	}
	share := sidecar("share", "s:1")
	share.ShareVolumePolicy.Type = v1beta1.SidecarSetShareVolumePolicyEnabled
	share.ShareVolumeDevicePolicy = &v1beta1.SidecarSetShareVolumePolicy{Type: v1beta1.SidecarSetShareVolumePolicyEnabled}
	share.VolumeMounts = []corev1.VolumeMount{{Name: "own", MountPath: "/conf"}}
	transfer := sidecar("transfer", "t:1")
	transfer.Env = []corev1.EnvVar{{Name: "MODE", Value: "own"}}
	transfer.TransferEnv = []v1beta1.SidecarSetTransferEnvVar{
		{SourceContainerName: "app", EnvName: "MODE", EnvNames: []string{"POD", "MISSING"}},
		{SourceContainerNameFrom: &v1beta1.SidecarSetSourceContainerNameSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['source']"}}, EnvName: "POD"},
		{SourceContainerNameFrom: &v1beta1.SidecarSetSourceContainerNameSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}, EnvName: "MODE"},
	}
	runSpecCase(t, appWithVolumes, []*v1beta1.SidecarSet{newSet("s", share, after(transfer))}, Options{}, func(s *corev1.PodSpec) {
		app := s.Containers[0]
		wantShare := injectedContainer(share, app.Env[0])
		// /conf is the sidecar's own mount path: the app's /conf mount is not added.
		wantShare.VolumeMounts = append(wantShare.VolumeMounts, app.VolumeMounts[0])
		wantShare.VolumeDevices = app.VolumeDevices
		// MODE is the sidecar's own; POD comes from the app container (MISSING is not there).
		wantTransfer := injectedContainer(transfer, app.Env[0])
		s.Containers = []corev1.Container{wantShare, s.Containers[0], s.Containers[1], wantTransfer}
	}, []string{"s"})
}

// TestInjectHotUpgrade: a hot-upgrade sidecar becomes a working and an idle copy.
func TestInjectHotUpgrade(t *testing.T) {
	mesh := sidecar("mesh", "mesh:1")
	mesh.UpgradeStrategy = v1beta1.SidecarSetContainerUpgradeStrategy{UpgradeType: v1beta1.SidecarSetHotUpgrade, HotUpgradeEmptyImage: "empty:1"}
	res, err := Inject(appPod(), []*v1beta1.SidecarSet{newSet("s", mesh)}, Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Pod.Spec.Containers); !equalStrings(got, []string{"mesh-1", "mesh-2", "app"}) {
		t.Fatalf("containers %v", got)
	}
	if img := res.Pod.Spec.Containers[1].Image; img != "empty:1" {
		t.Errorf("idle copy runs %s, want the empty image", img)
	}
	env := res.Pod.Spec.Containers[0].Env
	if len(env) != 3 || env[0].Name != InjectedEnv || env[1].Name != VersionEnv ||
		env[1].ValueFrom.FieldRef.FieldPath != "metadata.annotations['version.sidecarset.kruise.io/mesh-1']" ||
		env[2].ValueFrom.FieldRef.FieldPath != "metadata.annotations['versionalt.sidecarset.kruise.io/mesh-1']" {
		t.Errorf("working copy env %+v", env)
	}
	want := map[string]string{
		WorkingHotUpgradeContainerAnnotation:     `{"mesh":"mesh-1"}`,
		"version.sidecarset.kruise.io/mesh-1":    "1",
		"versionalt.sidecarset.kruise.io/mesh-1": "0",
		"version.sidecarset.kruise.io/mesh-2":    "0",
		"versionalt.sidecarset.kruise.io/mesh-2": "1",
	}
	for k, v := range want {
		if got := res.Pod.Annotations[k]; got != v {
			t.Errorf("annotation %s = %q, want %q", k, got, v)
		}
	}
	specs, _ := PodUpgradeSpecs(res.Pod, HashAnnotation)
	if got := specs["s"].SidecarList; !equalStrings(got, []string{"mesh"}) {
		t.Errorf("sidecarList %v, want the SidecarSet's container name", got)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
