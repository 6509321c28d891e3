package takeover

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/test/compat"
)

// Namespace is the fixture's namespace.
const Namespace = "takeover"

// loaded is what load created: the pods' UIDs by name, and the pods as they stood once their
// status was written back.
type loaded struct {
	podUIDs map[string]types.UID
	pods    map[string]*corev1.Pod
}

// clean drops what the API server assigns, so the object can be created again.
func clean(m *metav1.ObjectMeta) {
	m.UID, m.ResourceVersion, m.CreationTimestamp, m.ManagedFields, m.Generation = "", "", metav1.Time{}, nil, 0
}

// load creates the fixture's objects as the takeover README says: namespace, SidecarSets (with
// their hash annotations and status), volumes and claims, CloneSets and Advanced StatefulSets (with
// their status), revisions and pods (owned by the new workloads, with their status). The grace
// period of the pod whose in-place update waits for it (cs-grace) is moved so that it ends
// graceLeft after now.
func load(ctx context.Context, tk *compat.Takeover, graceLeft time.Duration) (*loaded, error) {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	for _, set := range tk.SidecarSets {
		status := set.Status
		clean(&set.ObjectMeta)
		if err := kc.Create(ctx, &set); err != nil {
			return nil, fmt.Errorf("SidecarSet %s: %w", set.Name, err)
		}
		set.Status = status
		set.Status.ObservedGeneration = set.Generation
		if err := kc.Status().Update(ctx, &set); err != nil {
			return nil, fmt.Errorf("SidecarSet %s status: %w", set.Name, err)
		}
	}
	owners := map[string]types.UID{}
	for _, ud := range tk.UnitedDeployments {
		status := ud.Status
		clean(&ud.ObjectMeta)
		if err := kc.Create(ctx, &ud); err != nil {
			return nil, fmt.Errorf("UnitedDeployment %s: %w", ud.Name, err)
		}
		ud.Status = status
		ud.Status.ObservedGeneration = ud.Generation
		if err := kc.Status().Update(ctx, &ud); err != nil {
			return nil, fmt.Errorf("UnitedDeployment %s status: %w", ud.Name, err)
		}
		owners[ud.Name] = ud.UID
	}
	own := func(m *metav1.ObjectMeta) {
		for i := range m.OwnerReferences {
			m.OwnerReferences[i].UID = owners[m.OwnerReferences[i].Name]
		}
	}
	for _, c := range slices.Concat(tk.CloneSets, tk.SidecarTargets, tk.SubsetCloneSets) {
		status := c.Status
		clean(&c.ObjectMeta)
		own(&c.ObjectMeta)
		if err := kc.Create(ctx, &c); err != nil {
			return nil, fmt.Errorf("CloneSet %s: %w", c.Name, err)
		}
		c.Status = status
		c.Status.ObservedGeneration = c.Generation
		if err := kc.Status().Update(ctx, &c); err != nil {
			return nil, fmt.Errorf("CloneSet %s status: %w", c.Name, err)
		}
		owners[c.Name] = c.UID
	}
	for _, set := range tk.StatefulSets {
		status := set.Status
		clean(&set.ObjectMeta)
		if err := kc.Create(ctx, &set); err != nil {
			return nil, fmt.Errorf("StatefulSet %s: %w", set.Name, err)
		}
		set.Status = status
		set.Status.ObservedGeneration = set.Generation
		if err := kc.Status().Update(ctx, &set); err != nil {
			return nil, fmt.Errorf("StatefulSet %s status: %w", set.Name, err)
		}
		owners[set.Name] = set.UID
	}
	for _, ds := range tk.DaemonSets {
		status := ds.Status
		clean(&ds.ObjectMeta)
		if err := kc.Create(ctx, &ds); err != nil {
			return nil, fmt.Errorf("DaemonSet %s: %w", ds.Name, err)
		}
		ds.Status = status
		ds.Status.ObservedGeneration = ds.Generation
		if err := kc.Status().Update(ctx, &ds); err != nil {
			return nil, fmt.Errorf("DaemonSet %s status: %w", ds.Name, err)
		}
		owners[ds.Name] = ds.UID
	}
	claimUIDs := map[string]types.UID{}
	for _, pvc := range tk.Claims {
		clean(&pvc.ObjectMeta)
		own(&pvc.ObjectMeta)
		status := pvc.Status
		pvc.Status = corev1.PersistentVolumeClaimStatus{}
		created, err := cs.CoreV1().PersistentVolumeClaims(Namespace).Create(ctx, &pvc, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("claim %s: %w", pvc.Name, err)
		}
		claimUIDs[pvc.Name] = created.UID
		// As dumped (bound, its capacity), as the volume binder writes it.
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			created.Status = status
			_, err := cs.CoreV1().PersistentVolumeClaims(Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
			if apierrors.IsConflict(err) {
				if cur, getErr := cs.CoreV1().PersistentVolumeClaims(Namespace).Get(ctx, pvc.Name, metav1.GetOptions{}); getErr == nil {
					created = cur
				}
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("claim %s status: %w", pvc.Name, err)
		}
	}
	// The volumes after their claims: each claimRef names its claim's new UID, so the binder keeps
	// the pair bound (with the dump's UID it would mark the claims Lost).
	for _, pv := range tk.Volumes {
		clean(&pv.ObjectMeta)
		pv.Status = corev1.PersistentVolumeStatus{}
		if pv.Spec.ClaimRef != nil {
			pv.Spec.ClaimRef.UID, pv.Spec.ClaimRef.ResourceVersion = claimUIDs[pv.Spec.ClaimRef.Name], ""
		}
		if _, err := cs.CoreV1().PersistentVolumes().Create(ctx, &pv, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("volume %s: %w", pv.Name, err)
		}
	}
	for _, rev := range tk.Revisions {
		clean(&rev.ObjectMeta)
		own(&rev.ObjectMeta)
		data, err := canonical(rev.Data.Raw) // the bytes OpenKruise stored (the dump went through YAML)
		if err != nil {
			return nil, fmt.Errorf("revision %s: %w", rev.Name, err)
		}
		rev.Data.Raw = data
		if _, err := cs.AppsV1().ControllerRevisions(Namespace).Create(ctx, &rev, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("revision %s: %w", rev.Name, err)
		}
	}
	out := &loaded{podUIDs: map[string]types.UID{}, pods: map[string]*corev1.Pod{}}
	for _, pod := range tk.Pods {
		if err := loadPod(ctx, pod, own, graceLeft, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// loadPod creates one pod and writes its status back.
func loadPod(ctx context.Context, pod corev1.Pod, own func(*metav1.ObjectMeta), graceLeft time.Duration, out *loaded) error {
	status := pod.Status
	clean(&pod.ObjectMeta)
	own(&pod.ObjectMeta)
	if err := shortenGrace(&pod, graceLeft); err != nil {
		return err
	}
	created, err := cs.CoreV1().Pods(Namespace).Create(ctx, &pod, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("pod %s: %w", pod.Name, err)
	}
	out.podUIDs[pod.Name] = created.UID
	// kwok may write a status of its own first; the fixture's wins.
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := cs.CoreV1().Pods(Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status = status
		written, err := cs.CoreV1().Pods(Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			return err
		}
		if err != nil {
			return fmt.Errorf("pod %s status: %w", pod.Name, err)
		}
		out.pods[pod.Name] = written
		return nil
	})
}

// shortenGrace moves the start of a deferred in-place update (the state's updateTimestamp) so
// that its grace period ends graceLeft from now.
func shortenGrace(pod *corev1.Pod, graceLeft time.Duration) error {
	grace, ok := pod.Annotations[appspub.InPlaceUpdateGraceKey]
	if !ok {
		return nil
	}
	var d struct {
		GraceSeconds int64 `json:"graceSeconds"`
	}
	if err := json.Unmarshal([]byte(grace), &d); err != nil {
		return err
	}
	var state map[string]any
	if err := json.Unmarshal([]byte(pod.Annotations[appspub.InPlaceUpdateStateKey]), &state); err != nil {
		return err
	}
	start := time.Now().Add(graceLeft - time.Duration(d.GraceSeconds)*time.Second)
	state["updateTimestamp"] = start.UTC().Format(time.RFC3339)
	raw, err := json.Marshal(state)
	if err != nil {
		return err
	}
	pod.Annotations[appspub.InPlaceUpdateStateKey] = string(raw)
	return nil
}

// canonical re-encodes JSON with sorted keys and no spacing.
func canonical(raw []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// revisionNames returns the names of revs, for messages.
func revisionNames(revs []appsv1.ControllerRevision) []string {
	var out []string
	for _, r := range revs {
		out = append(out, r.Name)
	}
	return out
}
