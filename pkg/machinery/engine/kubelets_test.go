package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

func kubeletNode(name, version string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: version}}}
}

// Nodes of one kind that fell silent together are probed again one at a time; a new node of a
// silent kind is not probed at all; a node re-created under its name starts over.
func TestKubeletsByKind(t *testing.T) {
	ctx := context.Background()
	b := fake.NewClientBuilder()
	for i := range 4 {
		b = b.WithObjects(kubeletNode(fmt.Sprintf("v%d", i), "virtual"))
	}
	reader := b.WithObjects(kubeletNode("real", "v1.37.2"), kubeletNode("fresh", "virtual")).Build()
	p := inplace.DefaultKubeletPolicy()
	k := NewKubelets(reader, nil, p)
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	for i := range 4 {
		node := fmt.Sprintf("v%d", i)
		d := k.Decide(ctx, node, now)
		if i < p.ClassSilent && (!d.Wait || !d.Probe) {
			t.Fatalf("%s, not heard from: %+v, want a probe", node, d)
		}
		k.Record(ctx, node, d, nil, true, "ns/pod", now)
	}
	if d := k.Decide(ctx, "fresh", now); d.Wait {
		t.Fatalf("a new node of a silent kind: %+v, want no wait", d)
	}
	if d := k.Decide(ctx, "real", now); !d.Probe {
		t.Fatalf("a node of another kind: %+v, want a probe", d)
	}
	later := now.Add(p.Reprobe)
	probes := 0
	for i := range 4 {
		if d := k.Decide(ctx, fmt.Sprintf("v%d", i), later); d.Wait {
			probes++
		}
	}
	if probes != 1 {
		t.Fatalf("%d silent nodes of one kind probed again together, want 1", probes)
	}
}
