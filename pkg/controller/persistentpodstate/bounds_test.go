package persistentpodstate

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/platform/kruisescheme"
)

// A target that the webhook would refuse (it was stored while the webhook was off) -- replicas
// 2^31-1 and 300 reserveOrdinals ranges of 100,000, 30 million reserved ordinals -- is run as any
// other: its ordinals are intervals, so the reconcile allocates what the objects take, and the
// states are right (a reserved ordinal's state is dropped, a replica's kept).
func TestReconcileBoundsTheTargetsOrdinals(t *testing.T) {
	scheme, err := kruisescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	var reserve []intstr.IntOrString
	for i := range 300 {
		first := 1 + i*ordinal.MaxReservedRange
		reserve = append(reserve, intstr.FromString(fmt.Sprintf("%d-%d", first, first+ordinal.MaxReservedRange-1)))
	}
	set := &v1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "set"},
		Spec: v1beta1.StatefulSetSpec{Replicas: ptr.To[int32](math.MaxInt32), ReserveOrdinals: reserve,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}
	afterReserved := fmt.Sprintf("db-%d", 1+300*ordinal.MaxReservedRange)
	obj := pps("", map[string]v1alpha1.PersistentPodStatePodState{"db-5": state("n1", "a"), afterReserved: state("n2", "b")})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: nodes["n1"]}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(set, obj, node, ownedPod("db-0", "n1", true)).WithStatusSubresource(obj).Build()
	r := &Reconciler{Client: c, Finder: &workloadfinder.Finder{Reader: c}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "db"}}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if used := after.TotalAlloc - before.TotalAlloc; used > 16<<20 {
		t.Errorf("the reconcile allocated %d MiB, want < 16 MiB", used>>20)
	}
	got := &v1alpha1.PersistentPodState{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	if d, want := describe(got.Status.PodStates), "db-0@n1(a) "+afterReserved+"@n2(b)"; d != want {
		t.Errorf("states %q, want %q (db-5 is reserved: dropped)", d, want)
	}
}

// A custom workload's replicas come from its scale subresource, which no webhook bounds: its
// ordinals take no memory.
func TestCustomTargetOfMaxReplicas(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	target := customTarget("db", math.MaxInt32)
	runtime.ReadMemStats(&after)
	if used := after.TotalAlloc - before.TotalAlloc; used > 4<<10 {
		t.Errorf("customTarget(db, 2^31-1) allocated %d bytes, want < 4 KiB", used)
	}
	if !target.Replicas.Contains(math.MaxInt32-1) || target.Replicas.Contains(math.MaxInt32) {
		t.Errorf("replicas of 2^31-1: Contains(2^31-2) %v, Contains(2^31-1) %v; want true, false",
			target.Replicas.Contains(math.MaxInt32-1), target.Replicas.Contains(math.MaxInt32))
	}
}
