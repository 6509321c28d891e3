package cli

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// supportedKinds names the kinds kubectl-kruise drives, for error messages.
const supportedKinds = "CloneSets (clone/NAME), Advanced StatefulSets (asts/NAME) and Advanced DaemonSets (ads/NAME)"

// nativeNames are the names kubectl gives the native apps/v1 workloads that have a Kruise
// counterpart, for when the API server's discovery cannot be asked.
var nativeNames = map[string]string{
	"sts": "StatefulSet", "statefulset": "StatefulSet", "statefulsets": "StatefulSet",
	"ds": "DaemonSet", "daemonset": "DaemonSet", "daemonsets": "DaemonSet",
}

// ParseWorkload reads KIND/NAME or, with two arguments, KIND NAME, where KIND names a CloneSet
// (clone, cloneset, cloneset.apps.kruise.io, ...), an Advanced StatefulSet (asts,
// advancedstatefulset, statefulset.apps.kruise.io, ...) or an Advanced DaemonSet (ads, daemon,
// daemonset.apps.kruise.io, ...), by the names Kruise's CRDs declare. The names kubectl gives
// the native apps/v1 StatefulSet and DaemonSet (sts, ds, ...) are refused naming the Kruise form;
// other kinds are refused with what is supported. The commands resolve KIND from the API server's
// discovery instead, as kubectl does (Env.parseWorkload).
func ParseWorkload(args []string) (*Kind, string, error) { return parseWorkload(nil, args) }

// parseWorkload is ParseWorkload, resolving KIND through mapper when there is one.
func parseWorkload(mapper meta.RESTMapper, args []string) (*Kind, string, error) {
	kind, name, ok := splitKindName(args)
	if !ok {
		return nil, "", fmt.Errorf("name a workload as KIND/NAME or KIND NAME, e.g. clone/web or asts/web")
	}
	k, err := resolveKind(mapper, kind)
	if err != nil {
		return nil, "", err
	}
	if name == "" {
		return nil, "", fmt.Errorf("the workload's name is empty")
	}
	return k, name, nil
}

// resolveKind is the Kind that kind names. With a mapper (the API server's discovery, short names
// expanded, as kubectl resolves a TYPE), kind is what kubectl takes it for: sts and ds are then the
// native kinds, as in kubectl. Names discovery does not know fall back to Kruise's own aliases
// (advancedstatefulset, advanceddaemonset); without a mapper, or when discovery fails, kind is
// read by the names of Kruise's CRDs.
func resolveKind(mapper meta.RESTMapper, kind string) (*Kind, error) {
	if mapper != nil {
		gvk, err := discoverKind(mapper, kind)
		switch {
		case err == nil:
			return workloadKind(kind, gvk)
		case meta.IsNoMatchError(err) && kindNamed(kind) == nil:
			return nil, fmt.Errorf("the server has no resource type %q (is Kruise installed?): kubectl-kruise drives %s", kind, supportedKinds)
		}
	}
	if k := kindNamed(kind); k != nil {
		return k, nil
	}
	if native, ok := nativeNames[strings.ToLower(kind)]; ok {
		return nil, nativeKind(kind, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: native})
	}
	return nil, fmt.Errorf("kind %q is not supported yet: kubectl-kruise drives %s", kind, supportedKinds)
}

// discoverKind resolves kind as kubectl resolves a TYPE: a resource's plural, singular or short
// name, optionally qualified by its group (statefulsets.apps.kruise.io) or version and group
// (statefulset.v1beta1.apps.kruise.io); a Kind (CloneSet) is read as its singular name.
func discoverKind(mapper meta.RESTMapper, kind string) (schema.GroupVersionKind, error) {
	full, partial := schema.ParseResourceArg(strings.ToLower(kind))
	if full != nil {
		if gvk, err := mapper.KindFor(*full); err == nil {
			return gvk, nil
		}
	}
	return mapper.KindFor(partial.WithVersion(""))
}

// workloadKind is the Kind of gvk, which kind was resolved to, or why kubectl-kruise does not
// drive it.
func workloadKind(kind string, gvk schema.GroupVersionKind) (*Kind, error) {
	for _, k := range kinds {
		if k.gk == gvk.GroupKind() {
			return k, nil
		}
	}
	if slices.Contains([]string{"", "apps", "extensions", "batch"}, gvk.Group) {
		return nil, nativeKind(kind, gvk)
	}
	return nil, fmt.Errorf("kind %q is %s (%s), which kubectl-kruise does not drive: it drives %s", kind, gvk.Kind, gvk.GroupVersion(), supportedKinds)
}

// nativeKind is the error for a kind that names a native Kubernetes workload, with the Kruise
// form to use instead.
func nativeKind(kind string, gvk schema.GroupVersionKind) error {
	instead := "kubectl-kruise drives " + supportedKinds
	switch gvk.Kind {
	case "StatefulSet":
		instead = "name an Advanced StatefulSet asts/NAME or statefulset.apps.kruise.io/NAME"
	case "DaemonSet":
		instead = "name an Advanced DaemonSet ads/NAME or daemonset.apps.kruise.io/NAME"
	case "Deployment":
		instead = "kubectl kruise migrate moves a Deployment's pods to a CloneSet (clone/NAME)"
	}
	return fmt.Errorf("kind %q is the native %s %s, as kubectl resolves it, which kubectl-kruise does not drive (kubectl rollout does): %s",
		kind, gvk.GroupVersion(), gvk.Kind, instead)
}

func kindNamed(name string) *Kind {
	for _, k := range kinds {
		if slices.Contains(k.names, strings.ToLower(name)) {
			return k
		}
	}
	return nil
}

// Kinds some commands take besides the workloads: a SidecarSet (set image), the sources of
// create job and create broadcastjob --from, and the kinds set selector names when it refuses.
var (
	sidecarSetKind = &Kind{Noun: "sidecarset", Resource: "sidecarset.apps.kruise.io", gk: schema.GroupKind{Group: kruiseGroup, Kind: "SidecarSet"},
		names: []string{"sidecarset", "sidecarsets", "sidecarset.apps.kruise.io", "sidecarsets.apps.kruise.io"}}
	advancedCronJobKind = &Kind{Noun: "advancedcronjob", Resource: "advancedcronjob.apps.kruise.io",
		gk:    schema.GroupKind{Group: kruiseGroup, Kind: "AdvancedCronJob"},
		names: []string{"acj", "advancedcronjob", "advancedcronjobs", "advancedcronjob.apps.kruise.io", "advancedcronjobs.apps.kruise.io"}}
	cronJobKind = &Kind{Noun: "cronjob", Resource: "cronjob.batch", gk: schema.GroupKind{Group: "batch", Kind: "CronJob"},
		names: []string{"cj", "cronjob", "cronjobs", "cronjob.batch", "cronjobs.batch"}}
	serviceKind = &Kind{Noun: "service", Resource: "service", gk: schema.GroupKind{Kind: "Service"},
		names: []string{"svc", "service", "services"}}
)

// namedBy reports whether typ names k: as the API server's discovery resolves typ when mapper
// knows it, else by the names k's CRD (or kubectl) gives it.
func (k *Kind) namedBy(mapper meta.RESTMapper, typ string) bool {
	if mapper != nil {
		if gvk, err := discoverKind(mapper, typ); err == nil {
			return gvk.GroupKind() == k.gk
		}
	}
	return slices.Contains(k.names, strings.ToLower(typ))
}
