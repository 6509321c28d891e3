package sidecarrules

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
)

// RevisionData returns the Data of the ControllerRevision OpenKruise records for a SidecarSet
// spec: {"spec":{"$patch":"replace", volumes, containers, initContainers, imagePullSecrets,
// patchPodMetadata}} in canonical JSON (keys sorted, absent fields as null).
func RevisionData(spec *v1beta1.SidecarSetSpec) ([]byte, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var all map[string]any
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, err
	}
	kept := map[string]any{"$patch": "replace"}
	// The spec fields a revision records; restoring it replaces the spec with them.
	for _, f := range []string{"volumes", "containers", "initContainers", "imagePullSecrets", "patchPodMetadata"} {
		kept[f] = all[f]
	}
	return json.Marshal(map[string]any{"spec": kept})
}

// RevisionName returns the name of the ControllerRevision for a SidecarSet's current spec:
// <name>-<Kubernetes controller history hash of RevisionData and collisionCount>.
func RevisionName(set *v1beta1.SidecarSet, collisionCount *int32) (string, error) {
	data, err := RevisionData(&set.Spec)
	if err != nil {
		return "", err
	}
	return revision.Name(set.Name, revision.HashData(data, collisionCount)), nil
}

// RestoreRevision returns the SidecarSet as it was at rev: latest's metadata with the spec
// replaced by the fields rev records, the hash annotations taken from rev (computed when rev has
// none), and status.latestRevision set to rev's name. latest is not modified.
func RestoreRevision(latest *v1beta1.SidecarSet, rev *appsv1.ControllerRevision) (*v1beta1.SidecarSet, error) {
	raw := rev.Data.Raw
	if len(raw) == 0 && rev.Data.Object != nil {
		var err error
		if raw, err = json.Marshal(rev.Data.Object); err != nil {
			return nil, fmt.Errorf("revision %s: %w", rev.Name, err)
		}
	}
	var data struct {
		Spec v1beta1.SidecarSetSpec `json:"spec"`
	}
	if err := json.Unmarshal(raw, &data); err != nil {
		return nil, fmt.Errorf("revision %s: decode data: %w", rev.Name, err)
	}
	out := latest.DeepCopy()
	out.Spec = data.Spec
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	restore := func(key string, compute func(*v1beta1.SidecarSetSpec) (string, error)) error {
		if v := rev.Annotations[key]; v != "" {
			out.Annotations[key] = v
			return nil
		}
		v, err := compute(&out.Spec)
		out.Annotations[key] = v
		return err
	}
	if err := restore(HashAnnotation, Hash); err != nil {
		return nil, err
	}
	if err := restore(HashWithoutImageAnnotation, HashWithoutImage); err != nil {
		return nil, err
	}
	out.Status.LatestRevision = rev.Name
	return out, nil
}

// FindRevision returns the revision that ref pins among revs (the ControllerRevisions of set):
// the one named ref.revisionName, or the newest (highest revision number) of set's revisions
// labelled with ref.customVersion. It returns an error when there is none.
func FindRevision(set *v1beta1.SidecarSet, ref *v1beta1.SidecarSetInjectRevision, revs []*appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	switch {
	case ref == nil:
		return nil, fmt.Errorf("SidecarSet %s pins no revision", set.Name)
	case ref.RevisionName != nil:
		for _, r := range revs {
			if r != nil && r.Name == *ref.RevisionName {
				return r, nil
			}
		}
		return nil, fmt.Errorf("SidecarSet %s: ControllerRevision %q not found", set.Name, *ref.RevisionName)
	case ref.CustomVersion != nil:
		var found []*appsv1.ControllerRevision
		for _, r := range revs {
			if r != nil && r.Labels[RevisionOwnerLabel] == set.Name && r.Labels[CustomVersionLabel] == *ref.CustomVersion {
				found = append(found, r)
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("SidecarSet %s: no ControllerRevision with custom version %q", set.Name, *ref.CustomVersion)
		}
		sort.SliceStable(found, func(i, j int) bool { return revisionLess(found[i], found[j]) })
		return found[len(found)-1], nil
	}
	return nil, fmt.Errorf("SidecarSet %s pins neither a revision name nor a custom version", set.Name)
}

// revisionLess orders revisions as Kubernetes' history.SortControllerRevisions does: by revision
// number, then creation time, then name.
func revisionLess(a, b *appsv1.ControllerRevision) bool {
	if a.Revision != b.Revision {
		return a.Revision < b.Revision
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// SameRevisionData reports whether two revisions' data are the same JSON (as OpenKruise finds an
// equal revision, whatever the encoding's key order or spacing).
func SameRevisionData(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
