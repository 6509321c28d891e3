package cli

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/restmapper"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// discoveryMapper is the RESTMapper kubectl builds from the discovery of a cluster with Kruise
// installed: the built-in groups first, as the API server lists them, then apps.kruise.io with
// the short names Kruise's CRDs declare (sts for both StatefulSets, as OpenKruise's CRD has it).
func discoveryMapper() meta.RESTMapper {
	res := func(name, singular, kind string, short ...string) metav1.APIResource {
		return metav1.APIResource{Name: name, SingularName: singular, Kind: kind, Namespaced: true, ShortNames: short,
			Verbs: metav1.Verbs{"get", "list", "patch"}}
	}
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{res("pods", "pod", "Pod", "po")}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{res("deployments", "deployment", "Deployment", "deploy"),
			res("statefulsets", "statefulset", "StatefulSet", "sts"), res("daemonsets", "daemonset", "DaemonSet", "ds")}},
		{GroupVersion: "apps.kruise.io/v1beta1", APIResources: []metav1.APIResource{res("statefulsets", "statefulset", "StatefulSet", "sts", "asts"),
			res("daemonsets", "daemonset", "DaemonSet", "daemon", "ads")}},
		{GroupVersion: "apps.kruise.io/v1alpha1", APIResources: []metav1.APIResource{res("clonesets", "cloneset", "CloneSet", "clone"),
			res("statefulsets", "statefulset", "StatefulSet", "sts", "asts"), res("uniteddeployments", "uniteddeployment", "UnitedDeployment", "ud")}},
	}
	var groups []*restmapper.APIGroupResources
	for _, l := range lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		if len(groups) == 0 || groups[len(groups)-1].Group.Name != gv.Group {
			groups = append(groups, &restmapper.APIGroupResources{Group: metav1.APIGroup{Name: gv.Group,
				PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: l.GroupVersion, Version: gv.Version}},
				VersionedResources: map[string][]metav1.APIResource{}})
		}
		g := groups[len(groups)-1]
		g.Group.Versions = append(g.Group.Versions, metav1.GroupVersionForDiscovery{GroupVersion: l.GroupVersion, Version: gv.Version})
		g.VersionedResources[gv.Version] = l.APIResources
	}
	disco := &fakediscovery.FakeDiscovery{Fake: &k8stesting.Fake{Resources: lists}}
	return restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(groups), disco, nil)
}

// With discovery, a TYPE is what kubectl takes it for: the CRDs' short and full names, singular
// or plural, qualified or not, and Kruise's own aliases discovery does not know.
func TestResolveKindFromDiscovery(t *testing.T) {
	mapper := discoveryMapper()
	for want, names := range map[*Kind][]string{
		CloneSetKind: {"clone", "clonesets", "CloneSet", "cloneset.apps.kruise.io", "clonesets.v1alpha1.apps.kruise.io", "clones",
			"clone.apps.kruise.io"},
		StatefulSetKind: {"asts", "statefulset.apps.kruise.io", "statefulsets.v1beta1.apps.kruise.io", "advancedstatefulset"},
		DaemonSetKind:   {"ads", "daemon", "daemonsets.apps.kruise.io", "advanceddaemonset"},
	} {
		for _, kind := range names {
			if k, name, err := parseWorkload(mapper, []string{kind + "/web"}); err != nil || k != want || name != "web" {
				t.Errorf("%s/web: %v %q, %v; want the %s", kind, k, name, err, want.Noun)
			}
			if k, _, err := parseWorkload(mapper, []string{kind, "web"}); err != nil || k != want {
				t.Errorf("%s web: %v, %v; want the %s", kind, k, err, want.Noun)
			}
		}
	}
}

// sts and ds resolve to the native apps/v1 kinds, as in kubectl (the built-in group ranks first),
// and are refused naming the Kruise form; other kinds name what they resolved to.
func TestResolveKindRefusals(t *testing.T) {
	mapper := discoveryMapper()
	for arg, says := range map[string][]string{
		"sts/db":              {"native apps/v1 StatefulSet", "asts/NAME"},
		"statefulsets/db":     {"native apps/v1 StatefulSet", "statefulset.apps.kruise.io/NAME"},
		"statefulset.apps/db": {"native apps/v1 StatefulSet"},
		"ds/agent":            {"native apps/v1 DaemonSet", "ads/NAME"},
		"deploy/web":          {"native apps/v1 Deployment", "kubectl kruise migrate"},
		"ud/web":              {"UnitedDeployment (apps.kruise.io/v1alpha1)", "does not drive"},
		"po/web":              {"native v1 Pod"},
		"rollouts/web":        {`no resource type "rollouts"`, "is Kruise installed"},
		"clone/":              {"empty"},
	} {
		_, _, err := parseWorkload(mapper, []string{arg})
		for _, s := range says {
			if err == nil || !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %v, want an error saying %q", arg, err, s)
			}
		}
	}
}

// A command resolves its TYPE through the Env's mapper.
func TestCommandsResolveThroughDiscovery(t *testing.T) {
	f := fixtures(t)[0] // asts/db
	env, _, _ := fakeEnv(t, f.objs...)
	env.mapper = discoveryMapper()
	if out, err := kubectlKruise(env, "rollout", "history", "statefulsets.v1beta1.apps.kruise.io", "db"); err != nil || !strings.Contains(out, "app=app:v1") {
		t.Errorf("history by the versioned resource: %v\n%s", err, out)
	}
	if _, err := kubectlKruise(env, "rollout", "status", "sts/db"); err == nil || !strings.Contains(err.Error(), "native apps/v1 StatefulSet") {
		t.Errorf("status sts/db: %v, want it refused as the native StatefulSet", err)
	}

	cs := fixtures(t)[1] // clone/web, named as OpenKruise's kubectl-kruise names it: scaledown CloneSet NAME
	env, c, _ := fakeEnv(t, cs.objs...)
	env.mapper = discoveryMapper()
	if out, err := kubectlKruise(env, "scaledown", "CloneSet", "web", "--pods", "web-1"); err != nil || !strings.Contains(out, "scaled down to 2") {
		t.Errorf("scaledown CloneSet web: %v\n%s", err, out)
	}
	got := &appsv1alpha1.CloneSet{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(cs.obj), got); err != nil || got.Spec.ScaleStrategy.PodsToDelete[0] != "web-1" {
		t.Errorf("scaledown: %v %v", err, got.Spec.ScaleStrategy.PodsToDelete)
	}
}
