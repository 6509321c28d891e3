package deletionprotection

import (
	"testing"

	"k8s.io/utils/ptr"
)

func TestDecide(t *testing.T) {
	ns := func(v string) Subject { return Subject{Kind: Namespace, Describe: "Namespace team-a", Value: v} }
	wl := func(v string) Subject { return Subject{Kind: Workload, Describe: "CloneSet team-a/web", Value: v} }
	crd := func(v string) Subject {
		return Subject{Kind: CustomResourceDefinition, Describe: "CustomResourceDefinition widgets.example.com", Value: v}
	}
	svc := func(v string) Subject { return Subject{Kind: AlwaysOnly, Describe: "Service team-a/api", Value: v} }
	on := Policy{CRDCascading: true}
	for _, tc := range []struct {
		name   string
		policy Policy
		s      Subject
		d      Dependents
		want   string // "" allowed
	}{
		{name: "unlabelled namespace", s: ns(""), d: Dependents{ActivePods: 3}},
		{name: "value not known: protects nothing", s: ns("always"), d: Dependents{ActivePods: 3}},
		{name: "value not known on a workload", s: wl("Never"), d: Dependents{Replicas: ptr.To[int32](2)}},
		{name: "Always namespace, empty", s: ns("Always"),
			want: "Namespace team-a has policy.kruise.io/delete-protection=Always: remove the label to delete it"},
		{name: "Always, already being deleted", s: Subject{Kind: Namespace, Describe: "Namespace x", Value: "Always", Deleting: true}},
		{name: "Cascading namespace with pods", s: ns("Cascading"), d: Dependents{ActivePods: 3},
			want: "Namespace team-a has policy.kruise.io/delete-protection=Cascading and still contains 3 active pods"},
		{name: "Cascading namespace with a pod and a claim", s: ns("Cascading"), d: Dependents{ActivePods: 1, BoundClaims: 1},
			want: "Namespace team-a has policy.kruise.io/delete-protection=Cascading and still contains 1 active pod and 1 bound PersistentVolumeClaim"},
		{name: "Cascading namespace with claims only", s: ns("Cascading"), d: Dependents{BoundClaims: 2},
			want: "Namespace team-a has policy.kruise.io/delete-protection=Cascading and still contains 2 bound PersistentVolumeClaims"},
		{name: "Cascading namespace, empty", s: ns("Cascading")},
		{name: "Cascading namespace ignores replicas", s: ns("Cascading"), d: Dependents{Replicas: ptr.To[int32](1)}},
		{name: "Cascading workload with replicas", s: wl("Cascading"), d: Dependents{Replicas: ptr.To[int32](3)},
			want: "CloneSet team-a/web has policy.kruise.io/delete-protection=Cascading and spec.replicas is 3: scale it to 0 first"},
		{name: "Cascading workload at 0", s: wl("Cascading"), d: Dependents{Replicas: ptr.To[int32](0)}},
		{name: "Cascading workload, replicas unset", s: wl("Cascading")},
		{name: "Always workload at 0", s: wl("Always"), d: Dependents{Replicas: ptr.To[int32](0)},
			want: "CloneSet team-a/web has policy.kruise.io/delete-protection=Always: remove the label to delete it"},
		{name: "Cascading Service: not protected", s: svc("Cascading")},
		{name: "Always Service", s: svc("Always"),
			want: "Service team-a/api has policy.kruise.io/delete-protection=Always: remove the label to delete it"},
		{name: "Cascading CRD without the gate", s: crd("Cascading"),
			want: "CustomResourceDefinition widgets.example.com has policy.kruise.io/delete-protection=Cascading, which needs the feature gate DeletionProtectionForCRDCascadingGate (off; feature-gate DeletionProtectionForCRDCascadingGate is not enabled): remove the label or turn the gate on"},
		{name: "Cascading CRD without the gate, no CRs", s: crd("Cascading"), d: Dependents{},
			want: "CustomResourceDefinition widgets.example.com has policy.kruise.io/delete-protection=Cascading, which needs the feature gate DeletionProtectionForCRDCascadingGate (off; feature-gate DeletionProtectionForCRDCascadingGate is not enabled): remove the label or turn the gate on"},
		{name: "Cascading CRD with CRs", policy: on, s: crd("Cascading"), d: Dependents{CustomResources: 2, Resource: "widgets.example.com"},
			want: "CustomResourceDefinition widgets.example.com has policy.kruise.io/delete-protection=Cascading and still has 2 custom resources (widgets.example.com)"},
		{name: "Cascading CRD, CRs not all counted", policy: on, s: crd("Cascading"), d: Dependents{CustomResources: 1, CustomResourcesAtLeast: true, Resource: "widgets.example.com"},
			want: "CustomResourceDefinition widgets.example.com has policy.kruise.io/delete-protection=Cascading and still has at least 1 custom resource (widgets.example.com)"},
		{name: "Cascading CRD, none left", policy: on, s: crd("Cascading")},
		{name: "Always CRD with the gate", policy: on, s: crd("Always"),
			want: "CustomResourceDefinition widgets.example.com has policy.kruise.io/delete-protection=Always: remove the label to delete it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := tc.policy.Decide(tc.s, tc.d); err != nil {
				got = err.Error()
			}
			want := tc.want
			if want != "" {
				// OpenKruise's phrase first, which automation matches; Kruise's account after it.
				want = "forbidden by ResourcesProtectionDeletion: " + want
			}
			if got != want {
				t.Errorf("Decide = %q\nwant     %q", got, want)
			}
		})
	}
}

func TestNeedsDependents(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		s    Subject
		want bool
	}{
		{s: Subject{Kind: Namespace, Value: "Cascading"}, want: true},
		{s: Subject{Kind: Namespace, Value: "Always"}},
		{s: Subject{Kind: Namespace, Value: "Cascading", Deleting: true}},
		{s: Subject{Kind: Workload, Value: "Cascading"}}, // its replicas are in the stored object
		{s: Subject{Kind: AlwaysOnly, Value: "Cascading"}},
		{s: Subject{Kind: CustomResourceDefinition, Value: "Cascading"}}, // refused without the gate
		{p: Policy{CRDCascading: true}, s: Subject{Kind: CustomResourceDefinition, Value: "Cascading"}, want: true},
	} {
		if got := tc.p.NeedsDependents(tc.s); got != tc.want {
			t.Errorf("%+v NeedsDependents(%+v) = %t, want %t", tc.p, tc.s, got, tc.want)
		}
	}
}
