package sidecarrules

import (
	"fmt"
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// PatchWhitelist is OpenKruise's SidecarSet patch-metadata whitelist (the
// SidecarSet_PatchPodMetadata_WhiteList entry of the kruise-configuration ConfigMap): which pod
// annotation keys a SidecarSet's patchPodMetadata may set.
type PatchWhitelist struct {
	// Rules are the whitelist's rules.
	Rules []PatchWhitelistRule `json:"rules"`
}

// PatchWhitelistRule allows annotation keys matching any of AllowedAnnotationKeyExprs (regular
// expressions, unanchored) to SidecarSets whose labels match Selector (all SidecarSets when nil).
type PatchWhitelistRule struct {
	Selector                  *metav1.LabelSelector `json:"selector,omitempty"`
	AllowedAnnotationKeyExprs []string              `json:"allowedAnnotationKeyExprs"`
}

// PatchPolicy says which patchPodMetadata keys a SidecarSet may set.
type PatchPolicy struct {
	// Whitelist is the whitelist; nil when none is configured.
	Whitelist *PatchWhitelist
	// DefaultsAllowed allows every key when no whitelist is configured or no rule applies to the
	// SidecarSet (OpenKruise's SidecarSetPatchPodMetadataDefaultsAllowed feature gate).
	DefaultsAllowed bool
}

// CheckPatchMetadata returns an error unless policy allows every annotation key set's
// patchPodMetadata sets, as OpenKruise's SidecarSet validation decides it.
func CheckPatchMetadata(set *v1beta1.SidecarSet, policy PatchPolicy) error {
	if len(set.Spec.PatchPodMetadata) == 0 {
		return nil
	}
	if policy.Whitelist == nil {
		if policy.DefaultsAllowed {
			return nil
		}
		return fmt.Errorf("SidecarSet %s: patch metadata whitelist not found", set.Name)
	}
	var allowed []*regexp.Regexp
	for _, rule := range policy.Whitelist.Rules {
		if rule.Selector != nil {
			sel, err := metav1.LabelSelectorAsSelector(rule.Selector)
			if err != nil {
				return fmt.Errorf("patch metadata whitelist: selector: %w", err)
			}
			if !sel.Matches(labels.Set(set.Labels)) {
				continue
			}
		}
		for _, expr := range rule.AllowedAnnotationKeyExprs {
			re, err := regexp.Compile(expr)
			if err != nil {
				return fmt.Errorf("patch metadata whitelist: %w", err)
			}
			allowed = append(allowed, re)
		}
	}
	if len(allowed) == 0 {
		if policy.DefaultsAllowed {
			return nil
		}
		return fmt.Errorf("SidecarSet %s: patch metadata annotations are not allowed", set.Name)
	}
	for _, patch := range set.Spec.PatchPodMetadata {
		for key := range patch.Annotations {
			if !anyMatch(allowed, key) {
				return fmt.Errorf("SidecarSet %s: patch metadata annotation %s is not allowed", set.Name, key)
			}
		}
	}
	return nil
}

func anyMatch(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// patchMetadata applies patches to annotations in order: Retain (also the empty policy) sets
// keys the pod lacks, Overwrite sets every key, MergePatchJson merges each value as a JSON merge
// patch into the pod's non-empty value, or sets it. Unknown policies change nothing.
func patchMetadata(annotations map[string]string, patches []v1beta1.SidecarSetPatchPodMetadata) error {
	for _, patch := range patches {
		for key, value := range patch.Annotations {
			old, has := annotations[key]
			switch patch.PatchPolicy {
			case v1beta1.SidecarSetRetainPatchPolicy, "":
				if !has {
					annotations[key] = value
				}
			case v1beta1.SidecarSetOverwritePatchPolicy:
				annotations[key] = value
			case v1beta1.SidecarSetMergePatchJSONPatchPolicy:
				if old == "" {
					annotations[key] = value
					continue
				}
				merged, err := mergePatch([]byte(old), []byte(value))
				if err != nil {
					return fmt.Errorf("merge patch of annotation %s: %w", key, err)
				}
				annotations[key] = string(merged)
			}
		}
	}
	return nil
}
