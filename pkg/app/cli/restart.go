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

// restartOptions are the restart command's flags.
type restartOptions struct {
	// recreate has a CloneSet's controller recreate the pods instead of restarting them in place.
	recreate bool
}

func newRestartCommand(env *Env) *cobra.Command {
	var timeout time.Duration
	var o restartOptions
	cmd := &cobra.Command{
		Use:   "restart (" + workloadUse + "|ud/NAME) [--recreate]",
		Short: "Restart the workload's pods: a CloneSet's containers in place (--recreate: new pods), the others' pods by a rolling update",
		Long: "A CloneSet's pods restart in place by default: a ContainerRecreateRequest per pod restarts all its containers " +
			"(the pod out of its Services for 1 s first), maxUnavailable pods at a time (at least 1), each batch once the " +
			"previous one is restarted and Ready; the partition's pods are left alone, and the pods keep their names, IPs " +
			"and volumes. It needs kruise-daemon on the pods' nodes, and waits at most --timeout.\n\n" +
			"With --recreate, a CloneSet restarts as OpenKruise's kubectl-kruise restarts it: every container of its " +
			"template gets the env variable " + RestartedAtEnv + " (the time of the restart), a change that cannot be made " +
			"in place, so the CloneSet controller replaces the pods by its rolling update (maxUnavailable, maxSurge, " +
			"partition, paused). It returns at once; refused for an InPlaceOnly CloneSet.\n\n" +
			"An Advanced StatefulSet or Advanced DaemonSet always restarts by a rolling update: its template gets the " +
			"annotation " + inplace.RestartedAtAnnotation + ", as kubectl sets it, and its controller recreates the pods " +
			"(--recreate changes nothing for them).\n\n" +
			"A UnitedDeployment (ud/NAME) restarts each subset's workload, in its topology's order, as its kind restarts: " +
			"a CloneSet or Advanced StatefulSet as above, a native StatefulSet or Deployment by the annotation " +
			inplace.RestartedAtAnnotation + ", as kubectl restarts them.",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			if name, ok := namesUnitedDeployment(args); ok {
				c, ns, err := env.Client()
				if err != nil {
					return err
				}
				return restartUnitedDeployment(ctx, c, client.ObjectKey{Namespace: ns, Name: name}, env.Streams.Out, o)
			}
			c, w, err := env.load(cmd.Context(), args)
			if err != nil {
				return err
			}
			return w.restart(ctx, c, env.Streams.Out, o)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "in-place restarts: give up after this long")
	cmd.Flags().BoolVar(&o.recreate, "recreate", false,
		"CloneSets: have the controller recreate the pods by its rolling update (env "+RestartedAtEnv+" in the template, as OpenKruise's kubectl-kruise does) instead of restarting their containers in place")
	return cmd
}

// RestartedAtEnv is the env variable `rollout restart --recreate` sets, to the time of the
// restart (RFC 3339), in every container of a CloneSet's template, as OpenKruise's kubectl-kruise
// restarts a CloneSet: the new revision differs in an env value, which no pod reaches in place.
const RestartedAtEnv = "RESTARTED_AT"

// setRestartedAtEnv sets RestartedAtEnv to at in every container of tpl, replacing an earlier one.
func setRestartedAtEnv(tpl *corev1.PodTemplateSpec, at string) {
	v := corev1.EnvVar{Name: RestartedAtEnv, Value: at}
	for i := range tpl.Spec.Containers {
		ct := &tpl.Spec.Containers[i]
		if j := slices.IndexFunc(ct.Env, func(e corev1.EnvVar) bool { return e.Name == RestartedAtEnv }); j >= 0 {
			ct.Env[j] = v
		} else {
			ct.Env = append(ct.Env, v)
		}
	}
}

// restartByTemplateEnv restarts cs as OpenKruise's kubectl-kruise does (setRestartedAtEnv): the
// controller recreates the pods by its update strategy. An InPlaceOnly CloneSet never recreates a
// pod (and its webhook refuses the change), so it is refused.
func restartByTemplateEnv(ctx context.Context, c client.Client, cs *appsv1alpha1.CloneSet, out io.Writer) error {
	if cs.Spec.UpdateStrategy.Type == appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType {
		return fmt.Errorf("cloneset %q updates InPlaceOnly, which never recreates a pod: --recreate cannot restart it; "+
			"restart its containers in place (without --recreate)", cs.Name)
	}
	before := cs.DeepCopy()
	at := time.Now().Format(time.RFC3339)
	setRestartedAtEnv(&cs.Spec.Template, at)
	if err := c.Patch(ctx, cs, client.MergeFrom(before)); err != nil {
		return err
	}
	fmt.Fprintf(out, "cloneset.apps.kruise.io/%s restarted: env %s=%s in every container\n", cs.Name, RestartedAtEnv, at)
	if cs.Spec.UpdateStrategy.Paused {
		fmt.Fprintln(out, "the rollout is paused: the pods are recreated once it is resumed")
	}
	if p := cloneset.ComputeBounds(&cs.Spec).Partition; p > 0 {
		fmt.Fprintf(out, "partition %d: as many pods keep running unrestarted\n", p)
	}
	fmt.Fprintf(out, "the controller recreates the pods by its rolling update (within maxUnavailable and maxSurge): "+
		"kubectl kruise rollout status clone/%s\n", cs.Name)
	return nil
}

// restartInPlace restarts the containers of cs's pods in place, RestartBatches at a time, each
// batch once the previous one is restarted and Ready.
func restartInPlace(ctx context.Context, c client.Client, cs *appsv1alpha1.CloneSet, out io.Writer) error {
	own, err := ownPods(ctx, c, cs, cs.Spec.Selector)
	if err != nil {
		return err
	}
	pods := map[string]*corev1.Pod{}
	for _, p := range own {
		if p.DeletionTimestamp == nil {
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
