package revision

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
)

// HashLabel is the label that carries a revision's hash on the ControllerRevision.
const HashLabel = "controller-revision-hash"

// maxNameLength is the longest valid object name (a DNS subdomain).
const maxNameLength = 253

// Input is what a revision records: the pod template and, for workloads that have them, the
// volume claim templates. Nil and empty VolumeClaimTemplates are the same input.
type Input struct {
	Template             *corev1.PodTemplateSpec
	VolumeClaimTemplates []corev1.PersistentVolumeClaim
}

// wireData is the JSON shape of ControllerRevision.Data: a strategic-merge patch of the owner
// that restores the template (and volume claim templates) wholesale.
type wireData struct {
	Spec wireSpec `json:"spec"`
}

type wireSpec struct {
	Template             *wireTemplate                  `json:"template"`
	VolumeClaimTemplates []corev1.PersistentVolumeClaim `json:"volumeClaimTemplates,omitempty"`
}

type wireTemplate struct {
	corev1.PodTemplateSpec `json:",inline"`
	// Patch is the strategic-merge directive; "replace" makes the patch restore the template
	// instead of merging into it.
	Patch string `json:"$patch,omitempty"`
}

const patchReplace = "replace"

// encodeData returns the JSON of Data for in. The encoding is deterministic: struct fields in
// declaration order, map keys sorted. A nil template encodes as an empty one.
func encodeData(in Input) ([]byte, error) {
	t := wireTemplate{Patch: patchReplace}
	if in.Template != nil {
		t.PodTemplateSpec = *in.Template
	}
	return json.Marshal(wireData{Spec: wireSpec{Template: &t, VolumeClaimTemplates: in.VolumeClaimTemplates}})
}

// Hash returns the short, stable hash of in salted by collisionCount (nil counts as 0): the value
// of the controller-revision-hash label and the suffix of the revision name. Equal inputs give
// equal hashes in every process.
func Hash(in Input, collisionCount *int32) string {
	data, err := encodeData(in)
	if err != nil {
		// Pod templates always encode; should one not, hash the failure so Hash stays total.
		data = []byte(err.Error())
	}
	return hashData(data, collisionCount)
}

func hashData(data []byte, collisionCount *int32) string {
	h := fnv.New32a()
	h.Write(data)
	if collisionCount != nil && *collisionCount != 0 {
		var salt [4]byte
		binary.LittleEndian.PutUint32(salt[:], uint32(*collisionCount))
		h.Write(salt[:])
	}
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// Name returns the revision name for an owner and a hash: <owner>-<hash>, with the owner part
// shortened so that the name stays a valid object name.
func Name(ownerName, hash string) string {
	prefix := ownerName
	if limit := maxNameLength - 1 - len(hash); len(prefix) > limit {
		// A shortened prefix must not end a DNS label with '-' or '.'.
		prefix = strings.TrimRight(prefix[:limit], "-.")
	}
	return prefix + "-" + hash
}

// New builds the ControllerRevision for in, owned (as controller) by owner of kind ownerGVK, with
// the given revision number. It is named Name(owner, Hash(in, collisionCount)) and labelled with
// the template's labels, which by validation satisfy the owner's selector, plus HashLabel. It
// fails when in has no template.
func New(owner metav1.Object, ownerGVK schema.GroupVersionKind, in Input, revision int64,
	collisionCount *int32) (*appsv1.ControllerRevision, error) {
	if in.Template == nil {
		return nil, fmt.Errorf("revision of %s %s/%s: no pod template", ownerGVK.Kind,
			owner.GetNamespace(), owner.GetName())
	}
	data, err := encodeData(in)
	if err != nil {
		return nil, fmt.Errorf("revision of %s %s/%s: encode template: %w", ownerGVK.Kind,
			owner.GetNamespace(), owner.GetName(), err)
	}
	hash := hashData(data, collisionCount)
	labels := make(map[string]string, len(in.Template.Labels)+1)
	for k, v := range in.Template.Labels {
		labels[k] = v
	}
	labels[HashLabel] = hash
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            Name(owner.GetName(), hash),
			Namespace:       owner.GetNamespace(),
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, ownerGVK)},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: revision,
	}, nil
}
