package main

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
)

// sidecarImage is the fake image of the benchmark's sidecars at version v.
func sidecarImage(v string) string { return "registry.example/bench-sidecar:" + v }

// benchSidecarSet selects the pods labelled labels in namespace ns and injects one container
// (before the app container, OpenKruise's default).
func benchSidecarSet(name, ns string, labels map[string]string, container string) *appsv1beta1.SidecarSet {
	return &appsv1beta1.SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1beta1.SidecarSetSpec{
			Selector:          &metav1.LabelSelector{MatchLabels: labels},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			Containers: []appsv1beta1.SidecarSetContainer{{
				Container: corev1.Container{Name: container, Image: sidecarImage("v1")}}},
		}}
}

// createSidecarSets creates sets and waits until the injection of each is registered (the
// registrar's annotation shows its generation): from then on every pod created that it selects
// gets its sidecar.
func createSidecarSets(ctx context.Context, c client.Client, sets ...*appsv1beta1.SidecarSet) error {
	for _, s := range sets {
		if err := c.Create(ctx, s); err != nil {
			return err
		}
	}
	for _, s := range sets {
		if err := waitSidecarSet(ctx, c, s, func(s *appsv1beta1.SidecarSet) bool {
			return s.Annotations[sidecarrules.RegisteredAnnotation] == strconv.FormatInt(s.Generation, 10)
		}); err != nil {
			return err
		}
	}
	return nil
}

// deleteSidecarSets deletes sets (cluster-scoped: deleting the namespace leaves them).
func deleteSidecarSets(ctx context.Context, c client.Client, sets ...*appsv1beta1.SidecarSet) error {
	for _, s := range sets {
		if err := client.IgnoreNotFound(c.Delete(ctx, s)); err != nil {
			return err
		}
	}
	return nil
}

// runSidecarSet measures a SidecarSet's in-place sidecar upgrade (sidecarset-upgrade): a
// SidecarSet selects a CloneSet's n pods; the CloneSet scales up to n with the sidecar injected at
// creation by the pod webhook (sidecarset-scaleup: the CloneSet's scale-up plus the webhook and the
// SidecarSet controller's status), then the SidecarSet's image changes with maxUnavailable 20%
// until every pod runs it and is ready (status.updatedReadyPods n at the new generation).
func runSidecarSet(ctx context.Context, sb *sandbox.Sandbox, c client.Client, n, mgrPID int, prof *profiler) ([]result, error) {
	ns, err := namespace(ctx, c, "bench-sidecarset")
	if err != nil {
		return nil, err
	}
	labels := map[string]string{"app": "bench"}
	set := benchSidecarSet(ns, ns, labels, "sidecar")
	set.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromString(sidecarSetUpgradeMaxUnavailable + "%"))
	if err := createSidecarSets(ctx, c, set); err != nil {
		return nil, err
	}
	mgr := isUser(sandbox.KruiseManagerUser)
	var out []result
	cs := benchCloneSet(ns, n, labels)
	r, err := measureScaleUp(ctx, sb, c, "sidecarset-scaleup", cs, n, mgrPID, mgr)
	if err != nil {
		return nil, err
	}
	out = append(out, r)
	// The SidecarSet counts the pods, all at its revision, before its image changes (not measured).
	upgraded := func(s *appsv1beta1.SidecarSet) bool {
		st := &s.Status
		return st.ObservedGeneration == s.Generation && st.MatchedPods == int32(n) && st.UpdatedReadyPods == int32(n)
	}
	if err := waitSidecarSet(ctx, c, set, upgraded); err != nil {
		return nil, err
	}
	stopProfile := prof.start("sidecarset-upgrade")
	r, err = measure(sb, "sidecarset-upgrade", "kruise-manager", n, mgrPID, mgr, func() error {
		p := fmt.Sprintf(`[{"op":"replace","path":"/spec/containers/0/image","value":%q}]`, sidecarImage("v2"))
		if err := c.Patch(ctx, set, client.RawPatch(types.JSONPatchType, []byte(p))); err != nil {
			return err
		}
		return waitSidecarSet(ctx, c, set, upgraded)
	})
	if perr := stopProfile(); err == nil {
		err = perr
	}
	if err != nil {
		return nil, err
	}
	out = append(out, r)
	if err := deleteNamespace(ctx, c, ns); err != nil {
		return nil, err
	}
	return out, deleteSidecarSets(ctx, c, set)
}

// waitSidecarSet waits until the SidecarSet satisfies cond.
func waitSidecarSet(ctx context.Context, c client.Client, s *appsv1beta1.SidecarSet, cond func(*appsv1beta1.SidecarSet) bool) error {
	return poll(ctx, "SidecarSet "+s.Name, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
			return false, err
		}
		return cond(s), nil
	})
}
