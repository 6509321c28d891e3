package revision

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/dump"
)

// ClaimTemplatesHashAnnotation on a CloneSet's ControllerRevision records the hash of the
// CloneSet's volumeClaimTemplates when the revision was made ("" without claim templates), as
// OpenKruise records it: the templates are not part of the revision's Data.
const ClaimTemplatesHashAnnotation = "kruise.io/cloneset-volumeclaimtemplate-hash"

// claimForHash is a claim template as OpenKruise hashes it: its name and spec only, encoded with
// the zero creation timestamp and empty status that its Kubernetes libraries write.
type claimForHash struct {
	Metadata claimMeta                          `json:"metadata"`
	Spec     corev1.PersistentVolumeClaimSpec   `json:"spec"`
	Status   corev1.PersistentVolumeClaimStatus `json:"status"`
}

type claimMeta struct {
	Name              string `json:"name,omitempty"`
	CreationTimestamp *int   `json:"creationTimestamp"`
}

// ClaimTemplatesHash returns the value of ClaimTemplatesHashAnnotation for claim templates: ""
// for none, else the decimal FNV-32a hash of the debug dump (k8s.io/utils/dump.ForHash) of the
// JSON of the templates' names and specs, sorted by name -- OpenKruise's value for the same input.
func ClaimTemplatesHash(templates []corev1.PersistentVolumeClaim) string {
	if len(templates) == 0 {
		return ""
	}
	claims := make([]claimForHash, 0, len(templates))
	for _, t := range templates {
		claims = append(claims, claimForHash{Metadata: claimMeta{Name: t.Name}, Spec: t.Spec})
	}
	sort.SliceStable(claims, func(i, j int) bool { return claims[i].Metadata.Name < claims[j].Metadata.Name })
	raw, err := json.Marshal(claims)
	if err != nil {
		raw = []byte(err.Error())
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(raw))
	return strconv.FormatUint(uint64(h.Sum32()), 10)
}

// ClaimTemplatesHashOf returns the claim-template hash recorded on rev, and whether one is.
func ClaimTemplatesHashOf(rev *appsv1.ControllerRevision) (string, bool) {
	v, ok := rev.Annotations[ClaimTemplatesHashAnnotation]
	return v, ok
}

// ClaimTemplatesChanged reports whether moving a pod from revision from to revision to changes
// its claim templates: both record a hash and the hashes differ. A revision without the record
// (made before it existed) changes nothing, as in OpenKruise.
func ClaimTemplatesChanged(from, to *appsv1.ControllerRevision) bool {
	a, okA := ClaimTemplatesHashOf(from)
	b, okB := ClaimTemplatesHashOf(to)
	return okA && okB && a != b
}
