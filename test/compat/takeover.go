package compat

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// Takeover is the fixture of objects OpenKruise v1.9.0's own manager wrote (the oracle's
// takeover/ folder): CloneSets with their pods, revisions and claims, as dumped; and from its
// workloads/ folder the Advanced StatefulSets named in TakeoverStatefulSets, the Advanced
// DaemonSets named in TakeoverDaemonSets, the UnitedDeployments named in
// TakeoverUnitedDeployments with their subset CloneSets, and the CloneSets named in
// TakeoverSidecarTargets with theirs, and the SidecarSets named in TakeoverSidecarSets.
type Takeover struct {
	CloneSets    []v1alpha1.CloneSet
	StatefulSets []v1beta1.StatefulSet
	DaemonSets   []v1beta1.DaemonSet
	// SidecarSets are cluster-scoped; their revisions live in the manager's namespace, which the
	// dump does not hold.
	SidecarSets []v1beta1.SidecarSet
	// SidecarTargets are the CloneSets whose pods SidecarSets injected into and upgraded: apart
	// from CloneSets, which the takeover tests roll forward themselves.
	SidecarTargets []v1alpha1.CloneSet
	// UnitedDeployments and the CloneSets of their subsets (owned by them).
	UnitedDeployments []v1alpha1.UnitedDeployment
	SubsetCloneSets   []v1alpha1.CloneSet
	Revisions         []appsv1.ControllerRevision
	Pods              []corev1.Pod
	Claims            []corev1.PersistentVolumeClaim
	Volumes           []corev1.PersistentVolume
}

// TakeoverStatefulSets are the Advanced StatefulSets of the workloads/ dump the takeover tests
// load (same namespace and nodes as the CloneSets; their object names do not collide).
var TakeoverStatefulSets = []string{"asts-inplace"}

// TakeoverDaemonSets are the Advanced DaemonSets of the workloads/ dump the takeover tests load
// (their pods run on kwok-node-0..3, one each).
var TakeoverDaemonSets = []string{"ads-inplace"}

// TakeoverUnitedDeployments are the UnitedDeployments of the workloads/ dump the takeover tests
// load, with their subset CloneSets (named <ud>-<subset>-…).
var TakeoverUnitedDeployments = []string{"ud"}

// TakeoverSidecarSets are the SidecarSets of the workloads/ dump the takeover tests load, and
// TakeoverSidecarTargets the CloneSets of that dump whose pods they injected into.
var (
	TakeoverSidecarSets    = []string{"sc-log"}
	TakeoverSidecarTargets = []string{"sc-target"}
)

// ReadTakeover reads the takeover fixture under the oracle folder.
func ReadTakeover(repoRoot string) (*Takeover, error) {
	dir := filepath.Join(OracleDir(repoRoot), "takeover")
	tk := &Takeover{}
	var cs v1alpha1.CloneSetList
	if err := readDump(dir, &cs, tk); err != nil {
		return nil, err
	}
	tk.CloneSets = cs.Items
	var sets v1beta1.StatefulSetList
	part := &Takeover{}
	if err := readDump(filepath.Join(dir, "workloads"), &sets, part); err != nil {
		return nil, err
	}
	for _, set := range sets.Items {
		if slices.Contains(TakeoverStatefulSets, set.Name) {
			tk.StatefulSets = append(tk.StatefulSets, set)
		}
	}
	var sidecarSets v1beta1.SidecarSetList
	var targets v1alpha1.CloneSetList
	var daemons v1beta1.DaemonSetList
	var uds v1alpha1.UnitedDeploymentList
	for _, list := range []any{&sidecarSets, &targets, &daemons, &uds} {
		if err := readObjects(filepath.Join(dir, "workloads"), list); err != nil {
			return nil, err
		}
	}
	for _, s := range sidecarSets.Items {
		if slices.Contains(TakeoverSidecarSets, s.Name) {
			tk.SidecarSets = append(tk.SidecarSets, s)
		}
	}
	for _, c := range targets.Items {
		if slices.Contains(TakeoverSidecarTargets, c.Name) {
			tk.SidecarTargets = append(tk.SidecarTargets, c)
		}
		for _, ref := range c.OwnerReferences {
			if ref.Kind == "UnitedDeployment" && slices.Contains(TakeoverUnitedDeployments, ref.Name) {
				tk.SubsetCloneSets = append(tk.SubsetCloneSets, c)
			}
		}
	}
	for _, ud := range uds.Items {
		if slices.Contains(TakeoverUnitedDeployments, ud.Name) {
			tk.UnitedDeployments = append(tk.UnitedDeployments, ud)
		}
	}
	for _, d := range daemons.Items {
		if slices.Contains(TakeoverDaemonSets, d.Name) {
			tk.DaemonSets = append(tk.DaemonSets, d)
		}
	}
	ofSets := func(name string) bool {
		for _, set := range slices.Concat(TakeoverStatefulSets, TakeoverSidecarTargets, TakeoverDaemonSets, TakeoverUnitedDeployments) {
			if strings.Contains(name, set+"-") {
				return true
			}
		}
		return false
	}
	for _, r := range part.Revisions {
		if ofSets(r.Name) {
			tk.Revisions = append(tk.Revisions, r)
		}
	}
	for _, p := range part.Pods {
		if ofSets(p.Name) {
			tk.Pods = append(tk.Pods, p)
		}
	}
	for _, c := range part.Claims {
		if ofSets(c.Name) {
			tk.Claims = append(tk.Claims, c)
		}
	}
	for _, v := range part.Volumes {
		if ofSets(v.Name) {
			tk.Volumes = append(tk.Volumes, v)
		}
	}
	return tk, nil
}

// readDump reads the dump in dir: the workloads of one kind into workloads (a list) and the
// revisions, pods, claims and volumes into tk.
func readDump(dir string, workloads any, tk *Takeover) error {
	file := dumpFile(workloads)
	var revs appsv1.ControllerRevisionList
	var pods corev1.PodList
	var pvcs corev1.PersistentVolumeClaimList
	var pvs corev1.PersistentVolumeList
	for file, into := range map[string]any{
		file: workloads, "controllerrevisions.yaml": &revs, "pods.yaml": &pods,
		"persistentvolumeclaims.yaml": &pvcs, "persistentvolumes.yaml": &pvs,
	} {
		raw, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return err
		}
		if err := yaml.Unmarshal(raw, into); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	tk.Revisions, tk.Pods, tk.Claims, tk.Volumes = revs.Items, pods.Items, pvcs.Items, pvs.Items
	return nil
}

// dumpFile is the file of a dump that holds the objects of list's kind.
func dumpFile(list any) string {
	switch list.(type) {
	case *v1beta1.StatefulSetList:
		return "statefulsets.apps.kruise.io.yaml"
	case *v1beta1.SidecarSetList:
		return "sidecarsets.apps.kruise.io.yaml"
	case *v1beta1.DaemonSetList:
		return "daemonsets.apps.kruise.io.yaml"
	case *v1alpha1.UnitedDeploymentList:
		return "uniteddeployments.apps.kruise.io.yaml"
	}
	return "clonesets.apps.kruise.io.yaml"
}

// readObjects reads the objects of list's kind from the dump in dir into list.
func readObjects(dir string, list any) error {
	file := dumpFile(list)
	raw, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(raw, list); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}
