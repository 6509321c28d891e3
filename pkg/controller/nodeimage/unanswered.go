package nodeimage

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// ResponseTimeout is how long after a tag's createdAt the node's kruise-daemon has to report it
// (OpenKruise's 60 s): a tag it has not reported by then, at its version, is failed for it.
const ResponseTimeout = time.Minute

// Messages of the failures Unanswered writes (OpenKruise's).
const (
	NotRespondedMessage    = "node has not responded for a long time"
	DeadlineExceedMessage  = "pulling exceeds the activeDeadlineSeconds"
	PullImageFailedReason  = "PullImageFailed"
	notAnsweredEventFormat = "Failed to pull image %s on node %s for %s"
)

// Failure is a tag Unanswered failed: its image, tag and message, and who asked for it.
type Failure struct {
	Image, Tag, Message string
	Owners              []corev1.ObjectReference
}

// Unanswered decides, as OpenKruise's NodeImage controller does, the tags the node's daemon left
// unanswered: a tag of the spec with createdAt whose status is missing or of another version
// ResponseTimeout after createdAt fails ("node has not responded for a long time"); an
// unfinished one with pullPolicy.activeDeadlineSeconds fails once that deadline plus
// ResponseTimeout has passed since createdAt. It returns the status with those failures (and its
// counts recomputed; nil when nothing fails), the failures, and when the next one is due (0: none).
func Unanswered(ni *v1beta1.NodeImage, now time.Time) (*v1beta1.NodeImageStatus, []Failure, time.Duration) {
	st := ni.Status.DeepCopy()
	var failures []Failure
	var next time.Duration
	wait := func(d time.Duration) {
		if next == 0 || d < next {
			next = d
		}
	}
	at := metav1.NewTime(now).Rfc3339Copy()
	for _, name := range sortedImages(ni) {
		img := ni.Spec.Images[name]
		is := st.ImageStatuses[name]
		for _, tag := range img.Tags {
			if tag.CreatedAt == nil {
				continue
			}
			i := slices.IndexFunc(is.Tags, func(t v1beta1.NodeImageTagStatus) bool { return t.Tag == tag.Tag })
			msg := ""
			if i < 0 || is.Tags[i].Version != tag.Version {
				if left := tag.CreatedAt.Add(ResponseTimeout).Sub(now); left > 0 {
					wait(left)
					continue
				}
				msg = NotRespondedMessage
			} else if is.Tags[i].CompletionTime == nil && tag.PullPolicy != nil && tag.PullPolicy.ActiveDeadlineSeconds != nil {
				deadline := time.Duration(*tag.PullPolicy.ActiveDeadlineSeconds) * time.Second
				if left := tag.CreatedAt.Add(deadline + ResponseTimeout).Sub(now); left > 0 {
					wait(left)
					continue
				}
				msg = DeadlineExceedMessage
			}
			if msg == "" {
				continue
			}
			failed := v1beta1.NodeImageTagStatus{Tag: tag.Tag, Phase: v1beta1.NodeImagePullFailed, CompletionTime: &at,
				Version: tag.Version, Message: msg}
			if i < 0 {
				is.Tags = append(is.Tags, failed)
			} else {
				failed.StartTime, failed.Progress, failed.ImageID = is.Tags[i].StartTime, is.Tags[i].Progress, is.Tags[i].ImageID
				is.Tags[i] = failed
			}
			failures = append(failures, Failure{Image: name, Tag: tag.Tag, Message: msg, Owners: tag.OwnerReferences})
		}
		if len(is.Tags) > 0 {
			if st.ImageStatuses == nil {
				st.ImageStatuses = map[string]v1beta1.NodeImageImageStatus{}
			}
			st.ImageStatuses[name] = is
		}
	}
	if len(failures) == 0 {
		return nil, nil, next
	}
	recount(ni, st)
	return st, failures, next
}

// recount sets st's counts from the tags of ni's spec, as the daemon counts its tasks.
func recount(ni *v1beta1.NodeImage, st *v1beta1.NodeImageStatus) {
	st.Desired, st.Pulling, st.Waiting, st.Succeeded, st.Failed = 0, 0, 0, 0, 0
	for name, img := range ni.Spec.Images {
		for _, tag := range img.Tags {
			st.Desired++
			phase := v1beta1.NodeImagePullWaiting
			for _, t := range st.ImageStatuses[name].Tags {
				if t.Tag == tag.Tag && t.Version == tag.Version {
					phase = t.Phase
				}
			}
			switch phase {
			case v1beta1.NodeImagePullSucceeded:
				st.Succeeded++
			case v1beta1.NodeImagePullFailed:
				st.Failed++
			case v1beta1.NodeImagePullPulling:
				st.Pulling++
			default:
				st.Waiting++
			}
		}
	}
}

func sortedImages(ni *v1beta1.NodeImage) []string {
	names := make([]string, 0, len(ni.Spec.Images))
	for name := range ni.Spec.Images {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// failureEvent is the message of the Warning event PullImageFailed for f on node.
func failureEvent(f Failure, node string) string {
	return fmt.Sprintf(notAnsweredEventFormat, f.Image+":"+f.Tag, node, f.Message)
}
