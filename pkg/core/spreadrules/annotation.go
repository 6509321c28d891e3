package spreadrules

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MatchedAnnotation is the pod annotation naming the WorkloadSpread and subset a pod was admitted
// into (JSON, Matched), as OpenKruise writes it.
const MatchedAnnotation = "apps.kruise.io/matched-workloadspread"

// Matched is the value of MatchedAnnotation.
type Matched struct {
	// Name is the WorkloadSpread's name.
	Name string `json:"name"`
	// Subset is the subset's name.
	Subset string `json:"subset"`
	// UID is the key the pod was recorded under in creatingPods when it had no name at admission.
	UID string `json:"uid,omitempty"`
}

// String is the annotation's value.
func (m Matched) String() string {
	b, _ := json.Marshal(m)
	return string(b)
}

// MatchedOf reads a pod's MatchedAnnotation; nil when absent or malformed. The field names are
// read case-insensitively, as Go's JSON decoder does (OpenKruise's own tests write "Name").
func MatchedOf(pod *corev1.Pod) *Matched {
	raw, ok := pod.Annotations[MatchedAnnotation]
	if !ok || raw == "" {
		return nil
	}
	m := &Matched{}
	if err := json.Unmarshal([]byte(raw), m); err != nil {
		return nil
	}
	return m
}

// Key is how a pod is recorded in creatingPods: the generated UID when the annotation has one,
// the pod's name otherwise.
func Key(pod *corev1.Pod) string {
	if m := MatchedOf(pod); m != nil && m.UID != "" {
		return m.UID
	}
	return pod.Name
}

// VersionIgnored is the version key of the pods of workloads whose subset statuses are not kept
// per revision (every kind but Deployments and ReplicaSets, as in OpenKruise's default).
const VersionIgnored = "versionIgnored"

// Versioned tells whether the pods of a workload of kind are counted per revision
// (versionedSubsetStatuses keyed by pod-template-hash): Deployments and ReplicaSets, OpenKruise's
// default (--ws-enabled-versioned-status=deployment,replicaset).
func Versioned(kind string) bool { return kind == "Deployment" || kind == "ReplicaSet" }

// PodVersion is the key of the versioned subset statuses a pod counts in: its pod-template-hash
// when its controller is a ReplicaSet (a Deployment's revision), VersionIgnored otherwise.
func PodVersion(pod *corev1.Pod) string {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || !Versioned(ref.Kind) {
		return VersionIgnored
	}
	if v, ok := pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; ok {
		return v
	}
	return VersionIgnored
}
