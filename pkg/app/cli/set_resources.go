package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func newSetResourcesCommand(env *Env) *cobra.Command {
	var o setOptions
	var containers, limits, requests string
	cmd := &cobra.Command{
		Use:   "resources (" + workloadUse + " | TYPE --all | TYPE -l SELECTOR | -f FILE) [-c CONTAINERS] [--limits=cpu=200m,memory=512Mi] [--requests=cpu=100m,memory=256Mi]",
		Short: "Set the resource limits and requests of a workload's containers (resized in place where the cluster allows)",
		Long: "Set the resource limits and requests that --limits and --requests name (RESOURCE=QUANTITY, comma separated; other " +
			"resources keep theirs, 0 sets zero) of the containers of a workload's pod template that -c matches (* for any run " +
			"of characters; all of them by default). A change of CPU and memory only is applied in place where the update " +
			"strategy updates in place, the API server serves pods/resize and Kruise's InPlaceWorkloadVerticalScaling gate is " +
			"on; otherwise the controller recreates the pods by its update strategy.\n\n" + selectionHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			if limits == "" && requests == "" {
				return fmt.Errorf("name the change: --limits and/or --requests (e.g. --limits=cpu=200m,memory=512Mi)")
			}
			lim, err := parseResourceList("--limits", limits)
			if err != nil {
				return err
			}
			req, err := parseResourceList("--requests", requests)
			if err != nil {
				return err
			}
			return env.setTemplate(cmd.Context(), args, o, "resource requirements updated", func(w workload) error {
				return setResources(w.template().Spec.Containers, containers, lim, req)
			})
		},
	}
	cmd.Flags().StringVarP(&containers, "containers", "c", "*", "the containers to change, by name; * matches any run of characters")
	cmd.Flags().StringVar(&limits, "limits", "", "the limits to set, RESOURCE=QUANTITY comma separated, e.g. cpu=200m,memory=512Mi")
	cmd.Flags().StringVar(&requests, "requests", "", "the requests to set, RESOURCE=QUANTITY comma separated, e.g. cpu=100m,memory=256Mi")
	o.addFlags(cmd, "resource requirements updated")
	return cmd
}

// parseResourceList reads flag's value: RESOURCE=QUANTITY pairs, comma separated.
func parseResourceList(flag, spec string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for _, pair := range strings.Split(spec, ",") {
		if pair == "" {
			continue
		}
		name, value, ok := strings.Cut(pair, "=")
		if !ok || name == "" || strings.Contains(value, "=") {
			return nil, fmt.Errorf("%s: %q is not RESOURCE=QUANTITY", flag, pair)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, fmt.Errorf("%s: %s=%s: %w", flag, name, value, err)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}

// setResources sets the limits and requests given of the containers pattern matches, leaving
// their other resources as they are.
func setResources(containers []corev1.Container, pattern string, limits, requests corev1.ResourceList) error {
	selected, err := selectContainers(containers, pattern)
	if err != nil {
		return err
	}
	for _, c := range selected {
		for _, kv := range []struct {
			list *corev1.ResourceList
			set  corev1.ResourceList
		}{{&c.Resources.Limits, limits}, {&c.Resources.Requests, requests}} {
			if len(kv.set) > 0 && *kv.list == nil {
				*kv.list = corev1.ResourceList{}
			}
			for name, q := range kv.set {
				(*kv.list)[name] = q
			}
		}
	}
	return nil
}
