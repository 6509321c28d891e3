package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// subsetsUse is the argument of the subsets command.
const subsetsUse = "(ud|ws)/NAME"

// A UnitedDeployment's or WorkloadSpread's kind as the subsets command reads it.
var (
	unitedDeploymentNames = []string{"ud", "uniteddeployment", "uniteddeployments", "uniteddeployment.apps.kruise.io", "uniteddeployments.apps.kruise.io"}
	workloadSpreadNames   = []string{"ws", "workloadspread", "workloadspreads", "workloadspread.apps.kruise.io", "workloadspreads.apps.kruise.io"}
)

func newSubsetsCommand(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "subsets " + subsetsUse,
		Short: "Show a UnitedDeployment's or a WorkloadSpread's subsets in one table: replicas, ready, schedulable",
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, name, ok := splitKindName(args)
			if !ok || kind == "" || name == "" {
				return fmt.Errorf("name it as KIND/NAME or KIND NAME, e.g. ud/web or ws/web")
			}
			c, ns, err := env.Client()
			if err != nil {
				return err
			}
			key := client.ObjectKey{Namespace: ns, Name: name}
			switch {
			case slices.Contains(unitedDeploymentNames, strings.ToLower(kind)):
				ud := &appsv1alpha1.UnitedDeployment{}
				if err := c.Get(cmd.Context(), key, ud); err != nil {
					return err
				}
				return writeUnitedDeploymentSubsets(env.Streams.Out, ud)
			case slices.Contains(workloadSpreadNames, strings.ToLower(kind)):
				ws := &appsv1alpha1.WorkloadSpread{}
				if err := c.Get(cmd.Context(), key, ws); err != nil {
					return err
				}
				return writeWorkloadSpreadSubsets(env.Streams.Out, ws)
			}
			return fmt.Errorf("kind %q has no subsets: name a UnitedDeployment (ud/NAME) or a WorkloadSpread (ws/NAME)", kind)
		},
	}
}

// splitKindName reads KIND/NAME or, with two arguments, KIND NAME; ok is false for anything else.
// An empty name is returned as such, for the caller to refuse.
func splitKindName(args []string) (kind, name string, ok bool) {
	switch {
	case len(args) == 1 && strings.Contains(args[0], "/"):
		kind, name, _ = strings.Cut(args[0], "/")
		return kind, name, true
	case len(args) == 2:
		return args[0], args[1], true
	}
	return "", "", false
}

// writeUnitedDeploymentSubsets prints one row per subset of the topology, in its order: the
// replicas allocated, those the workload reports and ready, its partition, its reserved pods and
// whether it is schedulable ("yes" unless its Schedulable condition is False, with the reason).
func writeUnitedDeploymentSubsets(out io.Writer, ud *appsv1alpha1.UnitedDeployment) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBSET\tALLOCATED\tREPLICAS\tREADY\tPARTITION\tRESERVED\tSCHEDULABLE")
	for _, sub := range ud.Spec.Topology.Subsets {
		var st appsv1alpha1.UnitedDeploymentSubsetStatus
		for _, s := range ud.Status.SubsetStatuses {
			if s.Name == sub.Name {
				st = s
			}
		}
		sched := "yes"
		for _, c := range st.Conditions {
			if c.Type == "Schedulable" && c.Status == corev1.ConditionFalse {
				sched = "no: " + c.Message
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\n", sub.Name, ud.Status.SubsetReplicas[sub.Name], st.Replicas, st.ReadyReplicas,
			st.Partition, st.ReservedPods, sched)
	}
	return tw.Flush()
}

// writeWorkloadSpreadSubsets prints one row per subset of the spread, in its order: its
// maxReplicas, the pods it holds, those missing to reach its maximum, the pods being created and
// deleted, and whether it is schedulable.
func writeWorkloadSpreadSubsets(out io.Writer, ws *appsv1alpha1.WorkloadSpread) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBSET\tMAX\tREPLICAS\tMISSING\tCREATING\tDELETING\tSCHEDULABLE")
	for _, sub := range ws.Spec.Subsets {
		var st appsv1alpha1.WorkloadSpreadSubsetStatus
		for _, s := range ws.Status.SubsetStatuses {
			if s.Name == sub.Name {
				st = s
			}
		}
		maxReplicas, missing := "-", "-"
		if sub.MaxReplicas != nil {
			maxReplicas = sub.MaxReplicas.String()
			missing = fmt.Sprint(st.MissingReplicas)
		}
		sched := "yes"
		for _, c := range st.Conditions {
			if c.Type == appsv1alpha1.WorkloadSpreadSubsetSchedulable && c.Status == corev1.ConditionFalse {
				sched = "no: " + c.Message
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%s\n", sub.Name, maxReplicas, st.Replicas, missing, len(st.CreatingPods), len(st.DeletingPods), sched)
	}
	return tw.Flush()
}
