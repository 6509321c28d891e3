package imagelistpulljob

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// ListLabel on a per-image job names its ImageListPullJob (truncated to fit a label value).
const ListLabel = "apps.kruise.io/image-list-pull-job"

// ChildName is the name of list's job for image: the list's name and a hash of the image.
func ChildName(list *v1beta1.ImageListPullJob, image string) string {
	sum := sha256.Sum256([]byte(image))
	name := list.Name + "-" + hex.EncodeToString(sum[:5])
	if len(name) > 253 {
		name = name[len(name)-253:]
	}
	return name
}

func labelValue(s string) string {
	if len(s) > 63 {
		return s[len(s)-63:]
	}
	return s
}

// Child is the ImagePullJob list wants for image. The list's TTL is the list's own: the child has
// none, it goes with the list.
func Child(list *v1beta1.ImageListPullJob, image string) *v1beta1.ImagePullJob {
	tpl := *list.Spec.ImagePullJobTemplate.DeepCopy()
	tpl.CompletionPolicy.TTLSecondsAfterFinished = nil
	job := &v1beta1.ImagePullJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: list.Namespace, Name: ChildName(list, image),
			Labels:          map[string]string{ListLabel: labelValue(list.Name)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(list, v1beta1.GroupVersion.WithKind("ImageListPullJob"))}},
		Spec: v1beta1.ImagePullJobSpec{Image: image, ImagePullJobTemplate: tpl},
	}
	defaults.SetDefaultsImagePullJobV1beta1(job) // as stored: compared with the existing job
	return job
}

// Plan is one reconcile of a list.
type Plan struct {
	Create, Update, Delete []*v1beta1.ImagePullJob
	Status                 v1beta1.ImageListPullJobStatus
	// DeleteList: the list's ttlSecondsAfterFinished has passed.
	DeleteList   bool
	RequeueAfter time.Duration
}

// PlanList plans list's next step from its existing per-image jobs.
func PlanList(list *v1beta1.ImageListPullJob, children []*v1beta1.ImagePullJob, now time.Time) Plan {
	p := Plan{Status: *list.Status.DeepCopy()}
	st := &p.Status
	if st.StartTime == nil {
		t := metav1.NewTime(now).Rfc3339Copy()
		st.StartTime = &t
	}
	byName := map[string]*v1beta1.ImagePullJob{}
	for _, c := range children {
		byName[c.Name] = c
	}
	ended := st.CompletionTime != nil
	var active, completed, succeeded int32
	var failed []*v1beta1.ImageListPullJobFailedImageStatus
	wanted := map[string]bool{}
	for _, image := range list.Spec.Images {
		want := Child(list, image)
		wanted[want.Name] = true
		have := byName[want.Name]
		switch {
		case have == nil:
			if !ended {
				p.Create = append(p.Create, want)
			}
			active++
			continue
		case !ended && have.Status.CompletionTime == nil && !equality.Semantic.DeepEqual(have.Spec, want.Spec):
			upd := have.DeepCopy()
			upd.Spec = want.Spec
			p.Update = append(p.Update, upd)
		}
		switch {
		case have.Status.CompletionTime == nil:
			active++
		default:
			completed++
			if have.Status.Failed == 0 && have.Status.Active == 0 {
				succeeded++
			}
		}
		if have.Status.Failed > 0 {
			failed = append(failed, &v1beta1.ImageListPullJobFailedImageStatus{ImagePullJob: have.Name, Name: image,
				Message: fmt.Sprintf("failed on %d node(s): %v", have.Status.Failed, have.Status.FailedNodes)})
		}
	}
	for _, c := range children {
		if !wanted[c.Name] {
			p.Delete = append(p.Delete, c)
		}
	}
	slices.SortFunc(p.Delete, func(a, b *v1beta1.ImagePullJob) int { return strings.Compare(a.Name, b.Name) })
	if ended {
		return planTTL(list, p, now)
	}
	st.Desired, st.Active, st.Completed, st.Succeeded, st.FailedImageStatuses = int32(len(list.Spec.Images)), active, completed, succeeded, failed
	if list.Spec.CompletionPolicy.Type != v1beta1.ImagePullJobCompletionNever && active == 0 {
		t := metav1.NewTime(now).Rfc3339Copy()
		st.CompletionTime = &t
		return planTTL(list, p, now)
	}
	return p
}

// planTTL schedules the deletion of an ended list.
func planTTL(list *v1beta1.ImageListPullJob, p Plan, now time.Time) Plan {
	if ttl := list.Spec.CompletionPolicy.TTLSecondsAfterFinished; ttl != nil {
		at := p.Status.CompletionTime.Add(time.Duration(*ttl) * time.Second)
		if !now.Before(at) {
			p.DeleteList = true
		} else {
			p.RequeueAfter = at.Sub(now)
		}
	}
	return p
}
