package cli

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
)

// defaultContainerAnnotation names the container kubectl exec picks when none is given.
const defaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// execOptions are exec's flags, named as kruise-tools names them.
type execOptions struct {
	container, sidecar string
	stdin, tty         bool
	// print prints the kubectl exec command that runs the session instead of running it.
	print bool
}

func newExecCommand(env *Env) *cobra.Command {
	o := &execOptions{}
	cmd := &cobra.Command{
		Use:   "exec (POD | TYPE/NAME) [-c CONTAINER] [-S SIDECAR] [-i] [-t] -- COMMAND [ARG...]",
		Short: "Run a command in a pod's container (-S: a SidecarSet sidecar's working container), as kubectl exec does",
		Long: "Run a command in a container and stream its session as kubectl exec does (WebSocket, SPDY when the server " +
			"cannot upgrade to WebSocket): -i passes stdin, -t gives it a TTY (with -i, when stdin is a terminal), and " +
			"kubectl-kruise exits with the command's exit code. --print prints the kubectl exec command instead of running " +
			"it. The pod is POD, pod/NAME, or the first ready pod of a " +
			"workload (clone/NAME, asts/NAME, ads/NAME). -S SIDECAR names a SidecarSet's sidecar: for a HotUpgrade sidecar, " +
			"its working copy (the pod's annotation " + sidecarrules.WorkingHotUpgradeContainerAnnotation + "), else the " +
			"container of that name. Without -c or -S, the container is the pod's default (" + defaultContainerAnnotation +
			") or its first, as in kubectl.",
		RunE: func(cmd *cobra.Command, args []string) error {
			n := cmd.ArgsLenAtDash()
			switch {
			case n < 0 || len(args) == n:
				return fmt.Errorf("give the command after --: kubectl kruise exec POD -S SIDECAR -- COMMAND")
			case n != 1:
				return fmt.Errorf("name one pod (POD or TYPE/NAME) before --, got %q", args[:n])
			}
			pod, err := env.execPod(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			container, note, err := o.pick(pod)
			if err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintln(env.Streams.ErrOut, note)
			}
			if o.print {
				fmt.Fprintln(env.Streams.Out, env.kubectlExec(pod, container, o, args[1:]))
				return nil
			}
			return env.stream(cmd.Context(), execSession{pod: pod, container: container, command: args[1:], stdin: o.stdin, tty: o.tty})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.container, "container", "c", "", "the container (default: the pod's default container, or its first)")
	f.StringVarP(&o.sidecar, "sidecar", "S", "", "a SidecarSet's sidecar: its working copy when it is hot-upgraded")
	f.BoolVarP(&o.stdin, "stdin", "i", false, "pass stdin to the container")
	f.BoolVarP(&o.tty, "tty", "t", false, "stdin is a TTY")
	f.BoolVar(&o.print, "print", false, "print the kubectl exec command that runs the session instead of running it")
	return cmd
}

// execPod is the pod arg names: POD, pod/NAME, or a workload's (TYPE/NAME) first pod, by
// pickPod.
func (e *Env) execPod(ctx context.Context, arg string) (*corev1.Pod, error) {
	typ, name, isTyped := strings.Cut(arg, "/")
	if !isTyped || slices.Contains([]string{"po", "pod", "pods"}, strings.ToLower(typ)) {
		if !isTyped {
			name = arg
		}
		c, ns, err := e.Client()
		if err != nil {
			return nil, err
		}
		pod := &corev1.Pod{}
		return pod, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)
	}
	c, w, err := e.load(ctx, []string{arg})
	if err != nil {
		return nil, err
	}
	own, err := ownPods(ctx, c, w.object(), w.selector())
	if err != nil {
		return nil, err
	}
	var pods []*corev1.Pod
	for _, p := range own {
		if p.DeletionTimestamp == nil {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		return nil, fmt.Errorf("%s has no pods to exec into", ref(w))
	}
	return pickPod(pods), nil
}

// pickPod is the pod exec goes into among a workload's: a ready one before one that is only
// running, before the others; the oldest, then by name, among equals.
func pickPod(pods []*corev1.Pod) *corev1.Pod {
	rank := func(p *corev1.Pod) int {
		switch {
		case inplace.ConditionIs(p, corev1.PodReady, corev1.ConditionTrue):
			return 0
		case p.Status.Phase == corev1.PodRunning:
			return 1
		}
		return 2
	}
	return slices.MinFunc(pods, func(a, b *corev1.Pod) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// pick is the container of pod the command runs in, and a note for the user when it was not
// named outright: -S's working copy of a hot-upgrade sidecar (or the container of that name),
// -c's container, or the pod's default one.
func (o *execOptions) pick(pod *corev1.Pod) (container, note string, err error) {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return "", "", fmt.Errorf("pod %s has completed (phase %s): there is no container to exec into", pod.Name, pod.Status.Phase)
	}
	var names []string
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range list {
			names = append(names, c.Name)
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	switch {
	case o.sidecar != "":
		if working, ok := sidecarrules.WorkingContainers(pod)[o.sidecar]; ok {
			return working, fmt.Sprintf("sidecar %s is hot-upgraded: its working container is %s", o.sidecar, working), nil
		}
		if !slices.Contains(names, o.sidecar) {
			return "", "", fmt.Errorf("pod %s has no sidecar %q (its containers: %s)", pod.Name, o.sidecar, strings.Join(names, ", "))
		}
		return o.sidecar, "", nil
	case o.container != "":
		if !slices.Contains(names, o.container) {
			return "", "", fmt.Errorf("pod %s has no container %q (its containers: %s)", pod.Name, o.container, strings.Join(names, ", "))
		}
		return o.container, "", nil
	}
	if d := pod.Annotations[defaultContainerAnnotation]; d != "" && slices.Contains(names, d) {
		return d, "", nil
	}
	if len(pod.Spec.Containers) == 0 {
		return "", "", fmt.Errorf("pod %s has no containers", pod.Name)
	}
	first := pod.Spec.Containers[0].Name
	if len(pod.Spec.Containers) > 1 {
		note = fmt.Sprintf("Defaulted container %q out of: %s", first, strings.Join(names, ", "))
	}
	return first, note, nil
}

// kubectlExec is the kubectl exec command that runs command in pod's container, with the
// kubeconfig and context kubectl-kruise was given, quoted for a POSIX shell.
func (e *Env) kubectlExec(pod *corev1.Pod, container string, o *execOptions, command []string) string {
	args := []string{"kubectl", "exec"}
	for _, f := range []struct {
		name  string
		value *string
	}{{"--kubeconfig", e.Flags.KubeConfig}, {"--context", e.Flags.Context}} {
		if f.value != nil && *f.value != "" {
			args = append(args, f.name, *f.value)
		}
	}
	args = append(args, "-n", pod.Namespace, pod.Name, "-c", container)
	if o.stdin {
		args = append(args, "-i")
	}
	if o.tty {
		args = append(args, "-t")
	}
	args = append(append(args, "--"), command...)
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " ")
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote is s as a POSIX shell word.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
