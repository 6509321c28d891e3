package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/controller/cloneset"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

// RestartBatches splits pods (sorted by name) into the batches a restart takes: the first
// replicas-partition pods, maxUnavailable (as the controller reads it, at least 1) at a time.
func RestartBatches(cs *appsv1alpha1.CloneSet, pods []string) [][]string {
	b := cloneset.ComputeBounds(&cs.Spec)
	pods = slices.Sorted(slices.Values(pods))
	pods = pods[:max(min(len(pods), b.ExpectedUpdated), 0)]
	size := max(b.MaxUnavailable, 1)
	var out [][]string
	for len(pods) > 0 {
		k := min(size, len(pods))
		out = append(out, pods[:k])
		pods = pods[k:]
	}
	return out
}

func newRestartCommand(env *Env) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use: "restart " + workloadUse,
		Short: "Restart the pods: a CloneSet's containers in place (ContainerRecreateRequests), batch by batch within maxUnavailable, " +
			"the partition's pods left alone; an Advanced StatefulSet's or Advanced DaemonSet's through a rolling update " +
			"(template annotation kubectl.kubernetes.io/restartedAt)",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, w, err := env.load(cmd.Context(), args)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return w.restart(ctx, c, env.Streams.Out)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "give up after this long")
	return cmd
}

// restartInPlace restarts the containers of cs's pods in place, RestartBatches at a time, each
// batch once the previous one is restarted and Ready.
func restartInPlace(ctx context.Context, c client.Client, cs *appsv1alpha1.CloneSet, out io.Writer) error {
	sel, err := metav1.LabelSelectorAsSelector(cs.Spec.Selector)
	if err != nil {
		return err
	}
	list := &corev1.PodList{}
	if err := c.List(ctx, list, client.InNamespace(cs.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return err
	}
	pods := map[string]*corev1.Pod{}
	for i := range list.Items {
		if p := &list.Items[i]; metav1.IsControlledBy(p, cs) && p.DeletionTimestamp == nil {
			pods[p.Name] = p
		}
	}
	names := make([]string, 0, len(pods))
	for n := range pods {
		names = append(names, n)
	}
	batches := RestartBatches(cs, names)
	stamp := time.Now().UTC().Format("20060102150405")
	t0 := time.Now()
	done := 0
	for i, batch := range batches {
		fmt.Fprintf(out, "batch %d/%d: restarting %s\n", i+1, len(batches), strings.Join(batch, ", "))
		var crrs []*appsv1alpha1.ContainerRecreateRequest
		for _, name := range batch {
			crr := restartRequest(pods[name], stamp)
			if err := createRestart(ctx, c, crr, out); err != nil {
				return fmt.Errorf("restart pod %s: %w", name, err)
			}
			crrs = append(crrs, crr)
		}
		if err := waitRestarted(ctx, c, crrs); err != nil {
			return err
		}
		done += len(batch)
		fmt.Fprintf(out, "batch %d/%d done: %d/%d pods restarted, %.1fs\n", i+1, len(batches), done, len(names), time.Since(t0).Seconds())
	}
	fmt.Fprintf(out, "cloneset %q restarted: %d pods in place in %.1fs\n", cs.Name, done, time.Since(t0).Seconds())
	return nil
}

// budgetRetry is how often a restart its pod's PodUnavailableBudget refused is asked again.
var budgetRetry = 2 * time.Second

// createRestart creates crr, waiting while the pod's PodUnavailableBudget refuses the restart
// (429, as kubectl drain waits for a PodDisruptionBudget).
func createRestart(ctx context.Context, c client.Client, crr *appsv1alpha1.ContainerRecreateRequest, out io.Writer) error {
	for told := false; ; told = true {
		err := c.Create(ctx, crr)
		if !apierrors.IsTooManyRequests(err) {
			return err
		}
		if !told {
			fmt.Fprintf(out, "pod %s waits for its PodUnavailableBudget: %v\n", crr.Spec.PodName, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last refusal: %v", ctx.Err(), err)
		case <-time.After(budgetRetry):
		}
	}
}

// restartRequest asks kruise-daemon to restart every container of pod, after taking it out of its
// Services for a second; the request goes with the pod and ten minutes after it ends.
func restartRequest(pod *corev1.Pod, stamp string) *appsv1alpha1.ContainerRecreateRequest {
	crr := &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name + "-restart-" + stamp,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}}},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: pod.Name,
			Strategy: &appsv1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: appsv1alpha1.ContainerRecreateRequestFailurePolicyFail,
				UnreadyGracePeriodSeconds: ptr.To[int64](1)},
			ActiveDeadlineSeconds: ptr.To[int64](600), TTLSecondsAfterFinished: ptr.To[int32](600)},
	}
	for _, c := range pod.Spec.Containers {
		crr.Spec.Containers = append(crr.Spec.Containers, appsv1alpha1.ContainerRecreateRequestContainer{Name: c.Name})
	}
	return crr
}

// waitRestarted waits for every request to complete and its pod to be Ready again; a failed
// container is an error naming it.
func waitRestarted(ctx context.Context, c client.Client, crrs []*appsv1alpha1.ContainerRecreateRequest) error {
	for {
		pending := 0
		for _, crr := range crrs {
			cur := &appsv1alpha1.ContainerRecreateRequest{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil {
				return err
			}
			if cur.Status.Phase != appsv1alpha1.ContainerRecreateRequestCompleted {
				pending++
				continue
			}
			for _, s := range cur.Status.ContainerRecreateStates {
				if s.Phase == appsv1alpha1.ContainerRecreateRequestFailed {
					return fmt.Errorf("pod %s: container %s was not restarted: %s", cur.Spec.PodName, s.Name, s.Message)
				}
			}
			pod := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: cur.Namespace, Name: cur.Spec.PodName}, pod); err != nil {
				return err
			}
			if !inplace.ConditionIs(pod, corev1.PodReady, corev1.ConditionTrue) {
				pending++
			}
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("gave up waiting for %d pods to restart: %w", pending, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
