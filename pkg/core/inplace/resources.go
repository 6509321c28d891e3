package inplace

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// resizable are the resources pods/resize may change on a running container.
var resizable = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// resizeReasons returns why a change from o to n cannot be done by pods/resize: a change to resource
// claims, or to any request or limit other than CPU and memory. Empty means the change is a resize.
func resizeReasons(path string, o, n *corev1.ResourceRequirements) []string {
	var reasons []string
	if !equality.Semantic.DeepEqual(o.Claims, n.Claims) {
		reasons = append(reasons, path+".claims changed")
	}
	reasons = append(reasons, nonResizableChanges(path+".limits", o.Limits, n.Limits)...)
	reasons = append(reasons, nonResizableChanges(path+".requests", o.Requests, n.Requests)...)
	return reasons
}

// nonResizableChanges names, in key order, the resources other than CPU and memory that differ
// between two resource lists (added, removed or changed).
func nonResizableChanges(path string, o, n corev1.ResourceList) []string {
	keys := map[corev1.ResourceName]bool{}
	for k := range o {
		keys[k] = true
	}
	for k := range n {
		keys[k] = true
	}
	var changed []string
	for k := range keys {
		if isResizable(k) {
			continue
		}
		ov, oOK := o[k]
		nv, nOK := n[k]
		if oOK != nOK || ov.Cmp(nv) != 0 {
			changed = append(changed, path+"["+string(k)+"] changed")
		}
	}
	sort.Strings(changed)
	return changed
}

func isResizable(name corev1.ResourceName) bool {
	for _, r := range resizable {
		if r == name {
			return true
		}
	}
	return false
}

// checkQOS returns a reason when the pod's QoS class would change: the API server rejects a resize
// that changes it, so such a change needs a new pod.
func checkQOS(o, n *corev1.PodSpec) []string {
	oq, nq := qosClass(o), qosClass(n)
	if oq == nq {
		return nil
	}
	return []string{"spec.containers[*].resources: QoS class would change from " + string(oq) + " to " + string(nq)}
}

// qosClass computes the QoS class Kubernetes gives a pod created from spec: from the pod-level
// resources when set, otherwise from the CPU and memory of all containers, where a missing request
// defaults to the limit as API defaulting does.
func qosClass(spec *corev1.PodSpec) corev1.PodQOSClass {
	var all []corev1.ResourceRequirements
	if spec.Resources != nil && (len(spec.Resources.Requests) > 0 || len(spec.Resources.Limits) > 0) {
		all = append(all, *spec.Resources)
	} else {
		for i := range spec.InitContainers {
			all = append(all, spec.InitContainers[i].Resources)
		}
		for i := range spec.Containers {
			all = append(all, spec.Containers[i].Resources)
		}
	}
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	guaranteed := true
	for i := range all {
		req, lim := effectiveResources(&all[i])
		addTo(requests, req)
		addTo(limits, lim)
		if len(lim) != len(resizable) {
			guaranteed = false
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if guaranteed && len(requests) == len(limits) {
		for k, r := range requests {
			if l, ok := limits[k]; !ok || l.Cmp(r) != 0 {
				guaranteed = false
			}
		}
		if guaranteed {
			return corev1.PodQOSGuaranteed
		}
	}
	return corev1.PodQOSBurstable
}

// effectiveResources returns the non-zero CPU and memory requests and limits of r, with a missing
// request defaulted to the limit.
func effectiveResources(r *corev1.ResourceRequirements) (req, lim corev1.ResourceList) {
	req, lim = corev1.ResourceList{}, corev1.ResourceList{}
	for _, name := range resizable {
		if q, ok := r.Limits[name]; ok && !q.IsZero() {
			lim[name] = q.DeepCopy()
		}
		if q, ok := r.Requests[name]; ok {
			if !q.IsZero() {
				req[name] = q.DeepCopy()
			}
		} else if q, ok := lim[name]; ok {
			req[name] = q.DeepCopy()
		}
	}
	return req, lim
}

func addTo(sum, add corev1.ResourceList) {
	for k, q := range add {
		s := sum[k]
		s.Add(q)
		sum[k] = s
	}
}
