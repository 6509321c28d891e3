package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// InstantiateAnnotation marks a job created by hand from a cron job's template, as kubectl and
// kruise-tools mark it.
const InstantiateAnnotation = "cronjob.kubernetes.io/instantiate"

func newCreateCommand(env *Env) *cobra.Command {
	cmd := &cobra.Command{Use: "create", Short: "Create a ContainerRecreateRequest, a BroadcastJob, or a Job from an AdvancedCronJob"}
	cmd.AddCommand(newCreateCRRCommand(env), newCreateJobCommand(env, false), newCreateJobCommand(env, true))
	return cmd
}

// createOptions are the flags every create command shares.
type createOptions struct {
	dryRun string
}

func (o *createOptions) addFlags(cmd *cobra.Command) {
	addDryRunFlag(cmd, &o.dryRun, "say what would be created, send nothing")
}

// create creates obj, of the kind resource names (as kubectl prints it), as o's --dry-run says,
// and reports it.
func (e *Env) create(ctx context.Context, c client.Client, obj client.Object, resource string, o createOptions) error {
	mode, err := parseDryRun(o.dryRun)
	if err != nil {
		return err
	}
	suffix, err := createAs(ctx, c, obj, mode)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Streams.Out, "%s/%s created%s\n", resource, obj.GetName(), suffix)
	return nil
}

// createAs creates obj as mode says (client: nothing sent; server: the API server checks it) and
// returns what to add to the line reporting it.
func createAs(ctx context.Context, c client.Client, obj client.Object, mode dryRun) (suffix string, err error) {
	switch mode {
	case dryRunClient:
		return " (dry run)", nil
	case dryRunServer:
		return " (server dry run)", c.Create(ctx, obj, client.DryRunAll)
	}
	return "", c.Create(ctx, obj)
}

// crrOptions are create ContainerRecreateRequest's flags, named as kruise-tools names them.
type crrOptions struct {
	createOptions
	pod                  string
	containers           []string
	unreadyGrace         int64
	minStarted           int32
	terminationGrace     int64
	activeDeadline       int64
	ttlSecondsAfterEnded int32
}

func newCreateCRRCommand(env *Env) *cobra.Command {
	o := &crrOptions{}
	cmd := &cobra.Command{
		Use:     "ContainerRecreateRequest NAME --pod=POD [--containers=C1,C2]",
		Aliases: []string{"containerrecreaterequest", "crr"},
		Short:   "Create a ContainerRecreateRequest: kruise-daemon restarts the pod's containers in place",
		Long: "Create a ContainerRecreateRequest NAME asking kruise-daemon to recreate the --containers of --pod (all of them " +
			"by default) in place: the pod keeps its name, IP and volumes. The request fails at the first container that " +
			"cannot be recreated (failurePolicy Fail), holds the pod NotReady -u seconds first, counts a container recreated " +
			"once it has run -m seconds, gives up after 300 s and is deleted 1800 s after it ends, as kruise-tools' requests " +
			"do. Kruise's webhook fills in each container's preStop hook and ports from the pod.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd.Context(), env, args[0]) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.pod, "pod", "p", "", "the pod whose containers to recreate (required)")
	f.StringSliceVar(&o.containers, "containers", nil, "the containers to recreate, comma separated (default: all the pod's containers)")
	f.Int64VarP(&o.unreadyGrace, "unreadyGracePeriodSeconds", "u", 3, "seconds the pod is held NotReady before its containers are stopped")
	f.Int32VarP(&o.minStarted, "minStartedSeconds", "m", 3, "seconds a recreated container must run to count as recreated")
	f.Int64Var(&o.terminationGrace, "terminationGracePeriodSeconds", -1, "seconds a container is given to stop (default: the pod's own)")
	f.Int64Var(&o.activeDeadline, "activeDeadlineSeconds", 300, "seconds the request may run before it fails")
	f.Int32Var(&o.ttlSecondsAfterEnded, "ttlSecondsAfterFinished", 1800, "seconds an ended request is kept")
	o.addFlags(cmd)
	return cmd
}

// run creates request name for o.pod's containers, after checking the pod has them.
func (o *crrOptions) run(ctx context.Context, env *Env, name string) error {
	if o.pod == "" {
		return fmt.Errorf("--pod names the pod whose containers to recreate")
	}
	c, ns, err := env.Client()
	if err != nil {
		return err
	}
	pod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.pod}, pod); err != nil {
		return fmt.Errorf("pod %s in namespace %s: %w", o.pod, ns, err)
	}
	var have []string
	for _, ct := range pod.Spec.Containers {
		have = append(have, ct.Name)
	}
	names := o.containers
	if len(names) == 0 {
		names = have
	}
	for _, n := range names {
		if !slices.Contains(have, n) {
			return fmt.Errorf("pod %s has no container %q (it has %s)", o.pod, n, strings.Join(have, ", "))
		}
	}
	return env.create(ctx, c, o.request(ns, name, names), "containerrecreaterequest.apps.kruise.io", o.createOptions)
}

// request is ContainerRecreateRequest name recreating containers of o.pod in ns.
func (o *crrOptions) request(ns, name string, containers []string) *appsv1alpha1.ContainerRecreateRequest {
	crr := &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: o.pod,
			Strategy: &appsv1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: appsv1alpha1.ContainerRecreateRequestFailurePolicyFail,
				UnreadyGracePeriodSeconds: ptr.To(o.unreadyGrace), MinStartedSeconds: o.minStarted},
			ActiveDeadlineSeconds: ptr.To(o.activeDeadline), TTLSecondsAfterFinished: ptr.To(o.ttlSecondsAfterEnded)},
	}
	if o.terminationGrace >= 0 {
		crr.Spec.Strategy.TerminationGracePeriodSeconds = ptr.To(o.terminationGrace)
	}
	for _, n := range containers {
		crr.Spec.Containers = append(crr.Spec.Containers, appsv1alpha1.ContainerRecreateRequestContainer{Name: n})
	}
	return crr
}

// jobOptions are create job's and create broadcastJob's flags.
type jobOptions struct {
	createOptions
	image string
	from  string
}

// newCreateJobCommand is create job or, with broadcast, create broadcastJob: NAME from --image
// (and the command after --) or from an AdvancedCronJob's template (--from).
func newCreateJobCommand(env *Env, broadcast bool) *cobra.Command {
	o := &jobOptions{}
	use, aliases, what, cronJob := "job", []string(nil), "a Job", " --from=cronjob/NAME takes a batch CronJob's template, as kubectl create job does."
	if broadcast {
		use, aliases, what, cronJob = "broadcastJob", []string{"broadcastjob", "bcj"}, "a BroadcastJob (a pod on every node)", ""
	}
	cmd := &cobra.Command{
		Use:     use + " NAME (--image=IMAGE [-- COMMAND [ARG...]] | --from=acj/NAME)",
		Aliases: aliases,
		Short:   "Create " + what + " running --image, or from an AdvancedCronJob's template (--from=acj/NAME)",
		Long: "Create " + what + " NAME: one container NAME running --image (with the command after --), restartPolicy " +
			"Never; or, with --from=acj/NAME, the job the AdvancedCronJob's template describes, now (its labels, " +
			"annotations and spec, annotated " + InstantiateAnnotation + "=manual and owned by the cron job, which " +
			"deletes it with itself but does not count it among its runs)." + cronJob,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n := cmd.ArgsLenAtDash(); n != 1 && (n >= 0 || len(args) != 1) {
				return fmt.Errorf("exactly one NAME, then -- and the command: got %q", args)
			}
			name, command := args[0], args[1:]
			if (o.image == "") == (o.from == "") {
				return fmt.Errorf("give either --image or --from")
			}
			if o.from != "" && len(command) > 0 {
				return fmt.Errorf("a job --from a cron job runs the template's command: give no command with --from")
			}
			return o.run(cmd.Context(), env, name, command, broadcast)
		},
	}
	cmd.Flags().StringVar(&o.image, "image", "", "the image to run")
	cmd.Flags().StringVar(&o.from, "from", "", "acj/NAME (advancedcronjob/NAME): create the job its template describes")
	o.addFlags(cmd)
	return cmd
}

// run creates job name.
func (o *jobOptions) run(ctx context.Context, env *Env, name string, command []string, broadcast bool) error {
	c, ns, err := env.Client()
	if err != nil {
		return err
	}
	meta := metav1.ObjectMeta{Namespace: ns, Name: name}
	tpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: name, Image: o.image, Command: command}}}}
	var job client.Object = &batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{Template: tpl}}
	resource := "job.batch"
	if broadcast {
		job, resource = &v1beta1.BroadcastJob{ObjectMeta: meta, Spec: v1beta1.BroadcastJobSpec{Template: tpl}}, "broadcastjob.apps.kruise.io"
	}
	if o.from != "" {
		if job, err = env.jobFrom(ctx, c, meta, o.from, broadcast); err != nil {
			return err
		}
	}
	return env.create(ctx, c, job, resource, o.createOptions)
}

// jobFrom is the job (a BroadcastJob with broadcast) the template of the cron job from names
// describes, with meta's name and namespace: an AdvancedCronJob's (whose template must be of that
// kind) or, for a Job, a batch CronJob's (as kubectl create job --from).
func (e *Env) jobFrom(ctx context.Context, c client.Client, meta metav1.ObjectMeta, from string, broadcast bool) (client.Object, error) {
	typ, name, ok := strings.Cut(from, "/")
	mapper := e.restMapper()
	key := client.ObjectKey{Namespace: meta.Namespace, Name: name}
	switch {
	case !ok || name == "":
		return nil, fmt.Errorf("--from %q: name the cron job as acj/NAME", from)
	case advancedCronJobKind.namedBy(mapper, typ):
		acj := &v1beta1.AdvancedCronJob{}
		if err := c.Get(ctx, key, acj); err != nil {
			return nil, err
		}
		return jobFromAdvancedCronJob(acj, broadcast, func(tpl *metav1.ObjectMeta) metav1.ObjectMeta {
			return instantiated(meta, tpl, acj, v1beta1.GroupVersion.WithKind("AdvancedCronJob"))
		})
	case !broadcast && cronJobKind.namedBy(mapper, typ):
		cj := &batchv1.CronJob{}
		if err := c.Get(ctx, key, cj); err != nil {
			return nil, err
		}
		return &batchv1.Job{ObjectMeta: instantiated(meta, &cj.Spec.JobTemplate.ObjectMeta, cj, batchv1.SchemeGroupVersion.WithKind("CronJob")),
			Spec: *cj.Spec.JobTemplate.Spec.DeepCopy()}, nil
	case broadcast:
		return nil, fmt.Errorf("--from %q: a BroadcastJob is created from an AdvancedCronJob (acj/NAME)", from)
	}
	return nil, fmt.Errorf("--from %q: a Job is created from an AdvancedCronJob (acj/NAME) or a CronJob (cronjob/NAME)", from)
}

// instantiated is meta for a job made by hand from a cron job's template tpl, as kubectl makes
// one: tpl's labels and annotations, InstantiateAnnotation, and owner (of kind gvk) as an owner
// that is not its controller, so that the cron job deletes it with itself but does not count it
// among its runs.
func instantiated(meta metav1.ObjectMeta, tpl *metav1.ObjectMeta, owner client.Object, gvk schema.GroupVersionKind) metav1.ObjectMeta {
	meta.Labels = maps.Clone(tpl.Labels)
	meta.Annotations = maps.Clone(tpl.Annotations)
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[InstantiateAnnotation] = "manual"
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	meta.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: owner.GetName(), UID: owner.GetUID()}}
	return meta
}

// jobFromAdvancedCronJob is the job acj's template describes, of the kind asked for (a
// BroadcastJob with broadcast), its metadata made by meta from the template's.
func jobFromAdvancedCronJob(acj *v1beta1.AdvancedCronJob, broadcast bool, meta func(*metav1.ObjectMeta) metav1.ObjectMeta) (client.Object, error) {
	t := acj.Spec.Template
	switch {
	case broadcast && t.BroadcastJobTemplate != nil:
		return &v1beta1.BroadcastJob{ObjectMeta: meta(&t.BroadcastJobTemplate.ObjectMeta), Spec: *t.BroadcastJobTemplate.Spec.DeepCopy()}, nil
	case !broadcast && t.JobTemplate != nil:
		return &batchv1.Job{ObjectMeta: meta(&t.JobTemplate.ObjectMeta), Spec: *t.JobTemplate.Spec.DeepCopy()}, nil
	case broadcast:
		return nil, fmt.Errorf("advancedcronjob %q creates Jobs, not BroadcastJobs: kubectl kruise create job NAME --from=acj/%s", acj.Name, acj.Name)
	case t.BroadcastJobTemplate != nil:
		return nil, fmt.Errorf("advancedcronjob %q creates BroadcastJobs, not Jobs: kubectl kruise create broadcastJob NAME --from=acj/%s", acj.Name, acj.Name)
	}
	return nil, fmt.Errorf("advancedcronjob %q has neither a jobTemplate nor a broadcastJobTemplate", acj.Name)
}
