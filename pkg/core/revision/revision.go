package revision

import (
	"fmt"
	"hash/fnv"
	"maps"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
)

// HashLabel is the label that carries a revision's hash on the ControllerRevision (Kubernetes'
// controller history key, the one OpenKruise's revisions carry).
const HashLabel = "controller.kubernetes.io/hash"

// maxPrefixLength is the longest owner name a revision name keeps whole: with the hash (at most
// 10 characters) and the dash the name stays a valid object name.
const maxPrefixLength = 223

// Input is what a revision records: the pod template in Data and, for workloads that have them
// (CloneSet), the volume claim templates as a hash in ClaimTemplatesHashAnnotation -- not in Data,
// so a claim-template-only change makes no new revision. Nil and empty VolumeClaimTemplates are
// the same input.
type Input struct {
	Template *corev1.PodTemplateSpec
	// Object, when set, is recorded in Data instead of Template: the template of a workload whose
	// template is not a pod's (a UnitedDeployment's spec.template, which holds a whole workload
	// template). Its revisions are labelled with the hash label alone and carry none of the
	// owner's annotations, as OpenKruise writes UnitedDeployment revisions; TemplateOf cannot
	// read them back.
	Object               any
	VolumeClaimTemplates []corev1.PersistentVolumeClaim
	// RecordClaimTemplates sets ClaimTemplatesHashAnnotation on the revision (CloneSet's rule).
	RecordClaimTemplates bool
	// HashLabel is the label that carries the hash on the revision: HashLabel when empty;
	// DaemonHashLabel for Advanced DaemonSets, as DaemonSets label their revisions.
	HashLabel string
}

// DaemonHashLabel is the label that carries a DaemonSet revision's hash, on the revision and on
// its pods (Kubernetes' DefaultDaemonSetUniqueLabelKey).
const DaemonHashLabel = "controller-revision-hash"

// Hash returns the short, stable hash of in's pod template salted by collisionCount (nil counts as
// 0): the value of HashLabel and the suffix of the revision name.
func Hash(in Input, collisionCount *int32) string {
	data, err := encodeData(in)
	if err != nil {
		// Templates always encode; should one not, hash the failure so Hash stays total.
		data = []byte(err.Error())
	}
	return HashData(data, collisionCount)
}

// HashData is Kubernetes' controller history hash: FNV-32 (not 32a) of Data, then of the collision
// count in decimal, encoded with rand.SafeEncodeString. Every kind's revisions are named by it
// (SidecarSets' too, from their own Data).
func HashData(data []byte, collisionCount *int32) string {
	h := fnv.New32()
	h.Write(data)
	var count int32
	if collisionCount != nil {
		count = *collisionCount
	}
	h.Write([]byte(strconv.FormatInt(int64(count), 10)))
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// Name returns the revision name for an owner and a hash: <owner>-<hash>, the owner part cut to
// 223 bytes (Kubernetes' rule, so names match OpenKruise's for long owner names too).
func Name(ownerName, hash string) string {
	prefix := ownerName
	if len(prefix) > maxPrefixLength {
		prefix = prefix[:maxPrefixLength]
	}
	return prefix + "-" + hash
}

// ShortHash returns the hash part of a revision name: what follows the last dash. Pods of a
// CloneSet under OpenKruise's CloneSetShortHash gate carry it instead of the name, and every pod
// carries it as pod-template-hash.
func ShortHash(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '-' {
			return name[i+1:]
		}
	}
	return name
}

// New builds the ControllerRevision for in, owned (as controller) by owner of kind ownerGVK, with
// the given revision number, as OpenKruise builds it: named Name(owner, Hash(in, collisionCount)),
// labelled with the template's labels plus the hash label (in.HashLabel), annotated with the owner's annotations (plus
// ClaimTemplatesHashAnnotation when in records claim templates). It fails when in has no template.
func New(owner metav1.Object, ownerGVK schema.GroupVersionKind, in Input, revision int64,
	collisionCount *int32) (*appsv1.ControllerRevision, error) {
	if in.Template == nil && in.Object == nil {
		return nil, fmt.Errorf("revision of %s %s/%s: no pod template", ownerGVK.Kind,
			owner.GetNamespace(), owner.GetName())
	}
	data, err := encodeData(in)
	if err != nil {
		return nil, fmt.Errorf("revision of %s %s/%s: encode template: %w", ownerGVK.Kind,
			owner.GetNamespace(), owner.GetName(), err)
	}
	hash := HashData(data, collisionCount)
	labels := map[string]string{}
	if in.Object == nil {
		maps.Copy(labels, in.Template.Labels)
	}
	key := in.HashLabel
	if key == "" {
		key = HashLabel
	}
	labels[key] = hash
	var annotations map[string]string
	if in.Object == nil {
		annotations = maps.Clone(owner.GetAnnotations())
	}
	if in.RecordClaimTemplates {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[ClaimTemplatesHashAnnotation] = ClaimTemplatesHash(in.VolumeClaimTemplates)
	}
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            Name(owner.GetName(), hash),
			Namespace:       owner.GetNamespace(),
			Labels:          labels,
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, ownerGVK)},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: revision,
	}, nil
}
