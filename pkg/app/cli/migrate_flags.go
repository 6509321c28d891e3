package cli

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// migrateFlags are migrate's flags: Kruise's own (--from deployment/NAME, --to cloneset/NAME,
// --step, --step-timeout) and those of OpenKruise's kubectl-kruise (a DST_KIND argument, --from
// KIND with --src-name, --dst-name, --create, --copy, --replicas, --max-surge, --timeout-seconds),
// each mapped to Kruise's behaviour or refused naming Kruise's equivalent.
type migrateFlags struct {
	from, to, step   string
	stepTimeout      time.Duration
	srcName, dstName string
	create, copy     bool
	replicas         int32
	maxSurge         int32
	timeoutSeconds   int32
}

// migratePlan is what migrate's flags ask for.
type migratePlan struct {
	deployment, cloneSet string
	// step is --step: a count or a percentage of the pods to move.
	step string
	// createOnly makes the CloneSet and moves nothing (OpenKruise's --create).
	createOnly bool
	// replicas is the pods to move (OpenKruise's --replicas): -1 for all.
	replicas int32
	// timeout bounds the whole migration (OpenKruise's --timeout-seconds): 0 for no bound.
	timeout time.Duration
}

// The names of a Deployment, and of the kinds OpenKruise's kubectl-kruise migrates that Kruise
// does not, for migrate's flags.
var (
	deploymentNames    = []string{"deployment", "deployments", "deploy", "deployment.apps", "deployments.apps"}
	notMigratedToKinds = []string{"advanceddaemonset", "advanceddaemonsets", "ads", "daemon", "daemonset", "daemonsets",
		"advancedstatefulset", "advancedstatefulsets", "asts", "statefulset", "statefulsets", "sts"}
)

func (f *migrateFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.from, "from", "", "the Deployment to migrate: deployment/NAME (or, as OpenKruise's kubectl-kruise takes it, the kind Deployment, with --src-name)")
	fs.StringVar(&f.to, "to", "", "the CloneSet to create: cloneset/NAME (or --dst-name NAME)")
	fs.StringVar(&f.step, "step", "25%", "pods moved per step: a count or a percentage of the Deployment's replicas (rounded up)")
	fs.DurationVar(&f.stepTimeout, "step-timeout", 5*time.Minute, "give up when a step's pods are not available after this long (0: never)")
	fs.StringVar(&f.srcName, "src-name", "", "OpenKruise's form: the Deployment's name, with --from Deployment")
	fs.StringVar(&f.dstName, "dst-name", "", "OpenKruise's form: the CloneSet's name (the same as --to cloneset/NAME)")
	fs.BoolVar(&f.create, "create", false, "only create the CloneSet, with 0 replicas and the Deployment untouched; run migrate again without it to move the pods")
	fs.BoolVar(&f.copy, "copy", false, "refused: OpenKruise's --create --copy starts the CloneSet with all the Deployment's replicas beside it; use --step 100%")
	fs.Int32Var(&f.replicas, "replicas", -1, "the pods the CloneSet runs when migrate stops (a partial move; the Deployment keeps the rest): -1 moves them all")
	fs.Int32Var(&f.maxSurge, "max-surge", 1, "OpenKruise's name for --step, as a count (its default, 1, applies in OpenKruise's form)")
	fs.Int32Var(&f.timeoutSeconds, "timeout-seconds", -1, "give up when the whole migration takes longer than this many seconds (-1: never)")
}

// plan reads the flags, changed reporting which were given, and args (OpenKruise's DST_KIND);
// resolve reads --to.
func (f *migrateFlags) plan(args []string, changed func(string) bool, resolve func([]string) (*Kind, string, error)) (*migratePlan, error) {
	openKruise := len(args) == 1 || f.srcName != "" || f.dstName != ""
	if len(args) == 1 {
		if err := checkMigrateKind(args[0]); err != nil {
			return nil, err
		}
	}
	p := &migratePlan{createOnly: f.create, replicas: f.replicas}
	var err error
	if p.deployment, err = f.source(); err != nil {
		return nil, err
	}
	if p.cloneSet, err = f.destination(resolve); err != nil {
		return nil, err
	}
	if p.step, err = f.stepFlag(changed, openKruise); err != nil {
		return nil, err
	}
	switch {
	case f.copy && !f.create:
		return nil, errors.New("--copy goes with --create (it sets the replicas the CloneSet is created with)")
	case f.copy:
		return nil, errors.New("--copy would create the CloneSet with all the Deployment's replicas beside the Deployment's own pods " +
			"(twice the pods), which Kruise does not do: run migrate without --create and --copy, and with --step 100% it raises the " +
			"CloneSet to every replica in one step, then lowers the Deployment once they are available")
	case f.replicas == 0 || f.replicas < -1:
		return nil, fmt.Errorf("--replicas must be positive, or -1 for all the Deployment's pods; got %d", f.replicas)
	}
	if f.timeoutSeconds > 0 {
		p.timeout = time.Duration(f.timeoutSeconds) * time.Second
	}
	return p, nil
}

// checkMigrateKind checks OpenKruise's DST_KIND argument: Kruise migrates to CloneSets only.
func checkMigrateKind(kind string) error {
	switch {
	case kindNamed(kind) == CloneSetKind:
		return nil
	case slices.Contains(notMigratedToKinds, strings.ToLower(kind)):
		return fmt.Errorf("migrate %s: Kruise moves Deployments to CloneSets only (OpenKruise's kubectl-kruise also moves DaemonSets "+
			"to Advanced DaemonSets, which Kruise does not do yet)", kind)
	}
	return fmt.Errorf("migrate %s: the kind to migrate to is CloneSet (migrate CloneSet --from Deployment ...)", kind)
}

// source is the Deployment's name: --from deployment/NAME, or --from Deployment and --src-name.
func (f *migrateFlags) source() (string, error) {
	if strings.Contains(f.from, "/") {
		name, err := parseKind(f.from, "--from", deploymentNames...)
		if err == nil && f.srcName != "" && f.srcName != name {
			err = fmt.Errorf("--from %s and --src-name %s name different Deployments", f.from, f.srcName)
		}
		return name, err
	}
	switch kind := strings.ToLower(f.from); {
	case kind == "":
		return "", errors.New("--from names the Deployment: --from deployment/NAME (or --from Deployment --src-name NAME)")
	case slices.Contains([]string{"daemonset", "daemonsets", "ds"}, kind):
		return "", fmt.Errorf("--from %s: Kruise migrates Deployments only (OpenKruise's kubectl-kruise also migrates DaemonSets to "+
			"Advanced DaemonSets, which Kruise does not do yet)", f.from)
	case !slices.Contains(deploymentNames, kind):
		return "", fmt.Errorf("--from %s: migrate moves Deployments to CloneSets: --from deployment/NAME", f.from)
	case f.srcName == "":
		return "", fmt.Errorf("--from %s needs --src-name NAME (or give --from deployment/NAME)", f.from)
	}
	return f.srcName, nil
}

// destination is the CloneSet's name: --to cloneset/NAME or --dst-name NAME.
func (f *migrateFlags) destination(resolve func([]string) (*Kind, string, error)) (string, error) {
	if f.to == "" {
		if f.dstName == "" {
			return "", errors.New("name the CloneSet to create: --to cloneset/NAME (or --dst-name NAME)")
		}
		return f.dstName, nil
	}
	k, name, err := resolve([]string{f.to})
	if err == nil && k != CloneSetKind {
		err = fmt.Errorf("migrate moves Deployments to CloneSets, not to %ss", k.Noun)
	}
	if err != nil {
		return "", fmt.Errorf("--to: %w", err)
	}
	if f.dstName != "" && f.dstName != name {
		return "", fmt.Errorf("--to %s and --dst-name %s name different CloneSets", f.to, f.dstName)
	}
	return name, nil
}

// stepFlag is the pods moved per step: --step, or --max-surge (OpenKruise's name for it, a
// count); in OpenKruise's form, one pod a step unless either is given, as there.
func (f *migrateFlags) stepFlag(changed func(string) bool, openKruise bool) (string, error) {
	switch {
	case !changed("max-surge") && openKruise && !changed("step"):
		return "1", nil
	case !changed("max-surge"):
		return f.step, nil
	case f.maxSurge < 1:
		return "", fmt.Errorf("--max-surge must be at least 1, got %d", f.maxSurge)
	case changed("step") && f.step != strconv.Itoa(int(f.maxSurge)):
		return "", fmt.Errorf("--max-surge (OpenKruise's name for --step) %d and --step %s disagree: give one of them", f.maxSurge, f.step)
	}
	return strconv.Itoa(int(f.maxSurge)), nil
}
