package sidecarrules

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// TestInjectSpec: pod × SidecarSets → pod spec and injected SidecarSets.
func TestInjectSpec(t *testing.T) {
	log := sidecar("log", "log:1")
	mesh := sidecar("mesh", "mesh:1")
	cases := []struct {
		name     string
		pod      func() *corev1.Pod
		sets     func() []*v1beta1.SidecarSet
		opts     Options
		want     func(*corev1.PodSpec) // edits the input pod's spec into the expected one
		injected []string
	}{{
		name: "BeforeAppContainer goes first, AfterAppContainer last",
		sets: func() []*v1beta1.SidecarSet { return []*v1beta1.SidecarSet{newSet("s", log, after(mesh))} },
		want: func(s *corev1.PodSpec) {
			s.Containers = []corev1.Container{injectedContainer(log), s.Containers[0], injectedContainer(mesh)}
		},
		injected: []string{"s"},
	}, {
		name: "SidecarSets apply in name order whatever the input order",
		sets: func() []*v1beta1.SidecarSet { return []*v1beta1.SidecarSet{newSet("b", mesh), newSet("a", log)} },
		want: func(s *corev1.PodSpec) {
			s.Containers = []corev1.Container{injectedContainer(log), injectedContainer(mesh), s.Containers[0]}
		},
		injected: []string{"a", "b"},
	}, {
		name: "selector not matching",
		sets: func() []*v1beta1.SidecarSet {
			s := newSet("s", log)
			s.Spec.Selector.MatchLabels["app"] = "other"
			return []*v1beta1.SidecarSet{s}
		},
	}, {
		name: "nil and empty selectors match nothing",
		sets: func() []*v1beta1.SidecarSet {
			a, b := newSet("a", log), newSet("b", mesh)
			a.Spec.Selector, b.Spec.Selector = nil, &metav1.LabelSelector{}
			return []*v1beta1.SidecarSet{a, b}
		},
	}, {
		name: "injection paused",
		sets: func() []*v1beta1.SidecarSet {
			s := newSet("s", log)
			s.Spec.InjectionStrategy.Paused = true
			return []*v1beta1.SidecarSet{s}
		},
	}, {
		name: "v1alpha1 namespace of another namespace",
		sets: func() []*v1beta1.SidecarSet {
			s := newSet("s", log)
			s.Annotations = map[string]string{v1alpha1.ConversionV1alpha1OnlyAnnotation: `{"spec":{"namespace":"other"}}`}
			return []*v1beta1.SidecarSet{s}
		},
	}, {
		name: "v1alpha1 namespace default matches a pod without namespace",
		pod: func() *corev1.Pod {
			p := appPod()
			p.Namespace = ""
			return p
		},
		sets: func() []*v1beta1.SidecarSet {
			s := newSet("s", log)
			s.Annotations = map[string]string{v1alpha1.ConversionV1alpha1OnlyAnnotation: `{"spec":{"namespace":"default"}}`}
			return []*v1beta1.SidecarSet{s}
		},
		want: func(s *corev1.PodSpec) {
			s.Containers = append([]corev1.Container{injectedContainer(log)}, s.Containers...)
		},
		injected: []string{"s"},
	}, {
		name: "namespaceSelector against the namespace's labels",
		sets: func() []*v1beta1.SidecarSet {
			yes, no := newSet("yes", log), newSet("no", mesh)
			yes.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
			no.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}}
			return []*v1beta1.SidecarSet{yes, no}
		},
		opts: Options{NamespaceLabels: map[string]string{"team": "a"}},
		want: func(s *corev1.PodSpec) {
			s.Containers = append([]corev1.Container{injectedContainer(log)}, s.Containers...)
		},
		injected: []string{"yes"},
	}, {
		name: "a sidecar named like a pod container replaces it in place",
		pod: func() *corev1.Pod {
			p := appPod()
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "log", Image: "mine"})
			return p
		},
		sets:     func() []*v1beta1.SidecarSet { return []*v1beta1.SidecarSet{newSet("s", log)} },
		want:     func(s *corev1.PodSpec) { s.Containers[1] = injectedContainer(log) },
		injected: []string{"s"},
	}, {
		name: "terminating pods get nothing",
		pod: func() *corev1.Pod {
			p := appPod()
			p.DeletionTimestamp = &testNow
			return p
		},
		sets: func() []*v1beta1.SidecarSet { return []*v1beta1.SidecarSet{newSet("s", log)} },
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runSpecCase(t, tc.pod, tc.sets(), tc.opts, tc.want, tc.injected)
		})
	}
}

func runSpecCase(t *testing.T, mkPod func() *corev1.Pod, sets []*v1beta1.SidecarSet, opts Options,
	want func(*corev1.PodSpec), injected []string) {
	t.Helper()
	if mkPod == nil {
		mkPod = appPod
	}
	pod := mkPod()
	setsBefore := make([]*v1beta1.SidecarSet, len(sets))
	for i := range sets {
		setsBefore[i] = sets[i].DeepCopy()
	}
	if opts.Now.IsZero() {
		opts.Now = testNow
	}
	res, err := Inject(pod, sets, opts)
	if err != nil {
		t.Fatal(err)
	}
	wantSpec := mkPod().Spec.DeepCopy()
	if want != nil {
		want(wantSpec)
	}
	if !equality.Semantic.DeepEqual(&res.Pod.Spec, wantSpec) {
		t.Errorf("spec:\n%s", diff.Diff(wantSpec, &res.Pod.Spec))
	}
	if !equality.Semantic.DeepEqual(res.Injected, injected) {
		t.Errorf("injected %v, want %v", res.Injected, injected)
	}
	scribble(res.Pod)
	if !equality.Semantic.DeepEqual(pod, mkPod()) {
		t.Errorf("Inject modified the pod, or its result shares memory with it")
	}
	for i := range sets {
		if !equality.Semantic.DeepEqual(sets[i], setsBefore[i]) {
			t.Errorf("Inject modified SidecarSet %s, or its result shares memory with it", sets[i].Name)
		}
	}
}

// scribble overwrites what the result of Inject holds by reference.
func scribble(p *corev1.Pod) {
	for _, list := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range list {
			c := &list[i]
			c.Name, c.Image = "x", "x"
			for j := range c.Env {
				c.Env[j].Name = "x"
				if f := c.Env[j].ValueFrom; f != nil && f.FieldRef != nil {
					f.FieldRef.FieldPath = "x"
				}
			}
			for j := range c.VolumeMounts {
				c.VolumeMounts[j].Name = "x"
			}
			for j := range c.VolumeDevices {
				c.VolumeDevices[j].Name = "x"
			}
		}
	}
	for i := range p.Spec.Volumes {
		p.Spec.Volumes[i].Name = "x"
		if h := p.Spec.Volumes[i].HostPath; h != nil {
			h.Path = "x"
		}
	}
	for i := range p.Spec.ImagePullSecrets {
		p.Spec.ImagePullSecrets[i].Name = "x"
	}
	for k := range p.Labels {
		p.Labels[k] = "x"
	}
}
