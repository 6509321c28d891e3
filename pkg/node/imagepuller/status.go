package imagepuller

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// First-sync outcomes in NodeImage status.firstSyncStatus.status.
const (
	SyncSucceeded v1beta1.NodeImageSyncStatusPhase = "Succeeded"
	SyncFailed    v1beta1.NodeImageSyncStatusPhase = "Failed"
)

// Status is the NodeImage status that reports tasks; prev is the status reported so far (its
// firstSyncStatus is kept once set, and set now when every task has finished for the first time).
func Status(tasks map[Key]state, prev v1beta1.NodeImageStatus, now time.Time) v1beta1.NodeImageStatus {
	out := v1beta1.NodeImageStatus{Desired: int32(len(tasks)), FirstSyncStatus: prev.FirstSyncStatus}
	failed := 0
	for _, k := range slices.SortedFunc(maps.Keys(tasks), func(a, b Key) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Tag, b.Tag))
	}) {
		st := tasks[k]
		switch st.Phase {
		case v1beta1.NodeImagePullSucceeded:
			out.Succeeded++
		case v1beta1.NodeImagePullFailed:
			out.Failed++
			failed++
		case v1beta1.NodeImagePullPulling:
			out.Pulling++
		default:
			out.Waiting++
		}
		if out.ImageStatuses == nil {
			out.ImageStatuses = map[string]v1beta1.NodeImageImageStatus{}
		}
		is := out.ImageStatuses[k.Name]
		is.Tags = append(is.Tags, v1beta1.NodeImageTagStatus{Tag: k.Tag, Phase: st.Phase, Progress: st.Progress,
			StartTime: timeOrNil(st.Start), CompletionTime: timeOrNil(st.Done), Version: st.Version, ImageID: st.ImageID,
			Message: st.Message})
		out.ImageStatuses[k.Name] = is
	}
	if out.FirstSyncStatus == nil && len(tasks) > 0 && int(out.Succeeded+out.Failed) == len(tasks) {
		fs := &v1beta1.NodeImageSyncStatus{SyncAt: timeOrNil(now), Status: SyncSucceeded, Message: "every image was pulled"}
		if failed > 0 {
			fs.Status, fs.Message = SyncFailed, "some images failed to pull"
		}
		out.FirstSyncStatus = fs
	}
	return out
}

// timeOrNil is t at the API's precision (seconds), or nil for the zero time.
func timeOrNil(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	m := metav1.NewTime(t).Rfc3339Copy()
	return &m
}

// StatusPatch is the merge patch that turns a status into want: the whole status, and null for
// each image cur reports that want does not (a merge patch keeps map keys it does not name).
func StatusPatch(cur, want v1beta1.NodeImageStatus) ([]byte, error) {
	raw, err := json.Marshal(want)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	images, _ := m["imageStatuses"].(map[string]any)
	if images == nil {
		images = map[string]any{}
	}
	for name := range cur.ImageStatuses {
		if _, ok := want.ImageStatuses[name]; !ok {
			images[name] = nil
		}
	}
	if len(images) > 0 {
		m["imageStatuses"] = images
	}
	for _, f := range []string{"pulling", "waiting", "succeeded", "failed"} {
		if _, ok := m[f]; !ok {
			m[f] = nil // omitempty dropped a zero: clear the old count
		}
	}
	return json.Marshal(map[string]any{"status": m})
}
