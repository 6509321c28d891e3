package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

// checkRevision fails when the workload's update revision is not revision number want (the
// number rollout history lists), as kubectl rollout status --revision fails; it passes while the
// update revision is not recorded yet (the controller has not written it), to be asked again.
func checkRevision(ctx context.Context, c client.Client, w workload, want int64) error {
	_, update := w.revisions()
	if update == "" {
		return nil
	}
	revs, err := history(ctx, c, w.object())
	if err != nil {
		return err
	}
	i := slices.IndexFunc(revs, func(r *appsv1.ControllerRevision) bool { return r.Name == update })
	if i < 0 {
		return nil
	}
	if got := revs[i].Revision; got != want {
		return fmt.Errorf("desired revision (%d) is different from the running revision (%d) of %s", want, got, ref(w))
	}
	return nil
}

// atRevision reports whether pod runs revision (a revision's name): its controller-revision-hash
// label names it, or, as an Advanced DaemonSet's pods do, is its hash.
func atRevision(pod *corev1.Pod, owner client.Object, revision string) bool {
	l := pod.Labels[appsv1.ControllerRevisionHashLabelKey]
	return l != "" && (l == revision || owner.GetName()+"-"+l == revision)
}

// podProgress is one line for each of the workload's pods not yet done with the rollout: those
// not at the update revision, then those at it that are not ready, by name.
func podProgress(ctx context.Context, c client.Client, w workload) ([]string, error) {
	_, update := w.revisions()
	pods, err := ownPods(ctx, c, w.object(), w.selector())
	if err != nil {
		return nil, err
	}
	var old, unready []string
	for _, p := range pods {
		switch {
		case p.DeletionTimestamp != nil:
			old = append(old, fmt.Sprintf("  pod %s: terminating", p.Name))
		case update != "" && !atRevision(p, w.object(), update):
			old = append(old, fmt.Sprintf("  pod %s: at revision %s, not yet %s", p.Name, p.Labels[appsv1.ControllerRevisionHashLabelKey], update))
		case !inplace.ConditionIs(p, corev1.PodReady, corev1.ConditionTrue):
			unready = append(unready, fmt.Sprintf("  pod %s: updated, not ready (%s)", p.Name, p.Status.Phase))
		}
	}
	slices.Sort(old)
	slices.Sort(unready)
	return append(old, unready...), nil
}

// statusOptions are rollout status's flags.
type statusOptions struct {
	watch, detail bool
	revision      int64
}

// once reads the workload's rollout once: the line to print (with per-pod lines under -d), and
// whether it is done.
func (o *statusOptions) once(ctx context.Context, c client.Client, w workload) (msg string, done bool, err error) {
	if o.revision > 0 {
		if err := checkRevision(ctx, c, w, o.revision); err != nil {
			return "", false, err
		}
	}
	msg, done, err = w.status()
	if o.detail && !done && err == nil {
		lines, perr := podProgress(ctx, c, w)
		if perr != nil {
			return "", false, perr
		}
		if len(lines) > 0 {
			msg += "\n" + strings.Join(lines, "\n")
		}
	}
	return msg, done, err
}
