package access

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
)

// What each kind makes Kruise do to objects that already exist, as the permissions its author
// must hold. Pure: the webhooks call them and ask Checker.Require.

// PodProbeMarker: its marks and conditions are writes of the selected pods and of their status;
// an exec probe runs the author's command in them (kruise-daemon over CRI).
func PodProbeMarker(ppm *v1alpha1.PodProbeMarker) []Permission {
	ns := ppm.Namespace
	perms := []Permission{
		{Verb: "patch", Resource: "pods", Namespace: ns, Why: "spec.probes[].markerPolicy (labels and annotations of the selected pods)"},
		{Verb: "patch", Resource: "pods", Subresource: "status", Namespace: ns, Why: "spec.probes[].podConditionType (a condition of the selected pods)"},
	}
	for i, p := range ppm.Spec.Probes {
		if p.Probe.Exec != nil {
			perms = append(perms, Permission{Verb: "create", Resource: "pods", Subresource: "exec", Namespace: ns,
				Why: fmt.Sprintf("spec.probes[%d].probe.exec (a command run in the selected pods)", i)})
			break
		}
	}
	return perms
}

// EphemeralJob adds ephemeral containers to the selected pods.
func EphemeralJob(job *v1alpha1.EphemeralJob) []Permission {
	return []Permission{{Verb: "update", Resource: "pods", Subresource: "ephemeralcontainers", Namespace: job.Namespace,
		Why: "spec.template (ephemeral containers added to the selected pods)"}}
}

// WorkloadSpread rewrites the pods of its target (subsets' patch, node affinity, tolerations) as
// they are created: its author must be able to update the target. target is the resource of
// spec.targetRef's kind.
func WorkloadSpread(ws *v1alpha1.WorkloadSpread, target schema.GroupResource) []Permission {
	ref := ws.Spec.TargetReference
	if ref == nil {
		return nil
	}
	return []Permission{{Verb: "update", Group: target.Group, Resource: target.Resource, Namespace: ws.Namespace, Name: ref.Name,
		Why: "spec.targetRef with spec.subsets (the target's pods are rewritten as they are created)"}}
}

// ContainerRecreateRequest restarts containers of a pod: a disruption, as deleting the pod is.
func ContainerRecreateRequest(crr *v1alpha1.ContainerRecreateRequest) []Permission {
	return []Permission{{Verb: "delete", Resource: "pods", Namespace: crr.Namespace, Name: crr.Spec.PodName,
		Why: "spec.podName (its containers are restarted)"}}
}

// StatefulSetClaims: a set whose claim retention deletes claims (whenDeleted or whenScaled
// Delete) adopts the existing claims its templates name, which the garbage collector then
// deletes. adopted are those claims that the set does not own yet (from AdoptedClaims); the
// author must be able to delete them.
func StatefulSetClaims(set *v1beta1.StatefulSet, adopted []string) []Permission {
	if !DeletesClaims(set) || len(adopted) == 0 {
		return nil
	}
	return []Permission{{Verb: "delete", Resource: "persistentvolumeclaims", Namespace: set.Namespace,
		Why: fmt.Sprintf("spec.persistentVolumeClaimRetentionPolicy Delete (it adopts existing claims %s)", names(adopted))}}
}

// AdoptedClaims are the claims among claims (of the set's namespace) that the set's templates
// name for one of its pods and that the set does not own: those a Delete retention policy would
// adopt. Nil when the policy retains claims.
func AdoptedClaims(set *v1beta1.StatefulSet, claims []corev1.PersistentVolumeClaim) []string {
	if !DeletesClaims(set) {
		return nil
	}
	var out []string
	for i := range claims {
		c := &claims[i]
		if !namedByTemplates(set, c.Name) || ownedBy(c, set) {
			continue
		}
		out = append(out, c.Name)
	}
	return out
}

// DeletesClaims reports whether the set's claim retention deletes claims (whenDeleted or
// whenScaled Delete).
func DeletesClaims(set *v1beta1.StatefulSet) bool {
	p := set.Spec.PersistentVolumeClaimRetentionPolicy
	return p != nil && (p.WhenDeleted == appsv1.DeletePersistentVolumeClaimRetentionPolicyType ||
		p.WhenScaled == appsv1.DeletePersistentVolumeClaimRetentionPolicyType)
}

func namedByTemplates(set *v1beta1.StatefulSet, claim string) bool {
	for _, t := range set.Spec.VolumeClaimTemplates {
		if pod, ok := strings.CutPrefix(claim, t.Name+"-"); ok && ordinal.OrdinalOf(set.Name, pod) >= 0 {
			return true
		}
	}
	return false
}

func ownedBy(c *corev1.PersistentVolumeClaim, set *v1beta1.StatefulSet) bool {
	if set.UID == "" {
		return false
	}
	for _, r := range c.OwnerReferences {
		if r.UID == set.UID {
			return true
		}
	}
	return false
}

// names lists at most three claim names and how many more.
func names(list []string) string {
	const shown = 3
	if len(list) <= shown {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:shown], ", "), len(list)-shown)
}
