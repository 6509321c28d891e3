package demo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/cli"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

// Name is the demo's CloneSet and Service (namespace default).
const (
	Name      = "demo"
	Namespace = metav1.NamespaceDefault
)

// rollout drives the demo's CloneSet through its phases and keeps what the summary needs.
type rollout struct {
	c      client.Client
	cfg    Config
	images [2]string
	view   *view
	// before is every pod of v1 (by UID) once the CloneSet is up; later pods are recreated ones.
	before map[types.UID]bool
	// minEndpoints is the fewest ready Service endpoints seen since the update began.
	minEndpoints int
}

// observation is the demo's view of the cluster at one moment.
type observation struct {
	cs                       *appsv1alpha1.CloneSet
	pods, ready, updated     int
	updatedReady             int
	inPlace, recreated, gone int
	restarts                 int32
	// unreadyUpdated describes the updated pods that are not ready (name, node, container state).
	unreadyUpdated []string
	// uids are the pods' UIDs.
	uids      []types.UID
	endpoints int
}

func (r *rollout) run(ctx context.Context) (*Summary, error) {
	if err := r.create(ctx); err != nil {
		return nil, err
	}
	n := r.cfg.Replicas
	sum := &Summary{Replicas: n, Canary: n - r.cfg.Canary, MaxUnavailable: r.cfg.MaxUnavailable, Images: r.images}
	if err := r.scaleUp(ctx, sum); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := r.canary(ctx, sum, start); err != nil {
		return nil, err
	}
	if err := r.rest(ctx, sum, start); err != nil {
		return nil, err
	}
	return sum, nil
}

// scaleUp waits for the CloneSet's pods of v1, then records them: any other pod later is a
// recreated one.
func (r *rollout) scaleUp(ctx context.Context, sum *Summary) error {
	n := int(r.cfg.Replicas)
	start := time.Now()
	o, err := r.await(ctx, fmt.Sprintf("scale up to %d pods", n), "scale-up", start, func(o *observation) bool {
		return o.pods == n && o.ready == n
	})
	if err != nil {
		return err
	}
	sum.ScaleUp = time.Since(start)
	r.before = map[types.UID]bool{}
	for _, uid := range o.uids {
		r.before[uid] = true
	}
	r.minEndpoints = o.endpoints
	return nil
}

// canary updates the template to v2 with the partition holding all but the canary pods, waits
// for them, and checks them for CanaryCheck: ready, and the same pods.
func (r *rollout) canary(ctx context.Context, sum *Summary, start time.Time) error {
	n, canary := r.cfg.Replicas, r.cfg.Canary
	fmt.Fprintf(r.cfg.Out, "\nUpdating %s → %s in place: a canary batch of %d pod(s) first (partition %d)\n", r.images[0], r.images[1], canary, n-canary)
	// A JSON patch: a merge patch would replace the whole containers list of a custom resource.
	patch := fmt.Sprintf(`[{"op":"add","path":"/spec/updateStrategy/partition","value":%d},`+
		`{"op":"replace","path":"/spec/template/spec/containers/0/image","value":%q}]`, n-canary, r.images[1])
	if err := r.patch(ctx, types.JSONPatchType, patch); err != nil {
		return err
	}
	healthy := func(o *observation) error {
		if o.recreated > 0 || o.gone > 0 {
			return fmt.Errorf("the canary recreated %d pod(s) instead of updating them in place", max(o.recreated, o.gone))
		}
		return nil
	}
	o, err := r.await(ctx, fmt.Sprintf("canary: %d pod(s), partition %d", canary, n-canary), "canary", start, func(o *observation) bool {
		return o.updatedReady >= int(canary) && o.ready == int(n)
	}, healthy)
	if err != nil {
		return err
	}
	sum.CanaryTime = time.Since(start)
	if r.cfg.CanaryCheck > 0 {
		soak := time.Now()
		o, err = r.await(ctx, fmt.Sprintf("checking the canary for %s", r.cfg.CanaryCheck), "canary", start, func(o *observation) bool {
			return time.Since(soak) >= r.cfg.CanaryCheck
		}, healthy, func(o *observation) error {
			if o.updatedReady < int(canary) {
				return fmt.Errorf("the canary failed its check: %d of %d updated pod(s) ready (not ready: %s)",
					o.updatedReady, canary, strings.Join(o.unreadyUpdated, "; "))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(r.cfg.Out, "Canary healthy: %d pod(s) on %s and Ready, same pods (UIDs, nodes, IPs); %d pod(s) still on %s. Rolling out the rest.\n\n",
		o.updatedReady, r.images[1], int(n)-o.updated, r.images[0])
	return nil
}

// rest lifts the partition and waits for every pod updated and ready.
func (r *rollout) rest(ctx context.Context, sum *Summary, start time.Time) error {
	n := r.cfg.Replicas
	restStart := time.Now()
	if err := r.patch(ctx, types.MergePatchType, `{"spec":{"updateStrategy":{"partition":0}}}`); err != nil {
		return err
	}
	o, err := r.await(ctx, fmt.Sprintf("the rest: %d pod(s), maxUnavailable %s", n-r.cfg.Canary, r.cfg.MaxUnavailable), "rollout", start, func(o *observation) bool {
		st := o.cs.Status
		return o.updatedReady == int(n) && o.ready == int(n) && o.pods == int(n) &&
			st.ObservedGeneration == o.cs.Generation && st.UpdatedReadyReplicas == n && st.CurrentRevision == st.UpdateRevision
	})
	if err != nil {
		return err
	}
	sum.RestTime = time.Since(restStart)
	sum.Rollout = time.Since(start)
	sum.InPlace, sum.Recreated, sum.Restarts = o.inPlace, max(o.recreated, o.gone), o.restarts
	sum.MinEndpoints, sum.Endpoints = r.minEndpoints, o.endpoints
	return nil
}

// create makes the Service and the CloneSet of v1 (the webhooks default and validate it).
func (r *rollout) create(ctx context.Context) error {
	labels := map[string]string{"app": Name}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: Namespace, Labels: labels},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	if err := r.c.Create(ctx, svc); err != nil {
		return fmt.Errorf("create Service %s: %w", Name, err)
	}
	maxUnavailable := intstr.Parse(r.cfg.MaxUnavailable)
	pod := corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		Containers: []corev1.Container{{Name: "app", Image: r.images[0],
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}},
		// Spread over every node, the real one included when there is one.
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname,
			WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}},
	}
	cs := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: Namespace, Labels: labels},
		Spec: appsv1alpha1.CloneSetSpec{Replicas: ptr.To(r.cfg.Replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
			UpdateStrategy: appsv1alpha1.CloneSetUpdateStrategy{Type: appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType,
				MaxUnavailable: &maxUnavailable},
			ProgressDeadlineSeconds: ptr.To[int32](120)}}
	if err := r.c.Create(ctx, cs); err != nil {
		return fmt.Errorf("create CloneSet %s: %w", Name, err)
	}
	return nil
}

func (r *rollout) patch(ctx context.Context, typ types.PatchType, patch string) error {
	cs := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: Namespace}}
	if err := r.c.Patch(ctx, cs, client.RawPatch(typ, []byte(patch))); err != nil {
		return fmt.Errorf("patch CloneSet %s: %w", Name, err)
	}
	return nil
}

// observe reads the CloneSet, its pods and the Service's endpoints.
func (r *rollout) observe(ctx context.Context) (*observation, error) {
	cs := &appsv1alpha1.CloneSet{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: Name}, cs); err != nil {
		return nil, fmt.Errorf("get CloneSet %s: %w", Name, err)
	}
	var list corev1.PodList
	if err := r.c.List(ctx, &list, client.InNamespace(Namespace), client.MatchingLabels{"app": Name}); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	pods := list.Items
	o := &observation{cs: cs}
	kept := 0
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		o.pods++
		o.uids = append(o.uids, p.UID)
		// Ready, and not in an in-place update (the gate False): a kubelet working from an older
		// copy of the pod may still report Ready for a moment after the gate turned False.
		ready := inplace.ConditionIs(p, corev1.PodReady, corev1.ConditionTrue) &&
			!inplace.ConditionIs(p, appspub.InPlaceUpdateReady, corev1.ConditionFalse)
		// Updated against the status of this generation only: until the controller has seen the
		// new template, the update revision in the status is the old one, which every pod is at.
		updated := cs.Status.ObservedGeneration == cs.Generation && cs.Status.UpdateRevision != "" &&
			inplace.AtRevision(p.Labels[inplace.RevisionLabel], cs.Status.UpdateRevision)
		if ready {
			o.ready++
		}
		if updated {
			o.updated++
			if ready {
				o.updatedReady++
			} else {
				o.unreadyUpdated = append(o.unreadyUpdated, describe(p))
			}
		}
		for _, c := range p.Status.ContainerStatuses {
			o.restarts += c.RestartCount
		}
		if r.before == nil {
			continue
		}
		if r.before[p.UID] {
			kept++
			if updated {
				o.inPlace++
			}
		} else {
			o.recreated++
		}
	}
	if r.before != nil {
		o.gone = len(r.before) - kept
	}
	var slices discoveryv1.EndpointSliceList
	if err := r.c.List(ctx, &slices, client.InNamespace(Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: Name}); err != nil {
		return nil, fmt.Errorf("list EndpointSlices: %w", err)
	}
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if ptr.Deref(e.Conditions.Ready, false) {
				o.endpoints++
			}
		}
	}
	return o, nil
}

// await observes every 250 ms, showing progress, until done holds; a CloneSet past its progress
// deadline, an error of check (optional) or the demo's timeout ends it with what was last seen.
func (r *rollout) await(ctx context.Context, batch, phase string, start time.Time, done func(*observation) bool,
	check ...func(*observation) error) (*observation, error) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last *observation
	for {
		o, err := r.observe(ctx)
		if err == nil {
			last = o
			if r.before != nil {
				r.minEndpoints = min(r.minEndpoints, o.endpoints)
			}
			line := r.line(phase, batch, o, time.Since(start))
			if done(o) {
				r.view.done(line)
				return o, nil
			}
			r.view.show(line)
			if msg, _, err := cli.Status(o.cs); errors.Is(err, cli.ErrStuck) {
				r.view.done(line)
				return nil, errors.New(msg)
			}
			for _, c := range check {
				if err := c(o); err != nil {
					r.view.done(line)
					return nil, err
				}
			}
		}
		select {
		case <-ctx.Done():
			if last != nil {
				r.view.done(r.line(phase, batch, last, time.Since(start)))
			}
			if err == nil {
				err = ctx.Err()
			}
			return nil, fmt.Errorf("%s did not finish: %w", phase, err)
		case <-tick.C:
		}
	}
}

// describe names pod, its node and its containers' states, for an error message.
func describe(p *corev1.Pod) string {
	var cs []string
	for _, c := range p.Status.ContainerStatuses {
		state := "running"
		switch {
		case c.State.Waiting != nil:
			state = "waiting " + c.State.Waiting.Reason
		case c.State.Terminated != nil:
			state = "terminated " + c.State.Terminated.Reason
		}
		cs = append(cs, fmt.Sprintf("%s %s, ready=%v, restarts %d", c.Name, state, c.Ready, c.RestartCount))
	}
	return fmt.Sprintf("%s on %s (%s)", p.Name, p.Spec.NodeName, strings.Join(cs, "; "))
}
