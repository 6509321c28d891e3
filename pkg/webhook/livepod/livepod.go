package livepod

import (
	"context"
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Finder reads pods from Cache, and from API (the API server, not a cache) when Cache does not
// hold the version asked for.
type Finder struct {
	Cache, API client.Reader
}

// Want is the pod a request names: its namespace and name, its UID (any when AnyUID), and, when
// known, the resourceVersion the request saw.
type Want struct {
	Namespace, Name string
	UID             types.UID
	AnyUID          bool
	ResourceVersion string
}

func (w Want) matches(pod *corev1.Pod) bool { return w.AnyUID || pod.UID == w.UID }

// Get is the pod w names, nil when none exists with w's UID. The cache's copy is used when it is
// the version w names (or w names none); else the API server's, of any version.
func (f Finder) Get(ctx context.Context, w Want) (*corev1.Pod, error) {
	if !w.AnyUID && w.UID == "" {
		return nil, nil
	}
	key := client.ObjectKey{Namespace: w.Namespace, Name: w.Name}
	pod := &corev1.Pod{}
	err := f.Cache.Get(ctx, key, pod)
	if client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("read pod %s: %w", key, err)
	}
	if err == nil && w.matches(pod) && (w.ResourceVersion == "" || pod.ResourceVersion == w.ResourceVersion) {
		return pod, nil
	}
	if f.API == nil {
		if err != nil || !w.matches(pod) {
			return nil, nil
		}
		return pod, nil
	}
	fresh := &corev1.Pod{}
	if err := f.API.Get(ctx, key, fresh); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, nil
		}
		return nil, fmt.Errorf("read pod %s from the API server: %w", key, err)
	}
	if !w.matches(fresh) {
		return nil, nil
	}
	return fresh, nil
}

// Named is the Want of a pod request whose oldObject names the pod (DELETE, UPDATE, and their
// subresources): the request's namespace and name, with the UID and resourceVersion of the
// oldObject (read for those only; an oldObject without UID names no pod). An eviction (CREATE
// pods/eviction) names the UID of its preconditions, or any.
func Named(req admissionv1.AdmissionRequest) (Want, error) {
	w := Want{Namespace: req.Namespace, Name: req.Name}
	var meta struct {
		Metadata struct {
			UID             types.UID `json:"uid"`
			ResourceVersion string    `json:"resourceVersion"`
		} `json:"metadata"`
	}
	switch {
	case req.Operation == admissionv1.Create && req.SubResource == "eviction":
		ev := &policyv1.Eviction{}
		if len(req.Object.Raw) > 0 {
			if err := json.Unmarshal(req.Object.Raw, ev); err != nil {
				return w, fmt.Errorf("decode the eviction: %w", err)
			}
		}
		w.AnyUID = true
		if o := ev.DeleteOptions; o != nil && o.Preconditions != nil && o.Preconditions.UID != nil {
			w.UID, w.AnyUID = *o.Preconditions.UID, false
		}
	case len(req.OldObject.Raw) > 0:
		if err := json.Unmarshal(req.OldObject.Raw, &meta); err != nil {
			return w, fmt.Errorf("decode oldObject: %w", err)
		}
		w.UID, w.ResourceVersion = meta.Metadata.UID, meta.Metadata.ResourceVersion
	}
	return w, nil
}
