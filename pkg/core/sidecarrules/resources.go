package sidecarrules

import (
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// The resourcesPolicy of a SidecarSet container (or init container), applied at pod creation as
// OpenKruise v1.9.0's pod webhook applies it (pkg/webhook/pod/mutating/sidecarset_resources.go):
//
//   - The targets are the pod's containers, then its native sidecars (init containers with
//     restartPolicy Always; other init containers are not targets), whose name the regular
//     expression targetContainersNameRegex matches anywhere (regexp.MatchString: "engine" matches
//     "large-engine-v4"; anchor it with ^...$ for whole names), less those named like a container
//     or init container of any SidecarSet injected into the pod. No target, or an invalid regular
//     expression, refuses the pod.
//   - For each of cpu and memory, the targets' limits combine by sum or max
//     (targetContainersMode); a target without that limit is unlimited and makes the combined
//     limit unlimited, and then the sidecar gets no limit for that resource, whatever the
//     expression. The requests combine the same way, a missing request counting as 0.
//   - Each non-empty expression of resourcesExpr is evaluated on the combined value of its own
//     resource (see resources_expr.go); an error, or a negative result, refuses the pod.
//   - The results replace the container's resources as a whole: only the limits and requests
//     computed are left (its own limits, requests and claims are dropped; the SidecarSet webhook
//     does not let resources be set alongside resourcesPolicy).

// applyResourcesPolicy sets c's resources from its resourcesPolicy, if it has one, for pod, into
// which sets (set among them) are injected. field is c's path in set ("spec.containers[0]").
func applyResourcesPolicy(pod *corev1.Pod, sets []*v1beta1.SidecarSet, set *v1beta1.SidecarSet,
	c *v1beta1.SidecarSetContainer, field string) error {
	policy := c.ResourcesPolicy
	if policy == nil {
		return nil
	}
	r, err := policyResources(pod, sets, policy)
	if err != nil {
		return fmt.Errorf("SidecarSet %s: %s.resourcesPolicy.%w", set.Name, field, err)
	}
	c.Resources = r
	return nil
}

// policyResources computes the resources that policy gives a sidecar of pod. Its errors start
// with the field of policy at fault ("resourcesExpr.limits.cpu ...").
func policyResources(pod *corev1.Pod, sets []*v1beta1.SidecarSet, policy *v1beta1.SidecarSetResourcesPolicy) (corev1.ResourceRequirements, error) {
	targets, err := policyTargets(pod, sets, policy.TargetContainersNameRegex)
	if err != nil {
		return corev1.ResourceRequirements{}, fmt.Errorf("targetContainersNameRegex %q: %w", policy.TargetContainersNameRegex, err)
	}
	limits, requests := combineResources(targets, policy.TargetContainersMode)
	var out corev1.ResourceRequirements
	for _, part := range []struct {
		name     string
		exprs    *v1beta1.SidecarSetResourceExprs
		combined corev1.ResourceList
		into     *corev1.ResourceList
		limit    bool
	}{
		{"limits", policy.ResourcesExpr.Limits, limits, &out.Limits, true},
		{"requests", policy.ResourcesExpr.Requests, requests, &out.Requests, false},
	} {
		if part.exprs == nil {
			continue
		}
		list := corev1.ResourceList{}
		for _, r := range []struct {
			name corev1.ResourceName
			expr string
		}{{corev1.ResourceCPU, part.exprs.CPU}, {corev1.ResourceMemory, part.exprs.Memory}} {
			if r.expr == "" {
				continue
			}
			input, ok := part.combined[r.name]
			if !ok && part.limit {
				continue // unlimited in, unlimited out
			}
			q, err := evalPolicyExpr(r.expr, input)
			if err != nil {
				return corev1.ResourceRequirements{}, fmt.Errorf("resourcesExpr.%s.%s %q: %w", part.name, r.name, r.expr, err)
			}
			list[r.name] = q
		}
		if len(list) > 0 {
			*part.into = list
		}
	}
	return out, nil
}

// policyTargets returns the containers of pod whose resources a resourcesPolicy with the regular
// expression nameRegex reads: the native sidecars, then the containers, matched by name and not
// named like a container of sets.
func policyTargets(pod *corev1.Pod, sets []*v1beta1.SidecarSet, nameRegex string) ([]*corev1.Container, error) {
	re, err := regexp.Compile(nameRegex)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression: %v", err)
	}
	sidecars := map[string]bool{}
	for _, s := range sets {
		for _, list := range [][]v1beta1.SidecarSetContainer{s.Spec.InitContainers, s.Spec.Containers} {
			for i := range list {
				sidecars[list[i].Name] = true
			}
		}
	}
	var targets []*corev1.Container
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if isNativeSidecar(c) && !sidecars[c.Name] && re.MatchString(c.Name) {
			targets = append(targets, c)
		}
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if !sidecars[c.Name] && re.MatchString(c.Name) {
			targets = append(targets, c)
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("no container of the pod matches")
	}
	return targets, nil
}

// combineResources combines the cpu and memory of targets by mode (sum or max). A resource is
// absent from limits when a target has no limit for it (unlimited); requests hold what the
// targets request (a missing request counts as 0; a zero sum is left out, which reads the same).
// Quantities are combined with resource.Quantity's own arithmetic, so the results keep the
// formats OpenKruise's do. Another mode combines nothing.
func combineResources(targets []*corev1.Container, mode v1beta1.SidecarSetTargetContainersMode) (limits, requests corev1.ResourceList) {
	limits, requests = corev1.ResourceList{}, corev1.ResourceList{}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		switch mode {
		case v1beta1.SidecarSetTargetContainersModeSum:
			limit, request := resource.NewQuantity(0, resource.DecimalSI), resource.NewQuantity(0, resource.DecimalSI)
			unlimited := false
			for _, c := range targets {
				if q, ok := c.Resources.Limits[name]; ok {
					limit.Add(q.DeepCopy())
				} else {
					unlimited = true
				}
				if q, ok := c.Resources.Requests[name]; ok {
					request.Add(q.DeepCopy())
				}
			}
			if !unlimited {
				limits[name] = *limit
			}
			if !request.IsZero() {
				requests[name] = *request
			}
		case v1beta1.SidecarSetTargetContainersModeMax:
			var limit, request *resource.Quantity
			unlimited := false
			for _, c := range targets {
				if q, ok := c.Resources.Limits[name]; !ok {
					unlimited = true
				} else if limit == nil || q.Cmp(*limit) > 0 {
					limit = quantityPtr(q)
				}
				if q, ok := c.Resources.Requests[name]; ok && (request == nil || q.Cmp(*request) > 0) {
					request = quantityPtr(q)
				}
			}
			if limit != nil && !unlimited {
				limits[name] = *limit
			}
			if request != nil {
				requests[name] = *request
			}
		}
	}
	return limits, requests
}

func quantityPtr(q resource.Quantity) *resource.Quantity {
	c := q.DeepCopy()
	return &c
}
