package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func newSetImageCommand(env *Env) *cobra.Command {
	var o setOptions
	cmd := &cobra.Command{
		Use:   "image (" + workloadUse + " | TYPE --all | TYPE -l SELECTOR | -f FILE | sidecarset/NAME) CONTAINER=IMAGE ...",
		Short: "Set container images: a workload's (in place where its update strategy allows), a SidecarSet's (upgraded in place in its pods)",
		Long: "Set the images of the named containers and init containers (* names them all) of a workload's pod template, " +
			"which its controller rolls out in place where the update strategy allows, or of a SidecarSet's sidecars, which the " +
			"SidecarSet controller upgrades in place in the pods it injected (within its updateStrategy).\n\n" + selectionHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, pairs, err := splitChanges(args, isImageArg, "CONTAINER=IMAGE")
			if err != nil {
				return err
			}
			images, err := parseImages(pairs)
			if err != nil {
				return err
			}
			if kind, name, ok := splitKindName(target); ok && !o.picksMany() && sidecarSetKind.namedBy(env.restMapper(), kind) {
				return env.setSidecarSetImages(cmd.Context(), name, images, o)
			}
			return env.setTemplate(cmd.Context(), target, o, "image updated", func(w workload) error {
				tpl := w.template()
				return setImages(append(containersOf(tpl.Spec.Containers), containersOf(tpl.Spec.InitContainers)...), images, "the pod template")
			})
		},
	}
	o.addFlags(cmd, "image updated")
	return cmd
}

// containerImage is one CONTAINER=IMAGE of set image; container "*" names every container.
type containerImage struct{ container, image string }

func isImageArg(arg string) bool { return strings.Contains(arg, "=") }

// parseImages reads set image's CONTAINER=IMAGE arguments; "*" names every container and then
// comes alone, as in kubectl.
func parseImages(pairs []string) ([]containerImage, error) {
	if len(pairs) == 0 {
		return nil, fmt.Errorf("at least one CONTAINER=IMAGE is required")
	}
	var out []containerImage
	for _, p := range pairs {
		name, image, _ := strings.Cut(p, "=")
		if name == "" || image == "" {
			return nil, fmt.Errorf("%q is not CONTAINER=IMAGE", p)
		}
		if name == "*" && len(pairs) > 1 {
			return nil, fmt.Errorf("*=%s names every container: give no other CONTAINER=IMAGE with it", image)
		}
		out = append(out, containerImage{name, image})
	}
	return out, nil
}

// containersOf points at each container of list.
func containersOf(list []corev1.Container) []*corev1.Container {
	out := make([]*corev1.Container, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	return out
}

// setImages sets the images of containers as images names them; a name none of them has is an
// error naming where it was looked for (in).
func setImages(containers []*corev1.Container, images []containerImage, in string) error {
	for _, ci := range images {
		found := false
		for _, c := range containers {
			if c.Name == ci.container || ci.container == "*" {
				c.Image, found = ci.image, true
			}
		}
		if !found {
			return fmt.Errorf("%s has no container %q", in, ci.container)
		}
	}
	return nil
}

// setSidecarSetImages sets the images of SidecarSet name's containers and init containers as
// images names them and patches the difference as o's --dry-run says.
func (e *Env) setSidecarSetImages(ctx context.Context, name string, images []containerImage, o setOptions) error {
	mode, err := o.mode()
	if err != nil {
		return err
	}
	if o.local {
		return errors.New("--local changes the objects -f or -k read: name the files")
	}
	printer, err := o.output.printer()
	if err != nil {
		return err
	}
	c, _, err := e.Client()
	if err != nil {
		return err
	}
	set := &v1beta1.SidecarSet{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, set); err != nil { // cluster-scoped
		return err
	}
	before := set.DeepCopy()
	var containers []*corev1.Container
	for _, list := range [][]v1beta1.SidecarSetContainer{set.Spec.Containers, set.Spec.InitContainers} {
		for i := range list {
			containers = append(containers, &list[i].Container)
		}
	}
	out, ref := e.Streams.Out, sidecarSetKind.Resource+"/"+name
	if err := setImages(containers, images, "sidecarset "+fmt.Sprintf("%q", name)); err != nil {
		return err
	}
	unchanged := apiequality.Semantic.DeepEqual(before.Spec, set.Spec)
	suffix := ""
	if !unchanged {
		if suffix, err = patchAs(ctx, c, set, before, mode); err != nil {
			return err
		}
	}
	switch {
	case printer != nil:
		return printer.PrintObj(set, out)
	case unchanged:
		fmt.Fprintf(out, "%s unchanged: its images are so already\n", ref)
		return nil
	}
	fmt.Fprintf(out, "%s image updated%s\n", ref, suffix)
	for _, note := range sidecarUpgradeNotes(before, set) {
		fmt.Fprintln(out, note)
	}
	return nil
}

// sidecarUpgradeNotes say how the pods get the new images of updated: the SidecarSet controller
// upgrades its sidecars (containers and native-sidecar init containers) in place in the pods it
// injected; a plain init container is injected only into new pods.
func sidecarUpgradeNotes(old, updated *v1beta1.SidecarSet) []string {
	var upgraded, initOnly []string
	for l, list := range [][]v1beta1.SidecarSetContainer{updated.Spec.Containers, updated.Spec.InitContainers} {
		was := [][]v1beta1.SidecarSetContainer{old.Spec.Containers, old.Spec.InitContainers}[l]
		for i := range list {
			c := &list[i].Container
			switch {
			case c.Image == was[i].Image:
			case l == 0 || (c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways):
				upgraded = append(upgraded, c.Name)
			default:
				initOnly = append(initOnly, c.Name)
			}
		}
	}
	var notes []string
	if len(upgraded) > 0 {
		notes = append(notes, fmt.Sprintf("sidecars %s: upgraded in place in the pods the SidecarSet injected (HotUpgrade ones by a hot "+
			"upgrade), as its updateStrategy allows (partition, maxUnavailable, paused); new pods get the new images", strings.Join(upgraded, ", ")))
	}
	if len(initOnly) > 0 {
		notes = append(notes, fmt.Sprintf("init containers %s: injected only when a pod is created, so pods created from now on get the "+
			"new images; running pods keep theirs", strings.Join(initOnly, ", ")))
	}
	return notes
}
