package imagepulljob

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// ownerReference is the job's entry among a NodeImage tag's owners.
func ownerReference(job *v1beta1.ImagePullJob) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: v1beta1.GroupVersion.String(), Kind: "ImagePullJob",
		Namespace: job.Namespace, Name: job.Name, UID: job.UID}
}

// ownedBy reports whether ref is job's entry.
func ownedBy(ref corev1.ObjectReference, job OwnerKey) bool {
	return ref.Kind == "ImagePullJob" && ref.Namespace == job.Namespace && ref.Name == job.Name && ref.UID == job.UID
}

// findTag is the index of tag in img's tags, or -1.
func findTag(img v1beta1.NodeImageImageSpec, tag string) int {
	return slices.IndexFunc(img.Tags, func(t v1beta1.NodeImageTagSpec) bool { return t.Tag == tag })
}

// AddJob asks ni's node to pull job's image for job: it adds the job to the tag's owners, creating
// the tag when needed, and adds secrets to the image's pull secrets (a reference already there
// takes the mode given). An existing tag is pulled
// again (its version goes up, with the job's pull policy) when the job pulls Always or the node's
// last attempt at the tag failed; otherwise the job shares the pull. It reports whether ni changed.
func AddJob(ni *v1beta1.NodeImage, job *v1beta1.ImagePullJob, secrets []v1beta1.NodeImageReferenceObject, now time.Time) bool {
	name, tag := SplitImage(job.Spec.Image)
	if ni.Spec.Images == nil {
		ni.Spec.Images = map[string]v1beta1.NodeImageImageSpec{}
	}
	img := ni.Spec.Images[name]
	changed := false
	for _, s := range secrets {
		i := slices.IndexFunc(img.PullSecrets, func(o v1beta1.NodeImageReferenceObject) bool {
			return o.Namespace == s.Namespace && o.Name == s.Name
		})
		switch {
		case i < 0:
			img.PullSecrets = append(img.PullSecrets, s)
			changed = true
		case img.PullSecrets[i].Mode != s.Mode: // an earlier Kruise's reference to the same shared copy
			img.PullSecrets[i].Mode = s.Mode
			changed = true
		}
	}
	if job.Spec.SandboxConfig != nil && img.SandboxConfig == nil {
		img.SandboxConfig = job.Spec.SandboxConfig.DeepCopy()
		changed = true
	}
	policy := tagPolicy(job)
	i := findTag(img, tag)
	switch {
	case i < 0:
		created := metav1.NewTime(now).Rfc3339Copy()
		img.Tags = append(img.Tags, v1beta1.NodeImageTagSpec{Tag: tag, CreatedAt: &created, PullPolicy: policy,
			OwnerReferences: []corev1.ObjectReference{ownerReference(job)}, Version: 1, ImagePullPolicy: job.Spec.ImagePullPolicy})
		changed = true
	case !slices.ContainsFunc(img.Tags[i].OwnerReferences, func(r corev1.ObjectReference) bool { return ownedBy(r, OwnerRef(job)) }):
		t := &img.Tags[i]
		t.OwnerReferences = append(t.OwnerReferences, ownerReference(job))
		if job.Spec.ImagePullPolicy == v1beta1.ImagePullJobPullAlways || lastFailed(ni, name, *t) {
			t.Version++
			t.PullPolicy, t.ImagePullPolicy = policy, job.Spec.ImagePullPolicy
		}
		changed = true
	}
	ni.Spec.Images[name] = img
	return changed
}

// lastFailed reports whether ni's node reports tag t failed at its current version.
func lastFailed(ni *v1beta1.NodeImage, name string, t v1beta1.NodeImageTagSpec) bool {
	s := TagStatus(ni, name, t)
	return s != nil && s.Phase == v1beta1.NodeImagePullFailed
}

// TagStatus is the node's report on tag t of image name at t's current version, or nil.
func TagStatus(ni *v1beta1.NodeImage, name string, t v1beta1.NodeImageTagSpec) *v1beta1.NodeImageTagStatus {
	for _, s := range ni.Status.ImageStatuses[name].Tags {
		if s.Tag == t.Tag && s.Version == t.Version {
			return &s
		}
	}
	return nil
}

// tagPolicy is the pull policy job gives a tag: its timeout and retries, and its active deadline.
func tagPolicy(job *v1beta1.ImagePullJob) *v1beta1.NodeImageTagPullPolicy {
	p := &v1beta1.NodeImageTagPullPolicy{}
	if pp := job.Spec.PullPolicy; pp != nil {
		p.TimeoutSeconds, p.BackoffLimit = pp.TimeoutSeconds, pp.BackoffLimit
	}
	if cp := job.Spec.CompletionPolicy; cp.Type != v1beta1.ImagePullJobCompletionNever {
		p.ActiveDeadlineSeconds = cp.ActiveDeadlineSeconds
	}
	return p
}

// RemoveOwners drops the owners that match from every tag of ni; a tag left without owners is
// removed (its pull stops), and an image left without tags too. It reports whether ni changed.
func RemoveOwners(ni *v1beta1.NodeImage, match func(corev1.ObjectReference) bool) bool {
	changed := false
	for name, img := range ni.Spec.Images {
		var tags []v1beta1.NodeImageTagSpec
		for _, t := range img.Tags {
			n := len(t.OwnerReferences)
			t.OwnerReferences = slices.DeleteFunc(t.OwnerReferences, match)
			if len(t.OwnerReferences) != n {
				changed = true
				if len(t.OwnerReferences) == 0 {
					continue
				}
			}
			tags = append(tags, t)
		}
		if len(tags) == 0 {
			delete(ni.Spec.Images, name)
			continue
		}
		img.Tags = tags
		ni.Spec.Images[name] = img
	}
	return changed
}

// LegacyPullSecrets are the pull secret references of ni's images without mode "batch": those
// OpenKruise before v1.9 wrote, one secret per job. OpenKruise v1.9 cleans them up as their jobs
// release them, while "batch" references (shared copies, which Kruise writes) stay until their
// image's entry goes.
func LegacyPullSecrets(ni *v1beta1.NodeImage) []v1beta1.NodeImageReferenceObject {
	var refs []v1beta1.NodeImageReferenceObject
	for _, img := range ni.Spec.Images {
		for _, s := range img.PullSecrets {
			if s.Mode != v1beta1.NodeImageReferenceObjectModeBatch && !slices.Contains(refs, s) {
				refs = append(refs, s)
			}
		}
	}
	slices.SortFunc(refs, func(a, b v1beta1.NodeImageReferenceObject) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return refs
}

// DropPullSecrets removes the references in gone from ni's images' pull secrets, never one of mode
// "batch". It reports whether ni changed.
func DropPullSecrets(ni *v1beta1.NodeImage, gone []v1beta1.NodeImageReferenceObject) bool {
	changed := false
	for name, img := range ni.Spec.Images {
		n := len(img.PullSecrets)
		img.PullSecrets = slices.DeleteFunc(img.PullSecrets, func(s v1beta1.NodeImageReferenceObject) bool {
			return s.Mode != v1beta1.NodeImageReferenceObjectModeBatch && slices.Contains(gone, s)
		})
		if len(img.PullSecrets) != n {
			if len(img.PullSecrets) == 0 {
				img.PullSecrets = nil
			}
			ni.Spec.Images[name] = img
			changed = true
		}
	}
	return changed
}
