package e2e

// SidecarSet variants on the kwok sandbox (issue 18's proof list): what the pod webhook injects
// (init containers and native sidecars, shared volumes, transferred env, pull secrets, volumes,
// patchPodMetadata, resourcesPolicy, the v1alpha1 API), the revision pinned for new pods during a
// canary, the cold-upgrade variants (update selector, priority, a broken image, NotUpdate,
// paused injection) and the validating webhook's conflicts. Each test has its own namespace and
// SidecarSets that select only that namespace.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/test/harness"
)

// The wire names of OpenKruise's patch whitelist: ConfigMap kruise-configuration in the manager's
// namespace, entry SidecarSet_PatchPodMetadata_WhiteList.
const (
	svConfigMap    = "kruise-configuration"
	svWhitelistKey = "SidecarSet_PatchPodMetadata_WhiteList"
)

// svCreatePod creates a bare pod (container app, image app:v1) labelled labels, after edit, and
// returns it as admitted (with whatever the injection webhook added).
func svCreatePod(t *testing.T, ns, name string, labels map[string]string, edit func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Spec: podSpec("registry.example/app:v1")}
	if edit != nil {
		edit(p)
	}
	got, err := cs.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", name, err)
	}
	return got
}

// svWaitReady waits until selector selects n pods, all Ready.
func svWaitReady(t *testing.T, ns, selector string, n int) map[string]*corev1.Pod {
	t.Helper()
	var pods map[string]*corev1.Pod
	harness.Eventually(t, 60*time.Second, fmt.Sprintf("%d pods %s ready", n, selector), func() (bool, string) {
		pods = podsByName(t, ns, selector)
		var not []string
		for _, p := range pods {
			if condition(p, corev1.PodReady) != corev1.ConditionTrue {
				not = append(not, describe(p))
			}
		}
		return len(pods) == n && len(not) == 0, fmt.Sprintf("%d pods; not ready: %v", len(pods), not)
	})
	return pods
}

func svContainer(list []corev1.Container, name string) *corev1.Container {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

// svEnv lists a container's env as NAME=value.
func svEnv(c *corev1.Container) []string {
	var out []string
	for _, e := range c.Env {
		out = append(out, e.Name+"="+e.Value)
	}
	return out
}

func svMounts(c *corev1.Container) []string {
	var out []string
	for _, m := range c.VolumeMounts {
		s := m.Name + ":" + m.MountPath
		if m.SubPathExpr != "" {
			s += ":" + m.SubPathExpr
		}
		out = append(out, s)
	}
	return out
}

// svPatch merge-patches obj.
func svPatch(t *testing.T, c client.Client, obj client.Object, patch string) {
	t.Helper()
	if err := c.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("patch %s with %s: %v", obj.GetName(), patch, err)
	}
}

// svRefused creates obj and expects the API server to refuse it with a message containing each
// of want; an object created anyway is deleted again.
func svRefused(t *testing.T, c client.Client, obj client.Object, what string, want ...string) {
	t.Helper()
	err := c.Create(context.Background(), obj)
	if err == nil {
		t.Errorf("%s: created, want it refused", what)
		_ = c.Delete(context.Background(), obj)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: refused with %q, which does not contain %q", what, err, w)
		}
	}
}

// svImages maps each pod that selector selects to the image of its container name ("" if none).
func svImages(t *testing.T, ns, selector, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for n, p := range podsByName(t, ns, selector) {
		if c := svContainer(p.Spec.Containers, name); c != nil {
			out[n] = c.Image
		} else {
			out[n] = ""
		}
	}
	return out
}

// svImagesAre reports whether every pod in want runs want[pod] in container name, and no other
// pod is selected.
func svImagesAre(t *testing.T, ns, selector, name string, want map[string]string) (bool, string) {
	got := svImages(t, ns, selector, name)
	return maps.Equal(got, want), fmt.Sprintf("images %v, want %v", got, want)
}

// svUpgradeOrder follows the pods selector selects from now on and returns a function listing them
// in the order their container name got image in the spec.
func svUpgradeOrder(t *testing.T, ns, selector, name, image string) func() []string {
	t.Helper()
	w, err := cs.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	var order []string
	seen := map[string]bool{}
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if c := svContainer(p.Spec.Containers, name); c != nil && c.Image == image {
				mu.Lock()
				if !seen[p.Name] {
					seen[p.Name] = true
					order = append(order, p.Name)
				}
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(order)
	}
}

func svQuantities(l corev1.ResourceList) map[corev1.ResourceName]string {
	out := map[corev1.ResourceName]string{}
	for k, v := range l {
		out[k] = v.String()
	}
	return out
}

// svSameQuantities reports whether got holds exactly the resources of want, each equal by value.
func svSameQuantities(got corev1.ResourceList, want map[corev1.ResourceName]string) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		q, ok := got[k]
		if !ok || q.Cmp(resource.MustParse(v)) != 0 {
			return false
		}
	}
	return true
}

// 1a. Init containers: a SidecarSet's plain init containers and native sidecar (restartPolicy
// Always) are injected into a CloneSet's pods sorted by name, placed by podInjectPolicy around the
// pod's own init container, each marked IS_INJECTED; the native sidecar is listed with the
// containers in the pod's hash entry; with shareVolumePolicy and transferEnv they get the app
// container's mounts and env vars. A native sidecar needs updateStrategy NotUpdate.
func TestSidecarSetVariantInitContainers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	always := ptr.To(corev1.ContainerRestartPolicyAlways)
	set := newSidecarSet("init-"+ns, ns, "init", corev1.Container{Name: "agent", Image: "registry.example/agent:v1"}, "")
	set.Spec.InitContainers = []appsv1beta1.SidecarSetContainer{
		{Container: corev1.Container{Name: "z-native", Image: "registry.example/proxy:v1", RestartPolicy: always},
			PodInjectPolicy: appsv1beta1.SidecarSetBeforeAppContainer},
		{Container: corev1.Container{Name: "m-plain", Image: "registry.example/setup:v1"}, PodInjectPolicy: appsv1beta1.SidecarSetBeforeAppContainer},
		{Container: corev1.Container{Name: "a-plain", Image: "registry.example/setup:v1"}}, // defaulted AfterAppContainer
	}
	// Init containers share the app containers' mounts and take their env vars as containers do.
	for i := range set.Spec.InitContainers {
		ic := &set.Spec.InitContainers[i]
		if ic.Name == "a-plain" {
			continue
		}
		ic.ShareVolumePolicy.Type = appsv1beta1.SidecarSetShareVolumePolicyEnabled
		ic.TransferEnv = []appsv1beta1.SidecarSetTransferEnvVar{{SourceContainerName: "app", EnvName: "REGION"}}
	}
	// A native sidecar is not upgraded in place: the default RollingUpdate is refused.
	svRefused(t, c, set.DeepCopy(), "a native sidecar with updateStrategy RollingUpdate", "NotUpdate", "z-native")
	set.Spec.UpdateStrategy.Type = appsv1beta1.SidecarSetNotUpdateStrategy
	set = createSidecarSet(t, c, set)

	const replicas = 2
	clone := newCloneSet(ns, "init", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	clone.Spec.Template.Spec.InitContainers = []corev1.Container{{Name: "app-init", Image: "registry.example/app-init:v1"}}
	clone.Spec.Template.Spec.AutomountServiceAccountToken = ptr.To(false)
	clone.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	app := &clone.Spec.Template.Spec.Containers[0]
	app.Env = []corev1.EnvVar{{Name: "REGION", Value: "eu"}}
	app.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "init", "all ready", harness.RolledOut(replicas))
	pods := podsByName(t, ns, "app=init")
	if len(pods) != replicas {
		t.Fatalf("%d pods, want %d", len(pods), replicas)
	}
	for name, p := range pods {
		if got, want := containerNames(p.Spec.InitContainers), []string{"m-plain", "z-native", "app-init", "a-plain"}; !slices.Equal(got, want) {
			t.Errorf("pod %s: init containers %v, want %v", name, got, want)
		}
		for i := range p.Spec.InitContainers {
			ic := &p.Spec.InitContainers[i]
			if injectedEnv(ic) != (ic.Name != "app-init") {
				t.Errorf("pod %s: init container %s has IS_INJECTED=%v", name, ic.Name, injectedEnv(ic))
			}
			if native := ic.RestartPolicy != nil && *ic.RestartPolicy == corev1.ContainerRestartPolicyAlways; native != (ic.Name == "z-native") {
				t.Errorf("pod %s: init container %s restartPolicy %v", name, ic.Name, ic.RestartPolicy)
			}
			var wantEnv, wantMounts []string
			switch ic.Name {
			case "m-plain", "z-native":
				wantEnv, wantMounts = []string{"IS_INJECTED=true", "REGION=eu"}, []string{"data:/data"}
			case "a-plain":
				wantEnv = []string{"IS_INJECTED=true"}
			}
			if got := svEnv(ic); !slices.Equal(got, wantEnv) {
				t.Errorf("pod %s: init container %s env %v, want %v", name, ic.Name, got, wantEnv)
			}
			if got := svMounts(ic); !slices.Equal(got, wantMounts) {
				t.Errorf("pod %s: init container %s volumeMounts %v, want %v", name, ic.Name, got, wantMounts)
			}
		}
		if got, want := containerNames(p.Spec.Containers), []string{"agent", "app"}; !slices.Equal(got, want) {
			t.Errorf("pod %s: containers %v, want %v", name, got, want)
		}
		specs, err := sidecarrules.PodUpgradeSpecs(p, sidecarrules.HashAnnotation)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := specs[set.Name].SidecarList, []string{"agent", "z-native"}; !slices.Equal(got, want) {
			t.Errorf("pod %s: sidecarList %v, want %v", name, got, want)
		}
	}
	waitSidecarSet(t, c, set.Name, "counts the CloneSet's pods", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == replicas && s.Status.UpdatedPods == replicas && s.Status.ReadyPods == replicas
	})
}

// 1b. shareVolumePolicy, transferEnv, imagePullSecrets and volumes: the sidecar gets the app
// containers' volume mounts (and the env their subPathExpr uses) after its own, the env vars
// transferEnv names (by sourceContainerName with envName and envNames, and by
// sourceContainerNameFrom a pod label) after its own, which win; the pod gets the SidecarSet's
// pull secrets after its own and the volumes its sidecar mounts, its own volume winning on a name
// clash.
func TestSidecarSetVariantSharedVolumesAndTransferEnv(t *testing.T) {
	t.Parallel()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newSidecarSet("share-"+ns, ns, "share", corev1.Container{Name: "agent", Image: "registry.example/agent:v1",
		Env:          []corev1.EnvVar{{Name: "C", Value: "own"}},
		VolumeMounts: []corev1.VolumeMount{{Name: "sc-logs", MountPath: "/var/log/agent"}, {Name: "shared", MountPath: "/shared"}}}, "")
	sc := &set.Spec.Containers[0]
	sc.ShareVolumePolicy.Type = appsv1beta1.SidecarSetShareVolumePolicyEnabled
	sc.TransferEnv = []appsv1beta1.SidecarSetTransferEnvVar{
		{SourceContainerName: "app", EnvName: "A"},
		{SourceContainerName: "app", EnvNames: []string{"C", "B"}},
		{SourceContainerNameFrom: &appsv1beta1.SidecarSetSourceContainerNameSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['env-source']"}}, EnvName: "D"},
	}
	set.Spec.Volumes = []corev1.Volume{
		{Name: "sc-logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	set.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "common"}, {Name: "sc-secret"}}
	set = createSidecarSet(t, c, set)

	p := svCreatePod(t, ns, "share", map[string]string{"app": "share", "env-source": "app2"}, func(p *corev1.Pod) {
		// No service account token: its volume and mounts (shared too) would have a random name.
		p.Spec.AutomountServiceAccountToken = ptr.To(false)
		app := &p.Spec.Containers[0]
		app.Env = []corev1.EnvVar{{Name: "A", Value: "a"}, {Name: "B", Value: "b"}, {Name: "C", Value: "c"}, {Name: "D", Value: "d1"}}
		app.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "app2", Image: "registry.example/app2:v1",
			Env:          []corev1.EnvVar{{Name: "D", Value: "d2"}, {Name: "POD_DIR", Value: "dir"}},
			VolumeMounts: []corev1.VolumeMount{{Name: "cache", MountPath: "/cache", SubPathExpr: "$(POD_DIR)"}}})
		p.Spec.Volumes = []corev1.Volume{
			{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
		}
		p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pod-secret"}, {Name: "common"}}
	})
	if got, want := containerNames(p.Spec.Containers), []string{"agent", "app", "app2"}; !slices.Equal(got, want) {
		t.Fatalf("containers %v, want %v", got, want)
	}
	agent := svContainer(p.Spec.Containers, "agent")
	if got, want := svEnv(agent), []string{"C=own", "IS_INJECTED=true", "A=a", "B=b", "D=d2", "POD_DIR=dir"}; !slices.Equal(got, want) {
		t.Errorf("sidecar env %v, want %v", got, want)
	}
	if got, want := svMounts(agent), []string{"sc-logs:/var/log/agent", "shared:/shared", "data:/data", "cache:/cache:$(POD_DIR)"}; !slices.Equal(got, want) {
		t.Errorf("sidecar volumeMounts %v, want %v", got, want)
	}
	for _, n := range []string{"app", "app2"} {
		if injectedEnv(svContainer(p.Spec.Containers, n)) {
			t.Errorf("app container %s marked IS_INJECTED", n)
		}
	}
	var volumes []string
	for _, v := range p.Spec.Volumes {
		volumes = append(volumes, v.Name)
		if v.Name == "shared" && (v.EmptyDir == nil || v.EmptyDir.Medium != corev1.StorageMediumMemory) {
			t.Errorf("volume shared is %+v: the pod's own (medium Memory) must win over the SidecarSet's", v.VolumeSource)
		}
	}
	if want := []string{"data", "cache", "shared", "sc-logs"}; !slices.Equal(volumes, want) {
		t.Errorf("volumes %v, want %v", volumes, want)
	}
	var secrets []string
	for _, s := range p.Spec.ImagePullSecrets {
		secrets = append(secrets, s.Name)
	}
	if want := []string{"pod-secret", "common", "sc-secret"}; !slices.Equal(secrets, want) {
		t.Errorf("imagePullSecrets %v, want %v", secrets, want)
	}
	svWaitReady(t, ns, "app=share", 1)
	waitSidecarSet(t, c, set.Name, "counts the pod", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == 1 && s.Status.UpdatedReadyPods == 1
	})
}

// svWhitelist creates (or, when it exists, adds its entry to) the kruise-configuration ConfigMap
// holding whitelist and restores it at the end of the test. It reports whether the ConfigMap did
// not exist before.
func svWhitelist(t *testing.T, whitelist string) bool {
	t.Helper()
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps(sandbox.KruiseNamespace)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: svConfigMap, Namespace: sandbox.KruiseNamespace},
		Data: map[string]string{svWhitelistKey: whitelist}}
	_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
	if err == nil {
		t.Cleanup(func() { _ = cms.Delete(context.Background(), svConfigMap, metav1.DeleteOptions{}) })
		return true
	}
	if !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	old, err := cms.Get(ctx, svConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prev, had := old.Data[svWhitelistKey]
	upd := old.DeepCopy()
	if upd.Data == nil {
		upd.Data = map[string]string{}
	}
	upd.Data[svWhitelistKey] = whitelist
	if _, err := cms.Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cur, err := cms.Get(context.Background(), svConfigMap, metav1.GetOptions{})
		if err != nil {
			return
		}
		if had {
			cur.Data[svWhitelistKey] = prev
		} else {
			delete(cur.Data, svWhitelistKey)
		}
		_, _ = cms.Update(context.Background(), cur, metav1.UpdateOptions{})
	})
	return false
}

// 1c. patchPodMetadata: without a whitelist (and with the gate SidecarSetPatchPodMetadataDefaultsAllowed
// off, its default) a SidecarSet that patches annotations is refused; with one, keys it does not
// allow are refused by name, and the pod gets the patches: Retain keeps the pod's value, Overwrite
// replaces it, MergePatchJson merges into it (keys the merge touches sorted, an untouched value
// kept byte for byte, as OpenKruise's merge-patch library writes them) or sets it.
func TestSidecarSetVariantPatchPodMetadata(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	label := map[string]string{"e2e-patch": ns}
	build := func(name string, patches ...appsv1beta1.SidecarSetPatchPodMetadata) *appsv1beta1.SidecarSet {
		s := newSidecarSet(name, ns, "patch", corev1.Container{Name: "agent", Image: "registry.example/agent:v1"}, "")
		s.Labels = maps.Clone(label)
		s.Spec.PatchPodMetadata = patches
		return s
	}
	patches := []appsv1beta1.SidecarSetPatchPodMetadata{
		{PatchPolicy: appsv1beta1.SidecarSetRetainPatchPolicy, Annotations: map[string]string{
			"e2e.kruise.io/retain": "set", "e2e.kruise.io/retain-new": "set"}},
		{PatchPolicy: appsv1beta1.SidecarSetOverwritePatchPolicy, Annotations: map[string]string{"e2e.kruise.io/overwrite": "set"}},
		{PatchPolicy: appsv1beta1.SidecarSetMergePatchJSONPatchPolicy, Annotations: map[string]string{
			"e2e.kruise.io/merge": `{"b":"2","a":null}`, "e2e.kruise.io/merge-new": `{"c":"3"}`}},
	}
	_, err := cs.CoreV1().ConfigMaps(sandbox.KruiseNamespace).Get(ctx, svConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		svRefused(t, c, build("patch-"+ns, patches...), "patchPodMetadata without a whitelist", "whitelist")
	} else {
		t.Logf("ConfigMap %s/%s exists already (%v): the no-whitelist case is not checked", sandbox.KruiseNamespace, svConfigMap, err)
	}
	rules, err := json.Marshal(map[string]any{"rules": []any{map[string]any{
		"selector":                  map[string]any{"matchLabels": label},
		"allowedAnnotationKeyExprs": []string{`^e2e\.kruise\.io/`},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	svWhitelist(t, string(rules))
	svRefused(t, c, build("patch-other-"+ns, appsv1beta1.SidecarSetPatchPodMetadata{
		PatchPolicy: appsv1beta1.SidecarSetOverwritePatchPolicy, Annotations: map[string]string{"other.example.com/key": "v"}}),
		"an annotation the whitelist does not allow", "other.example.com/key")
	unlabelled := build("patch-unlabelled-"+ns, patches...)
	unlabelled.Labels = nil
	svRefused(t, c, unlabelled, "a SidecarSet no whitelist rule selects", "patchPodMetadata")

	set := createSidecarSet(t, c, build("patch-"+ns, patches...))
	p := svCreatePod(t, ns, "patched", map[string]string{"app": "patch"}, func(p *corev1.Pod) {
		p.Annotations = map[string]string{
			"e2e.kruise.io/retain":    "pod",
			"e2e.kruise.io/overwrite": "pod",
			"e2e.kruise.io/merge":     `{"a":"1","keep":{"z":1,"y":2}}`,
		}
	})
	want := map[string]string{
		"e2e.kruise.io/retain":     "pod",
		"e2e.kruise.io/retain-new": "set",
		"e2e.kruise.io/overwrite":  "set",
		"e2e.kruise.io/merge":      `{"b":"2","keep":{"z":1,"y":2}}`,
		"e2e.kruise.io/merge-new":  `{"c":"3"}`,
	}
	for k, v := range want {
		if got := p.Annotations[k]; got != v {
			t.Errorf("annotation %s = %q, want %q", k, got, v)
		}
	}
	if names := containerNames(p.Spec.Containers); !slices.Equal(names, []string{"agent", "app"}) {
		t.Errorf("containers %v, want [agent app]", names)
	}
	if got := p.Annotations[sidecarrules.InjectedListAnnotation]; got != set.Name {
		t.Errorf("%s = %q, want %q", sidecarrules.InjectedListAnnotation, got, set.Name)
	}
}

// 1d. resourcesPolicy: a sidecar's resources are computed from the app containers its regular
// expression names (sum or max), through its expressions; a target without a limit leaves the
// sidecar unlimited for that resource, and the injected sidecars are never targets.
func TestSidecarSetVariantResourcesPolicy(t *testing.T) {
	t.Parallel()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newSidecarSet("res-"+ns, ns, "res", corev1.Container{Name: "agent", Image: "registry.example/agent:v1"}, "")
	set.Spec.Containers[0].ResourcesPolicy = &appsv1beta1.SidecarSetResourcesPolicy{
		TargetContainersNameRegex: "^app", TargetContainersMode: appsv1beta1.SidecarSetTargetContainersModeSum,
		ResourcesExpr: appsv1beta1.SidecarSetResourcesExpr{
			Limits:   &appsv1beta1.SidecarSetResourceExprs{CPU: "cpu*50%", Memory: "memory*2"},
			Requests: &appsv1beta1.SidecarSetResourceExprs{CPU: "max(cpu*50%, 50m)", Memory: "memory + 16Mi"},
		}}
	// The default regular expression (".*") with max: every container but the sidecars.
	set.Spec.Containers = append(set.Spec.Containers, appsv1beta1.SidecarSetContainer{
		Container:       corev1.Container{Name: "meter", Image: "registry.example/meter:v1"},
		PodInjectPolicy: appsv1beta1.SidecarSetAfterAppContainer,
		ResourcesPolicy: &appsv1beta1.SidecarSetResourcesPolicy{TargetContainersMode: appsv1beta1.SidecarSetTargetContainersModeMax,
			ResourcesExpr: appsv1beta1.SidecarSetResourcesExpr{
				Limits:   &appsv1beta1.SidecarSetResourceExprs{CPU: "cpu - 500m", Memory: "memory"},
				Requests: &appsv1beta1.SidecarSetResourceExprs{CPU: "cpu/4", Memory: "memory/2"},
			}}})
	createSidecarSet(t, c, set)
	rl := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	p := svCreatePod(t, ns, "res", map[string]string{"app": "res"}, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
			Requests: rl("cpu", "100m", "memory", "64Mi"), Limits: rl("cpu", "200m", "memory", "128Mi")}
		p.Spec.Containers = append(p.Spec.Containers,
			corev1.Container{Name: "app2", Image: "registry.example/app2:v1", Resources: corev1.ResourceRequirements{
				Requests: rl("cpu", "300m"), Limits: rl("cpu", "400m")}},
			corev1.Container{Name: "helper", Image: "registry.example/helper:v1", Resources: corev1.ResourceRequirements{
				Requests: rl("cpu", "1"), Limits: rl("cpu", "1", "memory", "1Gi")}})
	})
	if got, want := containerNames(p.Spec.Containers), []string{"agent", "app", "app2", "helper", "meter"}; !slices.Equal(got, want) {
		t.Fatalf("containers %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name             string
		limits, requests map[corev1.ResourceName]string
	}{
		// sum of app and app2: cpu limits 600m, requests 400m; memory: app2 has no limit (unlimited),
		// requests 64Mi.
		{"agent", map[corev1.ResourceName]string{"cpu": "300m"}, map[corev1.ResourceName]string{"cpu": "200m", "memory": "80Mi"}},
		// max of app, app2 and helper: cpu limits 1, requests 1; memory unlimited (app2), requests
		// 1Gi (helper's request, defaulted to its limit by the API server before admission).
		{"meter", map[corev1.ResourceName]string{"cpu": "500m"}, map[corev1.ResourceName]string{"cpu": "250m", "memory": "512Mi"}},
	} {
		r := svContainer(p.Spec.Containers, tc.name).Resources
		if !svSameQuantities(r.Limits, tc.limits) || !svSameQuantities(r.Requests, tc.requests) {
			t.Errorf("sidecar %s: limits %v requests %v; want limits %v requests %v", tc.name,
				svQuantities(r.Limits), svQuantities(r.Requests), tc.limits, tc.requests)
		}
	}
	svWaitReady(t, ns, "app=res", 1)
}

// 1e. The v1alpha1 API: a SidecarSet created as apps.kruise.io/v1alpha1 with spec.namespace injects
// into that namespace's pods only, reads back in both versions, and upgrades its pods when its
// image changes through v1alpha1.
func TestSidecarSetVariantV1alpha1(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	other := namespace(t)
	alpha := &appsv1alpha1.SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: "alpha-" + ns},
		Spec: appsv1alpha1.SidecarSetSpec{
			Selector:   &metav1.LabelSelector{MatchLabels: map[string]string{"app": "alpha"}},
			Namespace:  ns,
			Containers: []appsv1alpha1.SidecarSetContainer{{Container: corev1.Container{Name: "agent", Image: "registry.example/agent:v1"}}},
		}}
	if err := c.Create(ctx, alpha); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), alpha) })
	beta := waitRegistered(t, c, alpha.Name)
	if only, err := sidecarrules.OnlyNamespace(beta); err != nil || only != ns {
		t.Errorf("read as v1beta1: spec.namespace kept as %q (%v), want %q", only, err, ns)
	}
	// As OpenKruise converts it: a v1beta1 reader (OpenKruise among them) sees the namespace too.
	if want := appsv1alpha1.NamespaceSelectorFor(ns); !apiequality.Semantic.DeepEqual(beta.Spec.NamespaceSelector, want) {
		t.Errorf("read as v1beta1: namespaceSelector %v, want %v", beta.Spec.NamespaceSelector, want)
	}
	back := &appsv1alpha1.SidecarSet{}
	if err := c.Get(ctx, client.ObjectKey{Name: alpha.Name}, back); err != nil {
		t.Fatal(err)
	}
	if back.Spec.Namespace != ns || back.Spec.NamespaceSelector != nil || back.Spec.Containers[0].PodInjectPolicy != appsv1alpha1.SidecarSetBeforeAppContainer {
		t.Errorf("read as v1alpha1: namespace %q, namespaceSelector %v, podInjectPolicy %q", back.Spec.Namespace,
			back.Spec.NamespaceSelector, back.Spec.Containers[0].PodInjectPolicy)
	}

	p := svCreatePod(t, ns, "alpha", map[string]string{"app": "alpha"}, nil)
	if names := containerNames(p.Spec.Containers); !slices.Equal(names, []string{"agent", "app"}) {
		t.Errorf("pod of %s: containers %v, want [agent app]", ns, names)
	}
	q := svCreatePod(t, other, "alpha", map[string]string{"app": "alpha"}, nil)
	if names := containerNames(q.Spec.Containers); !slices.Equal(names, []string{"app"}) {
		t.Errorf("pod of the other namespace %s: containers %v, want [app]", other, names)
	}
	svWaitReady(t, ns, "app=alpha", 1)
	waitSidecarSet(t, c, alpha.Name, "counts its namespace's pod only", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == 1 && s.Status.UpdatedReadyPods == 1
	})
	svPatch(t, c, back, `{"spec":{"containers":[{"name":"agent","image":"registry.example/agent:v2"}]}}`)
	waitSidecarSet(t, c, alpha.Name, "upgraded its pod", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == 1 && s.Status.UpdatedReadyPods == 1 && s.Status.LatestRevision != beta.Status.LatestRevision
	})
	if got := svImages(t, ns, "app=alpha", "agent"); got["alpha"] != "registry.example/agent:v2" {
		t.Errorf("sidecar images %v after the v1alpha1 update, want v2", got)
	}
}

// 2. Revision injection during a canary: while the update is paused, injectionStrategy.revision
// pins the old ControllerRevision (in the manager's namespace, labelled with the SidecarSet's
// name) and new pods get the old sidecar, recorded as that revision; with policy Partial and an
// update selector, new pods the selector picks get the latest and the others the pinned one,
// while the canary upgrades only the selected pods.
func TestSidecarSetVariantRevisionPinnedDuringCanary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const v1, v2 = "registry.example/agent:v1", "registry.example/agent:v2"
	set := createSidecarSet(t, c, newSidecarSet("pin-"+ns, ns, "pin", corev1.Container{Name: "agent", Image: v1}, ""))
	first := waitSidecarSet(t, c, set.Name, "has a revision", func(s *appsv1beta1.SidecarSet) bool { return s.Status.LatestRevision != "" })
	r1, oldHash := first.Status.LatestRevision, set.Annotations[sidecarrules.HashAnnotation]
	revs, err := cs.AppsV1().ControllerRevisions(sandbox.KruiseNamespace).List(ctx,
		metav1.ListOptions{LabelSelector: sidecarrules.RevisionOwnerLabel + "=" + set.Name})
	if err != nil {
		t.Fatal(err)
	}
	if len(revs.Items) != 1 || revs.Items[0].Name != r1 {
		var names []string
		for _, r := range revs.Items {
			names = append(names, r.Name)
		}
		t.Fatalf("revisions of %s in %s: %v, want [%s]", set.Name, sandbox.KruiseNamespace, names, r1)
	}

	svCreatePod(t, ns, "canary-0", map[string]string{"app": "pin", "canary": "true"}, nil)
	svCreatePod(t, ns, "stable-0", map[string]string{"app": "pin"}, nil)
	svWaitReady(t, ns, "app=pin", 2)

	// v2, paused, new pods pinned to r1.
	svPatch(t, c, set, fmt.Sprintf(`{"spec":{"containers":[{"name":"agent","image":%q}],"updateStrategy":{"paused":true},`+
		`"injectionStrategy":{"revision":{"revisionName":%q}}}}`, v2, r1))
	waitRegistered(t, c, set.Name)
	second := waitSidecarSet(t, c, set.Name, "has a new revision", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.LatestRevision != "" && s.Status.LatestRevision != r1
	})
	r2 := second.Status.LatestRevision
	p := svCreatePod(t, ns, "stable-1", map[string]string{"app": "pin"}, nil)
	if got := svContainer(p.Spec.Containers, "agent"); got == nil || got.Image != v1 {
		t.Errorf("pod created while pinned to %s: sidecar %+v, want image %s", r1, got, v1)
	}
	specs, err := sidecarrules.PodUpgradeSpecs(p, sidecarrules.HashAnnotation)
	if err != nil {
		t.Fatal(err)
	}
	if e := specs[set.Name]; e.Hash != oldHash || e.ControllerRevision != r1 {
		t.Errorf("pod created while pinned: hash entry %+v, want hash %s and controllerRevision %s", e, oldHash, r1)
	}
	svWaitReady(t, ns, "app=pin", 3)
	harness.Consistently(t, 3*time.Second, "paused: every pod keeps v1", func() (bool, string) {
		return svImagesAre(t, ns, "app=pin", "agent", map[string]string{"canary-0": v1, "stable-0": v1, "stable-1": v1})
	})

	// The canary: only pods labelled canary=true are upgraded; new pods follow the selector.
	svPatch(t, c, set, `{"spec":{"updateStrategy":{"paused":false,"selector":{"matchLabels":{"canary":"true"}}},`+
		`"injectionStrategy":{"revision":{"policy":"Partial"}}}}`)
	waitRegistered(t, c, set.Name)
	harness.Eventually(t, 60*time.Second, "the canary pod upgraded", func() (bool, string) {
		return svImagesAre(t, ns, "app=pin", "agent", map[string]string{"canary-0": v2, "stable-0": v1, "stable-1": v1})
	})
	c1 := svCreatePod(t, ns, "canary-1", map[string]string{"app": "pin", "canary": "true"}, nil)
	s2 := svCreatePod(t, ns, "stable-2", map[string]string{"app": "pin"}, nil)
	if got := svContainer(c1.Spec.Containers, "agent"); got == nil || got.Image != v2 {
		t.Errorf("new pod the update selector picks: sidecar %+v, want image %s (Partial: the latest)", got, v2)
	}
	if got := svContainer(s2.Spec.Containers, "agent"); got == nil || got.Image != v1 {
		t.Errorf("new pod the update selector leaves: sidecar %+v, want image %s (Partial: the pinned revision)", got, v1)
	}
	if specs, err := sidecarrules.PodUpgradeSpecs(c1, sidecarrules.HashAnnotation); err != nil || specs[set.Name].ControllerRevision != r2 {
		t.Errorf("new canary pod: hash entry %+v (%v), want controllerRevision %s", specs[set.Name], err, r2)
	}
	svWaitReady(t, ns, "app=pin", 5)
	waitSidecarSet(t, c, set.Name, "reports the canary", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == 5 && s.Status.UpdatedPods == 2 && s.Status.UpdatedReadyPods == 2 && s.Status.ReadyPods == 5
	})
	harness.Consistently(t, 2*time.Second, "the pods the selector leaves keep v1", func() (bool, string) {
		return svImagesAre(t, ns, "app=pin", "agent", map[string]string{
			"canary-0": v2, "canary-1": v2, "stable-0": v1, "stable-1": v1, "stable-2": v1})
	})
	// The pinned revision is kept.
	if _, err := cs.AppsV1().ControllerRevisions(sandbox.KruiseNamespace).Get(ctx, r1, metav1.GetOptions{}); err != nil {
		t.Errorf("pinned revision %s: %v", r1, err)
	}
}

// svUpgradeSet creates, in a new namespace, a SidecarSet (container agent at v1) selecting pods
// app=<app> after edit, and the named bare pods with their extra labels, all Ready and counted.
func svUpgradeSet(t *testing.T, c client.Client, ns, app string, pods map[string]map[string]string,
	edit func(*appsv1beta1.SidecarSet)) *appsv1beta1.SidecarSet {
	t.Helper()
	set := newSidecarSet(app+"-"+ns, ns, app, corev1.Container{Name: "agent", Image: "registry.example/agent:v1"}, "")
	if edit != nil {
		edit(set)
	}
	set = createSidecarSet(t, c, set)
	for name, extra := range pods {
		labels := map[string]string{"app": app}
		maps.Copy(labels, extra)
		svCreatePod(t, ns, name, labels, nil)
	}
	svWaitReady(t, ns, "app="+app, len(pods))
	n := int32(len(pods))
	return waitSidecarSet(t, c, set.Name, "counts its pods", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == n && s.Status.UpdatedReadyPods == n
	})
}

func svAll(image string, names ...string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		out[n] = image
	}
	return out
}

// 3a. updateStrategy.selector: only the pods it selects are upgraded; removing it upgrades the rest.
func TestSidecarSetVariantUpdateSelector(t *testing.T) {
	t.Parallel()
	c := kruiseClient(t)
	ns := namespace(t)
	const v1, v2 = "registry.example/agent:v1", "registry.example/agent:v2"
	set := svUpgradeSet(t, c, ns, "sel", map[string]map[string]string{
		"a": {"upgrade": "yes"}, "b": {"upgrade": "yes"}, "c": nil, "d": {"upgrade": "no"}}, func(s *appsv1beta1.SidecarSet) {
		s.Spec.UpdateStrategy.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"upgrade": "yes"}}
		s.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(4))
	})
	svPatch(t, c, set, fmt.Sprintf(`{"spec":{"containers":[{"name":"agent","image":%q}]}}`, v2))
	waitSidecarSet(t, c, set.Name, "upgraded the selected pods", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == 4 && s.Status.UpdatedPods == 2 && s.Status.UpdatedReadyPods == 2 && s.Status.ReadyPods == 4
	})
	harness.Consistently(t, 3*time.Second, "the pods the selector leaves keep v1", func() (bool, string) {
		return svImagesAre(t, ns, "app=sel", "agent", map[string]string{"a": v2, "b": v2, "c": v1, "d": v1})
	})
	svPatch(t, c, set, `{"spec":{"updateStrategy":{"selector":null}}}`)
	waitSidecarSet(t, c, set.Name, "upgraded every pod", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == 4 && s.Status.UpdatedReadyPods == 4
	})
	if ok, seen := svImagesAre(t, ns, "app=sel", "agent", svAll(v2, "a", "b", "c", "d")); !ok {
		t.Error(seen)
	}
}

// 3b. priorityStrategy: with maxUnavailable 1 the pods are upgraded one at a time, highest weight
// first (the names would order them the other way).
func TestSidecarSetVariantPriority(t *testing.T) {
	t.Parallel()
	c := kruiseClient(t)
	ns := namespace(t)
	const v2 = "registry.example/agent:v2"
	set := svUpgradeSet(t, c, ns, "prio", map[string]map[string]string{
		"a-low": nil, "b-mid": {"tier": "mid"}, "c-high": {"tier": "high"}}, func(s *appsv1beta1.SidecarSet) {
		s.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		s.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{
			{Weight: 50, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "mid"}}},
			{Weight: 100, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "high"}}},
		}}
	})
	order := svUpgradeOrder(t, ns, "app=prio", "agent", v2)
	notReady, stop := watchNotReady(t, ns, "app=prio")
	svPatch(t, c, set, fmt.Sprintf(`{"spec":{"containers":[{"name":"agent","image":%q}]}}`, v2))
	waitSidecarSet(t, c, set.Name, "upgraded every pod", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == 3 && s.Status.UpdatedReadyPods == 3
	})
	stop()
	harness.Eventually(t, 5*time.Second, "every upgrade seen", func() (bool, string) {
		return len(order()) == 3, fmt.Sprint(order())
	})
	if got, want := order(), []string{"c-high", "b-mid", "a-low"}; !slices.Equal(got, want) {
		t.Errorf("upgrade order %v, want %v (highest weight first)", got, want)
	}
	if peak := notReady(); peak > 1 {
		t.Errorf("%d pods NotReady at once; maxUnavailable is 1", peak)
	}
}

// 3c. A sidecar image that never starts stops the upgrade at maxUnavailable pods: the others keep
// the old image; the status shows maxUnavailable pods updated and none of them ready. A good image
// then rolls out to every pod, the stuck ones first.
func TestSidecarSetVariantBrokenImageStopsAtMaxUnavailable(t *testing.T) {
	t.Parallel()
	c := kruiseClient(t)
	ns := namespace(t)
	const v1, broken, v3 = "registry.example/agent:v1", "registry.example/agent:broken", "registry.example/agent:v3"
	names := []string{"p0", "p1", "p2", "p3"}
	pods := map[string]map[string]string{}
	for _, n := range names {
		pods[n] = nil
	}
	const maxUnavailable = 2
	set := svUpgradeSet(t, c, ns, "broken", pods, func(s *appsv1beta1.SidecarSet) {
		s.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(maxUnavailable))
	})
	svPatch(t, c, set, fmt.Sprintf(`{"spec":{"containers":[{"name":"agent","image":%q}]}}`, broken))
	waitSidecarSet(t, c, set.Name, "stuck at maxUnavailable", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == 4 && s.Status.UpdatedPods == maxUnavailable && s.Status.UpdatedReadyPods == 0 &&
			s.Status.ReadyPods == 4-maxUnavailable
	})
	harness.Consistently(t, 5*time.Second, "the rollout stays stuck", func() (bool, string) {
		n := map[string]int{}
		for _, img := range svImages(t, ns, "app=broken", "agent") {
			n[img]++
		}
		got := &appsv1beta1.SidecarSet{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: set.Name}, got); err != nil {
			return false, err.Error()
		}
		st := got.Status
		return n[broken] == maxUnavailable && n[v1] == 4-maxUnavailable && st.UpdatedPods == maxUnavailable && st.UpdatedReadyPods == 0,
			fmt.Sprintf("images %v, status %+v", n, st)
	})
	for name, p := range podsByName(t, ns, "app=broken") {
		if svContainer(p.Spec.Containers, "agent").Image == broken && condition(p, corev1.PodReady) == corev1.ConditionTrue {
			t.Errorf("pod %s is Ready on the broken image: %s", name, describe(p))
		}
	}
	svPatch(t, c, set, fmt.Sprintf(`{"spec":{"containers":[{"name":"agent","image":%q}]}}`, v3))
	waitSidecarSet(t, c, set.Name, "rolled the good image out", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == 4 && s.Status.UpdatedReadyPods == 4
	})
	if ok, seen := svImagesAre(t, ns, "app=broken", "agent", svAll(v3, names...)); !ok {
		t.Error(seen)
	}
}

// 3d. updateStrategy.type NotUpdate: a new image upgrades no pod of the CloneSet, while a pod
// created afterwards gets it.
func TestSidecarSetVariantNotUpdate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const v1, v2 = "registry.example/agent:v1", "registry.example/agent:v2"
	set := newSidecarSet("noup-"+ns, ns, "noup", corev1.Container{Name: "agent", Image: v1}, "")
	set.Spec.UpdateStrategy.Type = appsv1beta1.SidecarSetNotUpdateStrategy
	set = createSidecarSet(t, c, set)
	clone := newCloneSet(ns, "noup", 2, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "noup", "all ready", harness.RolledOut(2))
	waitSidecarSet(t, c, set.Name, "counts the pods", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == 2 && s.Status.UpdatedReadyPods == 2
	})
	before := svImages(t, ns, "app=noup", "agent")
	svPatch(t, c, set, fmt.Sprintf(`{"spec":{"containers":[{"name":"agent","image":%q}]}}`, v2))
	waitSidecarSet(t, c, set.Name, "reports no pod updated", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == 2 && s.Status.UpdatedPods == 0 && s.Status.ReadyPods == 2
	})
	harness.Consistently(t, 3*time.Second, "NotUpdate leaves the pods at v1", func() (bool, string) {
		return svImagesAre(t, ns, "app=noup", "agent", before)
	})
	patchCloneSet(t, c, clone, `{"spec":{"replicas":3}}`)
	waitCloneSet(t, c, ns, "noup", "scaled out", harness.RolledOut(3))
	want := maps.Clone(before)
	for name, img := range svImages(t, ns, "app=noup", "agent") {
		if _, old := before[name]; !old {
			if img != v2 {
				t.Errorf("pod %s created after the change runs %q, want %s", name, img, v2)
			}
			want[name] = v2
		}
	}
	waitSidecarSet(t, c, set.Name, "counts the new pod as updated", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == 3 && s.Status.UpdatedPods == 1 && s.Status.UpdatedReadyPods == 1
	})
	harness.Consistently(t, 2*time.Second, "the old pods stay at v1", func() (bool, string) {
		return svImagesAre(t, ns, "app=noup", "agent", want)
	})
}

// 3e. injectionStrategy.paused: new pods get no sidecar while the pods that have it are still
// upgraded; resuming injects the latest sidecar again.
func TestSidecarSetVariantInjectionPaused(t *testing.T) {
	t.Parallel()
	c := kruiseClient(t)
	ns := namespace(t)
	const v2 = "registry.example/agent:v2"
	set := svUpgradeSet(t, c, ns, "inj", map[string]map[string]string{"first": nil}, nil)
	svPatch(t, c, set, `{"spec":{"injectionStrategy":{"paused":true}}}`)
	waitRegistered(t, c, set.Name)
	p := svCreatePod(t, ns, "paused", map[string]string{"app": "inj"}, nil)
	if names := containerNames(p.Spec.Containers); !slices.Equal(names, []string{"app"}) {
		t.Errorf("pod created while injection is paused: containers %v, want [app]", names)
	}
	if v, ok := p.Annotations[sidecarrules.InjectedListAnnotation]; ok {
		t.Errorf("pod created while injection is paused: %s = %q", sidecarrules.InjectedListAnnotation, v)
	}
	svPatch(t, c, set, fmt.Sprintf(`{"spec":{"containers":[{"name":"agent","image":%q}]}}`, v2))
	waitSidecarSet(t, c, set.Name, "upgraded the injected pod", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == 1 && s.Status.UpdatedReadyPods == 1
	})
	if ok, seen := svImagesAre(t, ns, "app=inj", "agent", map[string]string{"first": v2, "paused": ""}); !ok {
		t.Error(seen)
	}
	svPatch(t, c, set, `{"spec":{"injectionStrategy":{"paused":false}}}`)
	waitRegistered(t, c, set.Name)
	q := svCreatePod(t, ns, "resumed", map[string]string{"app": "inj"}, nil)
	if got := svContainer(q.Spec.Containers, "agent"); got == nil || got.Image != v2 {
		t.Errorf("pod created after resuming: sidecar %+v, want image %s", got, v2)
	}
}

// 4. Conflicts: a second SidecarSet that may select the same pods with a container (or init
// container) of the same name is refused by the validating webhook, naming the other SidecarSet;
// the same name on disjoint pods (another label value, another namespace) is accepted, and an
// update that makes such a SidecarSet overlap is refused.
func TestSidecarSetVariantConflictRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	agent := corev1.Container{Name: "agent", Image: "registry.example/agent:v1"}
	first := newSidecarSet("conflict-a-"+ns, ns, "x", agent, "")
	first.Spec.InitContainers = []appsv1beta1.SidecarSetContainer{{Container: corev1.Container{Name: "init-a", Image: "registry.example/setup:v1"}}}
	first = createSidecarSet(t, c, first)

	svRefused(t, c, newSidecarSet("conflict-b-"+ns, ns, "x", agent, ""), "a container of the same name", first.Name, "agent")
	initDup := newSidecarSet("conflict-e-"+ns, ns, "x", corev1.Container{Name: "other", Image: "registry.example/other:v1"}, "")
	initDup.Spec.InitContainers = []appsv1beta1.SidecarSetContainer{{Container: corev1.Container{Name: "init-a", Image: "registry.example/setup:v2"}}}
	svRefused(t, c, initDup, "an init container of the same name", first.Name, "init-a")
	// An overlapping selector written otherwise (In on the same key) is still an overlap.
	expr := newSidecarSet("conflict-f-"+ns, ns, "x", agent, "")
	expr.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"x", "z"}}}}
	svRefused(t, c, expr, "a selector In [x z] against app=x", first.Name, "agent")

	disjoint := createSidecarSet(t, c, newSidecarSet("conflict-c-"+ns, ns, "y", agent, ""))
	createSidecarSet(t, c, newSidecarSet("conflict-d-"+ns, ns+"-elsewhere", "x", agent, ""))

	err := c.Patch(ctx, disjoint, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"selector":{"matchLabels":{"app":"x"}}}}`)))
	switch {
	case err == nil:
		t.Errorf("update of %s to select app=x accepted; want it refused (it conflicts with %s)", disjoint.Name, first.Name)
	case !strings.Contains(err.Error(), first.Name):
		t.Errorf("update of %s refused with %q, which does not name %s", disjoint.Name, err, first.Name)
	}

	// The pods get the first SidecarSet's sidecars, once.
	p := svCreatePod(t, ns, "x", map[string]string{"app": "x"}, nil)
	if names := containerNames(p.Spec.Containers); !slices.Equal(names, []string{"agent", "app"}) {
		t.Errorf("pod app=x: containers %v, want [agent app]", names)
	}
	if names := containerNames(p.Spec.InitContainers); !slices.Equal(names, []string{"init-a"}) {
		t.Errorf("pod app=x: init containers %v, want [init-a]", names)
	}
	list := &appsv1beta1.SidecarSetList{}
	if err := c.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	var mine []string
	for _, s := range list.Items {
		if strings.HasSuffix(s.Name, ns) || strings.HasSuffix(s.Name, ns+"-elsewhere") {
			mine = append(mine, s.Name)
		}
	}
	sort.Strings(mine)
	if want := []string{"conflict-a-" + ns, "conflict-c-" + ns, "conflict-d-" + ns}; !reflect.DeepEqual(mine, want) {
		t.Errorf("SidecarSets of this test %v, want %v", mine, want)
	}
}

// spec.customVersion (v1beta1) labels the SidecarSet's revisions, so that
// injectionStrategy.revision.customVersion finds them; a v1alpha1 read shows it as the
// SidecarSet's label apps.kruise.io/sidecarset-custom-version, as OpenKruise converts it.
func TestSidecarSetVariantCustomVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const v1, v2 = "registry.example/agent:v1", "registry.example/agent:v2"
	s := newSidecarSet("cv-"+ns, ns, "cv", corev1.Container{Name: "agent", Image: v1}, "")
	s.Spec.CustomVersion = "one"
	set := createSidecarSet(t, c, s)
	first := waitSidecarSet(t, c, set.Name, "has a revision", func(s *appsv1beta1.SidecarSet) bool { return s.Status.LatestRevision != "" })
	customVersionOf := func(revision string) string {
		t.Helper()
		rev, err := cs.AppsV1().ControllerRevisions(sandbox.KruiseNamespace).Get(ctx, revision, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return rev.Labels[sidecarrules.CustomVersionLabel]
	}
	if got := customVersionOf(first.Status.LatestRevision); got != "one" {
		t.Errorf("revision %s: custom version label %q, want one", first.Status.LatestRevision, got)
	}
	alpha := &appsv1alpha1.SidecarSet{}
	if err := c.Get(ctx, client.ObjectKey{Name: set.Name}, alpha); err != nil {
		t.Fatal(err)
	}
	if got := alpha.Labels[appsv1beta1.SidecarSetCustomVersionLabel]; got != "one" {
		t.Errorf("v1alpha1 read: labels %v, want %s=one", alpha.Labels, appsv1beta1.SidecarSetCustomVersionLabel)
	}

	// v2 under another custom version, paused; new pods pinned to the custom version "one".
	svPatch(t, c, set, fmt.Sprintf(`{"spec":{"customVersion":"two","containers":[{"name":"agent","image":%q}],`+
		`"updateStrategy":{"paused":true},"injectionStrategy":{"revision":{"customVersion":"one"}}}}`, v2))
	waitRegistered(t, c, set.Name)
	second := waitSidecarSet(t, c, set.Name, "has a new revision", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.LatestRevision != "" && s.Status.LatestRevision != first.Status.LatestRevision
	})
	if got := customVersionOf(second.Status.LatestRevision); got != "two" {
		t.Errorf("revision %s: custom version label %q, want two", second.Status.LatestRevision, got)
	}
	p := svCreatePod(t, ns, "pinned", map[string]string{"app": "cv"}, nil)
	if got := svContainer(p.Spec.Containers, "agent"); got == nil || got.Image != v1 {
		t.Errorf("pod created while pinned to custom version one: sidecar %+v, want image %s", got, v1)
	}
}
