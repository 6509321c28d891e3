package deletionprotection

import (
	"fmt"
	"strings"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
)

// Kind is what a protected object is, which says what its dependents are.
type Kind int

// The kinds of protected objects.
const (
	// Namespace: its dependents are its active pods and bound claims.
	Namespace Kind = iota + 1
	// Workload: its dependents are its replicas (spec.replicas).
	Workload
	// CustomResourceDefinition: its dependents are its custom resources.
	CustomResourceDefinition
	// AlwaysOnly is a Service or an Ingress: Cascading does not protect it.
	AlwaysOnly
)

// Subject is the object whose deletion is decided, as stored before the deletion.
type Subject struct {
	Kind Kind
	// Describe names the object in messages: "Namespace team-a", "CloneSet ns/web".
	Describe string
	// Value is the label's value ("" when absent).
	Value string
	// Deleting is set when the object already has a deletionTimestamp.
	Deleting bool
}

// Dependents are what a Cascading object still has. Only those of the subject's kind are read.
type Dependents struct {
	// Replicas is a workload's spec.replicas (nil when unset).
	Replicas *int32
	// ActivePods are a namespace's pods neither finished (Succeeded, Failed) nor being deleted;
	// BoundClaims its PersistentVolumeClaims Bound and not being deleted.
	ActivePods, BoundClaims int
	// CustomResources are a CRD's custom resources not being deleted; CustomResourcesAtLeast is set
	// when they were not all counted (the count is a lower bound); Resource names them
	// (group/resource).
	CustomResources        int
	CustomResourcesAtLeast bool
	Resource               string
}

// Policy is what the feature gates decide.
type Policy struct {
	// CRDCascading is the gate DeletionProtectionForCRDCascadingGate: without it a
	// CustomResourceDefinition labelled Cascading is never deleted.
	CRDCascading bool
}

// CRDCascadingGate names the feature gate of Policy.CRDCascading in messages.
const CRDCascadingGate = "DeletionProtectionForCRDCascadingGate"

// NeedsDependents reports whether Decide reads dependents beyond the stored object for s: the
// lists of a Cascading namespace or CRD.
func (p Policy) NeedsDependents(s Subject) bool {
	if s.Deleting || s.Value != policyv1alpha1.DeletionProtectionTypeCascading {
		return false
	}
	return s.Kind == Namespace || (s.Kind == CustomResourceDefinition && p.CRDCascading)
}

// Refusal is the phrase OpenKruise's refusals start with, which scripts and tests match; every
// refusal of Decide starts with it too, followed by Kruise's own account of what holds the object.
const Refusal = "forbidden by ResourcesProtectionDeletion"

// Decide returns nil when s may be deleted, otherwise why not (the message of the denial, which
// starts with Refusal).
func (p Policy) Decide(s Subject, d Dependents) error {
	if err := p.decide(s, d); err != nil {
		return fmt.Errorf("%s: %w", Refusal, err)
	}
	return nil
}

func (p Policy) decide(s Subject, d Dependents) error {
	if s.Deleting {
		return nil
	}
	label := fmt.Sprintf("%s has %s=%s", s.Describe, policyv1alpha1.DeletionProtectionKey, s.Value)
	switch s.Value {
	case policyv1alpha1.DeletionProtectionTypeAlways:
		return fmt.Errorf("%s: remove the label to delete it", label)
	case policyv1alpha1.DeletionProtectionTypeCascading:
	default:
		return nil
	}
	switch s.Kind {
	case Namespace:
		var left []string
		if d.ActivePods > 0 {
			left = append(left, count(d.ActivePods, "active pod"))
		}
		if d.BoundClaims > 0 {
			left = append(left, count(d.BoundClaims, "bound PersistentVolumeClaim"))
		}
		if len(left) > 0 {
			return fmt.Errorf("%s and still contains %s", label, strings.Join(left, " and "))
		}
	case Workload:
		if d.Replicas != nil && *d.Replicas > 0 {
			return fmt.Errorf("%s and spec.replicas is %d: scale it to 0 first", label, *d.Replicas)
		}
	case CustomResourceDefinition:
		if !p.CRDCascading {
			return fmt.Errorf("%s, which needs the feature gate %s (off; feature-gate %s is not enabled): remove the label or turn the gate on", label, CRDCascadingGate, CRDCascadingGate)
		}
		if d.CustomResources > 0 {
			n := count(d.CustomResources, "custom resource")
			if d.CustomResourcesAtLeast {
				n = "at least " + n
			}
			return fmt.Errorf("%s and still has %s (%s)", label, n, d.Resource)
		}
	}
	return nil
}

// count is "1 thing" or "n things".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
