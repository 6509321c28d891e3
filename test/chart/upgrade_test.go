package chart

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// cluster is an API server that answers the chart's lookups (discovery of the kinds looked up, GETs
// of objects by path) with the objects a release of OpenKruise's chart left, and 404 otherwise.
func cluster(t *testing.T, objects map[string]any) (kubeconfig string) {
	t.Helper()
	resources := func(gv string, names ...[3]string) map[string]any {
		var list []map[string]any
		for _, n := range names {
			list = append(list, map[string]any{"name": n[0], "kind": n[1], "namespaced": n[2] == "namespaced", "verbs": []string{"get", "list"}})
		}
		return map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list}
	}
	answers := map[string]any{
		"/api/v1":                       resources("v1", [3]string{"namespaces", "Namespace", "cluster"}),
		"/apis/apps/v1":                 resources("apps/v1", [3]string{"daemonsets", "DaemonSet", "namespaced"}),
		"/apis/apiextensions.k8s.io/v1": resources("apiextensions.k8s.io/v1", [3]string{"customresourcedefinitions", "CustomResourceDefinition", "cluster"}),
	}
	for path, obj := range objects {
		answers[path] = obj
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if obj, ok := answers[r.URL.Path]; ok && r.Method == http.MethodGet {
			_ = json.NewEncoder(w).Encode(obj)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404})
	}))
	t.Cleanup(srv.Close)
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	config := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + srv.URL + "}}]\n" +
		"contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\ncurrent-context: c\n"
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// openKruiseObject is an object as OpenKruise's chart leaves it, as release kruise of namespace
// default (OpenKruise's install instructions give no -n): Helm's ownership annotations, plus extra.
func openKruiseObject(apiVersion, kind, namespace, name string, extra map[string]string, spec map[string]any) map[string]any {
	annotations := map[string]string{"meta.helm.sh/release-name": "kruise", "meta.helm.sh/release-namespace": "default"}
	for k, v := range extra {
		annotations[k] = v
	}
	meta := map[string]any{"name": name, "annotations": annotations, "labels": map[string]string{"app.kubernetes.io/managed-by": "Helm"}}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
	if spec != nil {
		obj["spec"] = spec
	}
	return obj
}

// `helm upgrade` of an OpenKruise release to Kruise's chart: OpenKruise's chart created the namespace
// kruise-system (without helm.sh/resource-policy), so a rendering without it would make Helm delete
// it, and everything in it. Kruise's chart renders it (kept from then on), or refuses naming the key
// to set; it keeps the DaemonSet's immutable selector; it refuses to drop CRDs that Helm would delete.
func TestUpgradeFromOpenKruiseRelease(t *testing.T) {
	openKruise := map[string]any{
		"/api/v1/namespaces/kruise-system": openKruiseObject("v1", "Namespace", "", "kruise-system", nil, nil),
		"/apis/apps/v1/namespaces/kruise-system/daemonsets/kruise-daemon": openKruiseObject("apps/v1", "DaemonSet", "kruise-system", "kruise-daemon", nil,
			map[string]any{"selector": map[string]any{"matchLabels": map[string]string{"control-plane": "daemon"}}}),
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clonesets.apps.kruise.io": openKruiseObject("apiextensions.k8s.io/v1",
			"CustomResourceDefinition", "", "clonesets.apps.kruise.io", nil, nil),
	}
	kubeconfig := cluster(t, openKruise)
	upgrade := []string{"--dry-run=server", "--kubeconfig", kubeconfig}

	// The user's values name no namespace: everything would move to "default".
	msg := refusal(t, "default", upgrade...)
	if !strings.Contains(msg, "installation.namespace") || !strings.Contains(msg, "kruise-system") {
		t.Errorf("an upgrade that would delete kruise-system: refused with %q, want installation.namespace named", msg)
	}

	objs := render(t, "default", append(upgrade, "--set", "installation.namespace=kruise-system")...)
	ns := objs.find("Namespace", "kruise-system")
	if ns == nil || ns.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
		t.Errorf("the namespace OpenKruise's chart created is not rendered with helm.sh/resource-policy=keep: %v", ns)
	}
	var ds appsv1.DaemonSet
	objs.typed(t, "DaemonSet", "kruise-daemon", &ds)
	if sel := ds.Spec.Selector.MatchLabels; len(sel) != 1 || sel["control-plane"] != "daemon" || ds.Spec.Template.Labels["control-plane"] != "daemon" ||
		ds.Spec.Template.Labels["app.kubernetes.io/component"] != "daemon" {
		t.Errorf("the DaemonSet's immutable selector is not kept: selector %v, pod labels %v", sel, ds.Spec.Template.Labels)
	}

	// crds.managed=false would make Helm delete OpenKruise's CRDs (no keep policy on them).
	msg = refusal(t, "default", append(upgrade, "--set", "installation.namespace=kruise-system,crds.managed=false")...)
	if !strings.Contains(msg, "crds.managed") {
		t.Errorf("dropping CRDs Helm would delete: refused with %q, want crds.managed named", msg)
	}
	// Once they carry the keep policy (an upgrade with crds.managed=true puts it there), they may go.
	openKruise["/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clonesets.apps.kruise.io"] = openKruiseObject("apiextensions.k8s.io/v1",
		"CustomResourceDefinition", "", "clonesets.apps.kruise.io", map[string]string{"helm.sh/resource-policy": "keep"}, nil)
	kubeconfig = cluster(t, openKruise)
	objs = render(t, "default", "--dry-run=server", "--kubeconfig", kubeconfig, "--set", "installation.namespace=kruise-system,crds.managed=false")
	if n := objs.count("CustomResourceDefinition"); n != 0 {
		t.Errorf("crds.managed=false rendered %d CRDs", n)
	}
}
