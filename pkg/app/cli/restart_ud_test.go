package cli

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/controller/uniteddeployment"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

func unitedDeployment(tpl appsv1alpha1.UnitedDeploymentSubsetTemplate, subsets ...string) *appsv1alpha1.UnitedDeployment {
	ud := &appsv1alpha1.UnitedDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: types.UID("ud-uid")},
		Spec: appsv1alpha1.UnitedDeploymentSpec{Template: tpl}}
	for _, s := range subsets {
		ud.Spec.Topology.Subsets = append(ud.Spec.Topology.Subsets, appsv1alpha1.UnitedDeploymentSubset{Name: s})
	}
	return ud
}

// subsetMeta is the metadata of ud's workload for subset (owned is false for a stranger's).
func subsetMeta(ud *appsv1alpha1.UnitedDeployment, name, subset string, owned bool) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{uniteddeployment.SubsetNameLabel: subset}}
	if owned {
		m.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(ud, appsv1alpha1.GroupVersion.WithKind("UnitedDeployment"))}
	}
	return m
}

// rollout restart ud/NAME restarts each subset's CloneSet as rollout restart restarts a CloneSet
// (here --recreate: env RESTARTED_AT), in the topology's order, and leaves a CloneSet it does not
// control alone.
func TestRestartUnitedDeploymentCloneSets(t *testing.T) {
	ud := unitedDeployment(appsv1alpha1.UnitedDeploymentSubsetTemplate{CloneSetTemplate: &appsv1alpha1.UnitedDeploymentCloneSetTemplate{}}, "zone-b", "zone-a")
	tpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}}}
	var objs []client.Object
	for _, m := range []metav1.ObjectMeta{subsetMeta(ud, "web-zone-a-x", "zone-a", true), subsetMeta(ud, "web-zone-b-y", "zone-b", true),
		subsetMeta(ud, "other", "zone-a", false)} {
		objs = append(objs, &appsv1alpha1.CloneSet{ObjectMeta: m, Spec: appsv1alpha1.CloneSetSpec{Template: *tpl.DeepCopy()}})
	}
	env, c, _ := fakeEnv(t, append(objs, ud)...)
	out, err := kubectlKruise(env, "rollout", "restart", "ud/web", "--recreate")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	b, a := strings.Index(out, "subset zone-b: cloneset web-zone-b-y"), strings.Index(out, "subset zone-a: cloneset web-zone-a-x")
	if b < 0 || a < b || !strings.Contains(out, "uniteddeployment.apps.kruise.io/web restarted: 2 subsets") {
		t.Errorf("want zone-b then zone-a restarted:\n%s", out)
	}
	for name, restarted := range map[string]bool{"web-zone-a-x": true, "web-zone-b-y": true, "other": false} {
		cs := &appsv1alpha1.CloneSet{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, cs); err != nil {
			t.Fatal(err)
		}
		if got := len(cs.Spec.Template.Spec.Containers[0].Env) == 1; got != restarted {
			t.Errorf("cloneset %s restarted %t, want %t", name, got, restarted)
		}
	}
}

// A UnitedDeployment of Deployments restarts each as kubectl does: the restartedAt annotation.
func TestRestartUnitedDeploymentDeployments(t *testing.T) {
	ud := unitedDeployment(appsv1alpha1.UnitedDeploymentSubsetTemplate{DeploymentTemplate: &appsv1alpha1.UnitedDeploymentDeploymentTemplate{}}, "a")
	d := &appsv1.Deployment{ObjectMeta: subsetMeta(ud, "web-a-x", "a", true)}
	env, c, _ := fakeEnv(t, ud, d)
	out, err := kubectlKruise(env, "rollout", "restart", "uniteddeployment", "web")
	if err != nil || !strings.Contains(out, "deployment/web-a-x restarted") {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	if d.Spec.Template.Annotations[inplace.RestartedAtAnnotation] == "" {
		t.Errorf("deployment template annotations %v", d.Spec.Template.Annotations)
	}
	empty := unitedDeployment(appsv1alpha1.UnitedDeploymentSubsetTemplate{DeploymentTemplate: &appsv1alpha1.UnitedDeploymentDeploymentTemplate{}}, "a")
	empty.Name = "empty"
	env, _, _ = fakeEnv(t, empty)
	wantError(t, env, `uniteddeployment "empty" has no subset workloads yet`, "rollout", "restart", "ud/empty")
}
